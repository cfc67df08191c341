// diff reports: a terminal table, JSON (schema weightscope.diff/1) and one self-contained HTML
// file, with per-layer and per-expert summaries beside the per-tensor rows.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/diff/diff.h"

namespace ws {

nlohmann::json diffJson(const diff::DiffReport& r);
std::string diffText(const diff::DiffReport& r, bool allRows);
std::string diffHtml(const diff::DiffReport& r);

}  // namespace ws
