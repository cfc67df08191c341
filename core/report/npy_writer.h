// NumPy .npy (format 1.0) output: float32 little-endian, or bfloat16 as its raw uint16 bits
// ('<u2'; view with ml_dtypes.bfloat16), C order, PyTorch shape order. Written atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ws {

void writeNpyF32(const std::string& path, const std::vector<uint64_t>& shape, const float* data, uint64_t n);
void writeNpyBf16(const std::string& path, const std::vector<uint64_t>& shape, const float* data, uint64_t n);

}  // namespace ws
