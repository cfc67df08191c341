// UTF-8 validation for headers read from untrusted files.
#pragma once

#include <cstdint>
#include <string_view>

namespace ws {

// Offset of the first byte that is not part of a valid UTF-8 sequence, or s.size() when valid.
uint64_t firstInvalidUtf8(std::string_view s);
inline bool isValidUtf8(std::string_view s) { return firstInvalidUtf8(s) == s.size(); }

}  // namespace ws
