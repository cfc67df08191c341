// `inspect` output: the versioned JSON document (schema weightscope.inspect/1, documented in
// docs/inspect-schema.md) and the human summary + tensor tree.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/model/checkpoint.h"

namespace ws {

struct InspectOptions {
  std::string filter;  // shell glob over tensor names; empty = all
  bool flat = false;   // text: one line per tensor instead of the grouped tree
};

nlohmann::json inspectJson(const Checkpoint& c, const InspectOptions& opt);
std::string inspectText(const Checkpoint& c, const InspectOptions& opt);

// Glob match used by --filter (fnmatch semantics, '*' also crosses dots).
bool globMatch(const std::string& pattern, const std::string& name);

}  // namespace ws
