#include "core/report/npy_writer.h"

#include "core/io/atomic_file.h"
#include "core/numerics/float_formats.h"

namespace ws {

namespace {

std::string npyHeader(const char* descr, const std::vector<uint64_t>& shape) {
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? ", " : "");
  if (shape.size() == 1) dict.pop_back();
  dict += "), }";
  // magic(6) + version(2) + length(2) + dict, padded with spaces and a newline to 64 bytes.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h += char(1);
  h += char(0);
  uint16_t len = uint16_t(dict.size());
  h += char(len & 0xFF);
  h += char(len >> 8);
  return h + dict;
}

}  // namespace

struct NpyStream::Impl {
  AtomicFile file;
  explicit Impl(const std::string& p) : file(p) {}
};

NpyStream::NpyStream(const std::string& path, const std::vector<uint64_t>& shape, bool bf16) : impl_(new Impl(path)), bf16_(bf16) {
  impl_->file.write(npyHeader(bf16 ? "<u2" : "<f4", shape));
}

NpyStream::~NpyStream() { delete impl_; }

void NpyStream::append(const float* data, uint64_t n) {
  if (!bf16_) {
    impl_->file.write(data, n * sizeof(float));
    return;
  }
  std::vector<uint16_t> bits(n);
  for (uint64_t i = 0; i < n; ++i) bits[i] = num::toBf16Rne(data[i]);
  impl_->file.write(bits.data(), n * 2);
}

void NpyStream::commit() { impl_->file.commit(); }

void writeNpyF32(const std::string& path, const std::vector<uint64_t>& shape, const float* data, uint64_t n) {
  NpyStream s(path, shape, false);
  s.append(data, n);
  s.commit();
}

void writeNpyBf16(const std::string& path, const std::vector<uint64_t>& shape, const float* data, uint64_t n) {
  NpyStream s(path, shape, true);
  s.append(data, n);
  s.commit();
}

}  // namespace ws
