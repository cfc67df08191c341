// How the engine rules name many tensors in one finding: the first three, "..." after them.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

namespace ws::val::engines {

inline std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < std::min<size_t>(3, items.size()); ++i) out += (i ? ", " : "") + items[i];
  return out + (items.size() > 3 ? " ..." : "");
}

}  // namespace ws::val::engines
