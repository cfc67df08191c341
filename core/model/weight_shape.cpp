#include "core/model/weight_shape.h"

#include <cstring>

#include "core/util/error.h"

namespace ws {

std::optional<std::vector<int64_t>> readWeightShape(const Checkpoint& c, const TensorRecord& t) {
  const bool i64 = t.dtype->name == "I64", i32 = t.dtype->name == "I32";
  const uint64_t n = t.elements();
  if ((!i64 && !i32) || n == 0 || n > 8 || t.file >= c.files.size()) return std::nullopt;
  const auto& f = c.files[t.file];
  if (!f.map || t.bytes != n * (i64 ? 8 : 4) || t.offset > f.map->size() || t.bytes > f.map->size() - t.offset) return std::nullopt;
  uint8_t buf[64];
  try {
    f.map->readAt(t.offset, buf, t.bytes);
  } catch (const CoreError&) {
    return std::nullopt;
  }
  std::vector<int64_t> v(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (i64) {
      std::memcpy(&v[i], buf + 8 * i, 8);
    } else {
      int32_t x;
      std::memcpy(&x, buf + 4 * i, 4);
      v[i] = x;
    }
  }
  return v;
}

bool weightShapeFits(const std::vector<int64_t>& dims, const std::vector<uint64_t>& packedShape, uint64_t perWord) {
  if (dims.empty() || dims.size() != packedShape.size() || perWord == 0) return false;
  for (int64_t d : dims)
    if (d <= 0) return false;
  for (size_t k = 0; k + 1 < dims.size(); ++k)
    if (uint64_t(dims[k]) != packedShape[k]) return false;
  const uint64_t last = uint64_t(dims.back()), packed = packedShape.back();
  return packed > 0 && last <= packed * perWord && last > (packed - 1) * perWord;
}

}  // namespace ws
