#include "core/util/glob.h"

#include <fnmatch.h>

namespace ws {

bool globMatch(const std::string& pattern, const std::string& name) { return ::fnmatch(pattern.c_str(), name.c_str(), 0) == 0; }

}  // namespace ws
