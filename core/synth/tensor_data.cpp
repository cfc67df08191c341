#include "core/synth/tensor_data.h"

#include <cstring>
#include <string_view>

namespace ws::synth {

namespace {

struct SplitMix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  float uniform(float lo, float hi) { return lo + (hi - lo) * float(next() >> 40) / float(1ULL << 24); }
};

uint64_t hashName(std::string_view s, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL ^ seed;
  for (char c : s) h = (h ^ uint8_t(c)) * 1099511628211ULL;
  return h;
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

uint16_t toBf16(float f) {  // round to nearest even (values here are finite)
  uint32_t u = bitsOf(f);
  return uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

uint16_t toF16(float f) {  // IEEE half, round to nearest even, subnormals kept
  uint32_t u = bitsOf(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  int32_t exp = int32_t((u >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = u & 0x7FFFFF;
  if (exp >= 31) return uint16_t(sign | 0x7C00);
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;
  return uint16_t(sign | half);
}

void putFloat(uint8_t* p, std::string_view dtype, float v) {
  if (dtype == "F32") std::memcpy(p, &v, 4);
  else if (dtype == "BF16") { uint16_t b = toBf16(v); std::memcpy(p, &b, 2); }
  else if (dtype == "F16") { uint16_t b = toF16(v); std::memcpy(p, &b, 2); }
}

}  // namespace

std::vector<uint8_t> tensorBytes(const PlannedTensor& t, uint64_t seed) {
  std::vector<uint8_t> out(t.bytes());
  SplitMix rng{hashName(t.name, seed)};
  const std::string_view dn = t.dtype->name;
  const size_t elem = t.dtype->blockBytes;
  switch (t.fill) {
    case Fill::Values:
    case Fill::Ones:
    case Fill::PositiveF32:
    case Fill::Bf16Scale:
      for (size_t i = 0; i + elem <= out.size(); i += elem) {
        float v = t.fill == Fill::Values ? rng.uniform(-0.05f, 0.05f)
                  : t.fill == Fill::Ones ? 1.0f + rng.uniform(-0.01f, 0.01f)
                  : t.fill == Fill::PositiveF32 ? rng.uniform(1e-4f, 1e-3f)
                                                : rng.uniform(1e-3f, 1e-2f);
        putFloat(&out[i], dn, v);
      }
      break;
    case Fill::Fp8Codes:  // any E4M3 code but the two NaNs
      for (auto& b : out) {
        b = uint8_t(rng.next());
        if ((b & 0x7F) == 0x7F) b &= 0xFE;
      }
      break;
    case Fill::E4m3Scale:  // positive normal E4M3: exponent field 4..10
      for (auto& b : out) b = uint8_t(((4 + rng.next() % 7) << 3) | (rng.next() & 7));
      break;
    case Fill::E8m0Scale:  // 2^-9 .. 2^-1
      for (auto& b : out) b = uint8_t(118 + rng.next() % 9);
      break;
    case Fill::Fp4Codes:
    case Fill::IntCodes:
      for (auto& b : out) b = uint8_t(rng.next());
      break;
    case Fill::ShapeInts:
      for (size_t i = 0; i < t.ints.size() && 8 * i + 8 <= out.size(); ++i) std::memcpy(&out[8 * i], &t.ints[i], 8);
      break;
    case Fill::GgufBlocks: {
      for (auto& b : out) b = uint8_t(rng.next());
      // Random bytes are valid codes; only the f16 super-block scales must be sane numbers.
      const bool q4k = dn == "Q4_K";
      for (size_t blk = 0; blk + t.dtype->blockBytes <= out.size(); blk += t.dtype->blockBytes) {
        uint16_t d = toF16(rng.uniform(1e-4f, 1e-3f));
        std::memcpy(&out[blk], &d, 2);
        if (q4k) {
          uint16_t dmin = toF16(rng.uniform(1e-4f, 1e-3f));
          std::memcpy(&out[blk + 2], &dmin, 2);
        }
      }
      break;
    }
  }
  return out;
}

}  // namespace ws::synth
