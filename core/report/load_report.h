// The residency report of a full load: schema weightscope.load/1 (docs/load.md).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "core/load/loader.h"

namespace ws {

nlohmann::json loadJson(const Checkpoint& c, const load::LoadResult& r);
std::string loadText(const Checkpoint& c, const load::LoadResult& r);

}  // namespace ws
