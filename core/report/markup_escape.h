// Text made safe for HTML and XML reports: the five markup characters as entities, control
// characters (which XML 1.0 forbids) as spaces. Tensor names come from untrusted headers.
#pragma once

#include <string>

namespace ws {

std::string markupEscape(const std::string& s);

}  // namespace ws
