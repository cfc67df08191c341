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

void writeNpyF32(const std::string& path, const std::vector<uint64_t>& shape, const float* data, uint64_t n) {
  AtomicFile f(path);
  f.write(npyHeader("<f4", shape));
  f.write(data, n * sizeof(float));
  f.commit();
}

void writeNpyBf16(const std::string& path, const std::vector<uint64_t>& shape, const float* data, uint64_t n) {
  std::vector<uint16_t> bits(n);
  for (uint64_t i = 0; i < n; ++i) bits[i] = num::toBf16Rne(data[i]);
  AtomicFile f(path);
  f.write(npyHeader("<u2", shape));
  f.write(bits.data(), n * 2);
  f.commit();
}

}  // namespace ws
