// NumPy .npy (format 1.0) output: float32 little-endian, or bfloat16 as its raw uint16 bits
// ('<u2'; view with ml_dtypes.bfloat16), C order, PyTorch shape order. Written atomically.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ws {

// Streams a .npy: the header first, then rows as they are produced; commit() renames into place.
class NpyStream {
 public:
  NpyStream(const std::string& path, const std::vector<uint64_t>& shape, bool bf16);
  ~NpyStream();
  void append(const float* data, uint64_t n);
  void commit();

 private:
  struct Impl;
  Impl* impl_;
  bool bf16_;
};

void writeNpyF32(const std::string& path, const std::vector<uint64_t>& shape, const float* data, uint64_t n);
void writeNpyBf16(const std::string& path, const std::vector<uint64_t>& shape, const float* data, uint64_t n);

}  // namespace ws
