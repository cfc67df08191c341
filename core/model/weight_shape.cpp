#include "core/model/weight_shape.h"

#include <cstring>

#include "core/util/error.h"
#include "core/util/parallel.h"

namespace ws {

namespace {

std::optional<std::vector<int64_t>> readFromFile(const Checkpoint& c, const TensorRecord& t) {
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

}  // namespace

std::optional<std::vector<int64_t>> readWeightShape(const Checkpoint& c, const TensorRecord& t) {
  if (!c.weightShapes.empty() && &t >= c.tensors.data() && &t < c.tensors.data() + c.tensors.size()) {
    auto it = c.weightShapes.find(uint32_t(&t - c.tensors.data()));
    if (it != c.weightShapes.end()) return it->second;
  }
  return readFromFile(c, t);
}

void cacheWeightShapes(Checkpoint& c) {
  std::vector<uint32_t> which;
  for (uint32_t i = 0; i < c.tensors.size(); ++i)
    if (c.tensors[i].component == Component::Shape) which.push_back(i);
  std::vector<std::optional<std::vector<int64_t>>> values(which.size());
  parallelChunks(which.size(), 1024, [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) values[k] = readFromFile(c, c.tensors[which[k]]);
  });
  c.weightShapes.clear();
  c.weightShapes.reserve(which.size());
  for (size_t k = 0; k < which.size(); ++k)
    if (values[k]) c.weightShapes.emplace(which[k], std::move(*values[k]));
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
