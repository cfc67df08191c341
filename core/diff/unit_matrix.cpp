#include "core/diff/unit_matrix.h"

#include <algorithm>

#include "core/diff/saturation.h"
#include "core/numerics/dequant.h"
#include "core/numerics/element_reader.h"

namespace ws::diff {

namespace {

template <class T>
std::vector<T> transpose(const std::vector<T>& v, uint64_t rows, uint64_t cols) {
  std::vector<T> t(v.size());
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c) t[c * rows + r] = v[r * cols + c];
  return t;
}

// Gate (half 0) or up (half 1) of a fused [2I, in] matrix: the first or second I rows, or the
// even or odd rows when gate and up interleave.
template <class T>
std::vector<T> halfOf(const std::vector<T>& v, uint64_t rows, uint64_t cols, int half, bool interleaved) {
  const uint64_t out = rows / 2;
  std::vector<T> h(out * cols);
  for (uint64_t r = 0; r < out; ++r) {
    const uint64_t src = interleaved ? 2 * r + uint64_t(half) : uint64_t(half) * out + r;
    std::copy_n(v.begin() + int64_t(src * cols), cols, h.begin() + int64_t(r * cols));
  }
  return h;
}

std::vector<uint8_t> saturationOf(const num::RowDecoder& d, uint64_t firstRow, uint64_t rows) {
  const num::DecodeDesc desc = d.describe();
  if (rows == 0 || d.cols() == 0 || !codeAtExtreme(desc, firstRow, 0)) return {};
  std::vector<uint8_t> s(rows * d.cols());
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t j = 0; j < d.cols(); ++j) s[r * d.cols() + j] = *codeAtExtreme(desc, firstRow + r, j);
  return s;
}

// A bias or buffer: plain values, one row per expert of an [E, N] tensor; of a fused gate_up
// bias, the gate or up half of the row.
Matrix decodeMember(const Checkpoint& c, const Unit& u) {
  const TensorRecord& t = c.tensors[uint64_t(u.member)];
  num::ElementReader r;
  if (!r.init(t.dtype) || t.dtype->isBlockQuant())
    fail(ErrorCode::UnknownDtype, std::string(t.dtype->name) + " is not a plain type a bias can have", {}, std::nullopt, t.name);
  const auto& f = c.files[t.file];
  if (!f.map || t.offset > f.map->size() || t.bytes > f.map->size() - t.offset)
    fail(ErrorCode::Io, "tensor data lies outside its file", f.path, t.offset, t.name);
  const uint64_t cols = t.shape.empty() ? 1 : t.shape.back();
  uint64_t first = 0, rows = cols ? t.elements() / cols : 0;
  if (u.expert >= 0) {
    if (uint64_t(u.expert) >= rows) fail(ErrorCode::Usage, "expert " + std::to_string(u.expert) + " is not in this tensor", {}, std::nullopt, t.name);
    first = uint64_t(u.expert) * cols;
    rows = 1;
  }
  Matrix m{rows, cols, std::vector<float>(rows * cols), {}};
  r.run(f.map->bytes().data() + t.offset, first, rows * cols, m.values.data());
  if (u.half >= 0) {  // the vector is the output dimension: halve it like a column
    if (cols % 2) fail(ErrorCode::Usage, "a fused gate_up bias with an odd size " + std::to_string(cols), {}, std::nullopt, t.name);
    m.values = halfOf(m.values, cols, rows, u.half, u.interleaved);
    m.cols /= 2;
  }
  return m;
}

}  // namespace

Result<Matrix> decodeUnit(const Checkpoint& c, const Unit& u, const num::DeviceDequantFn* device) {
  return capture([&]() -> Matrix {
    if (u.member >= 0) return decodeMember(c, u);
    auto made = num::makeDecoder(c, u.logical);
    if (!made) throw CoreError(made.error());
    const num::RowDecoder& d = *made.value();
    const std::string& name = c.logical[u.logical].name;
    Matrix m;
    uint64_t firstRow = 0;
    if (u.expert >= 0) {
      if (d.shape().size() != 3 || uint64_t(u.expert) >= d.shape()[0])
        fail(ErrorCode::Usage, "expert " + std::to_string(u.expert) + " is not in this tensor", {}, std::nullopt, name);
      m.rows = d.shape()[1];
      firstRow = uint64_t(u.expert) * m.rows;
    } else {
      m.rows = d.rows();
    }
    m.cols = d.cols();
    if (device) {
      auto v = (*device)(c, u.logical, firstRow, m.rows);
      if (!v) throw CoreError(v.error());
      if (v.value().size() != m.rows * m.cols) fail(ErrorCode::Io, "the device returned " + std::to_string(v.value().size()) + " values", {}, std::nullopt, name);
      m.values = std::move(v.value());
    } else {
      m.values.resize(m.rows * m.cols);
      d.decode(firstRow, m.rows, m.values.data());
    }
    m.saturated = saturationOf(d, firstRow, m.rows);
    if (u.transposed) {
      m.values = transpose(m.values, m.rows, m.cols);
      if (!m.saturated.empty()) m.saturated = transpose(m.saturated, m.rows, m.cols);
      std::swap(m.rows, m.cols);
    }
    if (u.half >= 0) {
      if (m.rows % 2) fail(ErrorCode::Usage, "a fused gate_up with an odd output size " + std::to_string(m.rows), {}, std::nullopt, name);
      m.values = halfOf(m.values, m.rows, m.cols, u.half, u.interleaved);
      if (!m.saturated.empty()) m.saturated = halfOf(m.saturated, m.rows, m.cols, u.half, u.interleaved);
      m.rows /= 2;
    }
    return m;
  });
}

}  // namespace ws::diff
