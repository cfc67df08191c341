// Whose arithmetic a dequantization follows. The reference is the published formula in F32
// (docs/dequantization.md). `kt` is what the KTransformers fine-tuning loader (a seed of this
// product) trains on: it dequantizes block-FP8 experts as weight.to(bf16) * scale.to(bf16), so the
// scale is rounded to BF16 before the multiply and the product rounded to BF16 - which differs from
// the reference wherever a scale is not BF16-exact - and turns every other tensor .to(bf16).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ws::num {

class RowDecoder;

enum class Numerics : uint8_t { Reference, Kt };

std::optional<Numerics> parseNumerics(std::string_view name);  // "reference" | "kt"
std::string_view numericsName(Numerics n);

// Rewrites `rows` decoded rows (from decoder row `firstRow`, rows x d.cols() reference F32 values)
// into the chosen arithmetic's values. Reference: unchanged. Kt: block-FP8 elements recomputed
// from their codes and scales as bf16(code x bf16(scale)); every other value rounded to BF16
// (nearest even, as torch's .to(bfloat16)).
void applyNumerics(Numerics n, const RowDecoder& d, uint64_t firstRow, uint64_t rows, float* values);

}  // namespace ws::num
