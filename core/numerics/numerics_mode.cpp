#include "core/numerics/numerics_mode.h"

#include "core/numerics/decode_element.h"
#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"

namespace ws::num {

std::optional<Numerics> parseNumerics(std::string_view name) {
  if (name == "reference") return Numerics::Reference;
  if (name == "kt") return Numerics::Kt;
  return std::nullopt;
}

std::string_view numericsName(Numerics n) { return n == Numerics::Kt ? "kt" : "reference"; }

namespace {

float roundedToBf16(float v) { return bf16ToFloat(toBf16Rne(v)); }

}  // namespace

void applyNumerics(Numerics n, const RowDecoder& d, uint64_t firstRow, uint64_t rows, float* values) {
  if (n == Numerics::Reference) return;
  const uint64_t cols = d.cols();
  const DecodeDesc desc = d.describe();
  if (desc.kind == DescKind::Fp8Scaled && desc.mode == 2) {
    // _dequant_fp8_experts: w.to(bf16) * s.to(bf16). An E4M3 code is exact in BF16, and the product
    // of two BF16 values is exact in F32, so one rounding of that F32 product is torch's BF16 multiply.
    for (uint64_t r = 0; r < rows; ++r) {
      const uint64_t row = firstRow + r, b = row / desc.M, i = row % desc.M;
      for (uint64_t j = 0; j < cols; ++j) {
        const float code = hdReadElem(desc.w.kind, desc.w.data, row * cols + j);
        const float scale = roundedToBf16(scaleAt(desc.s, (b * desc.gm + i / desc.bm) * desc.gn + j / desc.bn));
        values[r * cols + j] = roundedToBf16(code * scale);
      }
    }
    return;
  }
  for (uint64_t k = 0; k < rows * cols; ++k) values[k] = roundedToBf16(values[k]);
}

}  // namespace ws::num
