// Shell-glob matching of tensor names, shared by every option that takes a GLOB (--filter,
// --defer, --tensors, --free): fnmatch semantics, and '*' also crosses dots.
#pragma once

#include <string>

namespace ws {

bool globMatch(const std::string& pattern, const std::string& name);

}  // namespace ws
