#include "core/model/adapter_info.h"

#include <regex>

namespace ws {

int64_t AdapterInfo::rankFor(const std::string& module) const {
  for (const auto& [pattern, r] : rankPattern) {
    try {
      // PEFT: re.match(rf"(.*\.)?({key})$", name)
      if (std::regex_match(module, std::regex("(.*\\.)?(" + pattern + ")"))) return r;
    } catch (const std::regex_error&) {
      if (module == pattern || module.ends_with("." + pattern)) return r;  // not a regex PEFT could use either: by name
    }
  }
  return rank;
}

}  // namespace ws
