#include "core/diff/unit_matrix.h"

#include <algorithm>

#include "core/diff/saturation.h"
#include "core/numerics/dequant.h"
#include "core/numerics/mapped_reads.h"
#include "core/numerics/remote_reads.h"
#include "core/numerics/float_formats.h"
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

// llama.cpp's RoPE order undone: within each head of `rows / heads` rows, the converter put row
// half * (d/2) + i at 2i + half (LlamaModel.permute); this puts it back.
template <class T>
std::vector<T> unpermuteRope(const std::vector<T>& v, uint64_t rows, uint64_t cols, uint64_t heads) {
  const uint64_t d = rows / heads, halfD = d / 2;
  std::vector<T> o(v.size());
  for (uint64_t h = 0; h < heads; ++h)
    for (uint64_t half = 0; half < 2; ++half)
      for (uint64_t i = 0; i < halfD; ++i)
        std::copy_n(v.begin() + int64_t((h * d + 2 * i + half) * cols), cols, o.begin() + int64_t((h * d + half * halfD + i) * cols));
  return o;
}

// [n * a, b] read as n matrices [a, b], each transposed: [n * b, a].
template <class T>
std::vector<T> transposeEach(const std::vector<T>& v, uint64_t n, uint64_t a, uint64_t b) {
  std::vector<T> o(v.size());
  for (uint64_t k = 0; k < n; ++k)
    for (uint64_t r = 0; r < a; ++r)
      for (uint64_t c = 0; c < b; ++c) o[(k * b + c) * a + r] = v[(k * a + r) * b + c];
  return o;
}

// Rows r with offset <= r % period < offset + count, in order.
template <class T>
std::vector<T> sliceRows(const std::vector<T>& v, uint64_t rows, uint64_t cols, uint64_t period, uint64_t offset, uint64_t count) {
  std::vector<T> o;
  o.reserve(rows / period * count * cols);
  for (uint64_t r = 0; r < rows; ++r)
    if (r % period >= offset && r % period < offset + count) o.insert(o.end(), v.begin() + int64_t(r * cols), v.begin() + int64_t((r + 1) * cols));
  return o;
}

// The converter's transformations undone (Unit::ropeHeads, transposeEach, slice*).
void undoConversion(Matrix& m, const Unit& u, const std::string& name) {
  auto both = [&](auto f) {
    m.values = f(m.values);
    if (!m.saturated.empty()) m.saturated = f(m.saturated);
  };
  if (u.transposeEach > 0) {
    const uint64_t n = uint64_t(u.transposeEach);
    if (m.rows % n) fail(ErrorCode::Usage, "cannot cut " + std::to_string(m.rows) + " rows into " + std::to_string(n) + " matrices", {}, std::nullopt, name);
    const uint64_t a = m.rows / n, b = m.cols;
    both([&](const auto& v) { return transposeEach(v, n, a, b); });
    m.rows = n * b;
    m.cols = a;
  }
  if (u.slicePeriod > 0) {
    if (m.rows % u.slicePeriod) fail(ErrorCode::Usage, std::to_string(m.rows) + " rows are not whole heads of " + std::to_string(u.slicePeriod), {}, std::nullopt, name);
    const uint64_t rows = m.rows;
    both([&](const auto& v) { return sliceRows(v, rows, m.cols, u.slicePeriod, u.sliceOffset, u.sliceCount); });
    m.rows = rows / u.slicePeriod * u.sliceCount;
  }
  if (u.ropeHeads > 0) {
    const uint64_t heads = uint64_t(u.ropeHeads);
    const bool vector = m.rows == 1;  // a bias: its values are the rows
    const uint64_t rows = vector ? m.cols : m.rows, cols = vector ? 1 : m.cols;
    if (rows % (2 * heads)) fail(ErrorCode::Usage, std::to_string(rows) + " rows are not " + std::to_string(heads) + " heads of even size", {}, std::nullopt, name);
    both([&](const auto& v) { return unpermuteRope(v, rows, cols, heads); });
  }
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
Matrix decodeMember(const Checkpoint& c, const Unit& u, num::Numerics numerics) {
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
  if (numerics == num::Numerics::Kt)  // plain values: .to(bf16)
    for (float& v : m.values) v = num::bf16ToFloat(num::toBf16Rne(v));
  if (u.half >= 0) {  // the vector is the output dimension: halve it like a column
    if (cols % 2) fail(ErrorCode::Usage, "a fused gate_up bias with an odd size " + std::to_string(cols), {}, std::nullopt, t.name);
    m.values = halfOf(m.values, cols, rows, u.half, u.interleaved);
    m.cols /= 2;
  }
  undoConversion(m, u, t.name);
  return m;
}

}  // namespace

Result<Matrix> decodeUnit(const Checkpoint& c, const Unit& u, const num::DeviceDequantFn* device, num::Numerics numerics) {
  return capture([&]() -> Matrix {
    MappedReadGuard guard;  // a file cut short under a long diff fails this unit, not the process
    if (u.member >= 0) {
      num::fetchTensor(c, c.tensors[uint64_t(u.member)]);  // a remote side: its bytes first
      Matrix m = decodeMember(c, u, numerics);
      num::checkMappedReads(guard, c, c.tensors[uint64_t(u.member)]);
      return m;
    }
    num::fetchForDecode(c, num::DequantRequest{.logical = u.logical, .expert = u.expert});
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
    num::checkMappedReads(guard, c, c.logical[u.logical]);
    num::applyNumerics(numerics, d, firstRow, m.rows, m.values.data());
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
    undoConversion(m, u, name);
    return m;
  });
}

}  // namespace ws::diff
