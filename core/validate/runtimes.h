// The runtimes whose loaders validate knows the refusals of (validate --runtime, docs/rules.md):
// one row each. A rule names its runtime in RuleInfo::runtime.
#pragma once

#include <string_view>
#include <vector>

namespace ws::val {

struct RuntimeInfo {
  std::string_view name;   // what --runtime takes
  std::string_view title;  // what findings call it
  std::string_view source; // whose loader the rules follow
  std::string_view version; // the release whose code the rules were read from ("" where the loader is ours or unversioned)
};

const std::vector<RuntimeInfo>& runtimes();
const RuntimeInfo* findRuntime(std::string_view name);  // null when unknown

}  // namespace ws::val
