// Human-readable byte counts ("1.50 GiB") for terminal and GUI text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ws {

std::string formatBytes(uint64_t bytes);
std::string formatCount(uint64_t n);  // 1234567 -> "1,234,567"
std::string formatShape(const std::vector<uint64_t>& shape);

}  // namespace ws
