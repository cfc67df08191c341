#include "core/numerics/code_extremes.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ws::num {

namespace {

// 32 bytes as one vector (GCC's vector extension: one AVX2 register in the avx2 clone, two SSE2
// ones in the default clone).
using Bytes32 = uint8_t __attribute__((vector_size(32)));
using Signed32 = int8_t __attribute__((vector_size(32)));
using Codes16 = uint16_t __attribute__((vector_size(32)));
using SignedCodes16 = int16_t __attribute__((vector_size(32)));

}  // namespace

__attribute__((target_clones("avx2", "default"))) void e4m3Ranges(const uint8_t* q, uint64_t rows, uint64_t cols, uint64_t blockCols, E4m3Range* out) {
  constexpr uint64_t kLanes = sizeof(Bytes32);
  const uint64_t blocks = (cols + blockCols - 1) / blockCols;
  // A block at a time, down its rows, the three reductions held in registers. The caller read the
  // rows into a buffer that fits in L2 (RowDecoder::extent's chunk), so going down a column block
  // costs no more than along a row; along a row, the reductions were stored and reloaded every
  // 32 bytes, and the stores bound the loop (perf annotate).
  for (uint64_t b = 0, j0 = 0; b < blocks; ++b, j0 += blockCols) {
    const uint64_t j1 = std::min(cols, j0 + blockCols), vectors = (j1 - j0) / kLanes;
    Signed32 smax = Signed32{} + int8_t(-128);
    Bytes32 umin = Bytes32{} + uint8_t(0xFF), umax = Bytes32{};
    int8_t tailSmax = -128;
    uint8_t tailUmin = 0xFF, tailUmax = 0x00;
    for (uint64_t r = 0; r < rows; ++r) {
      const uint8_t* p = q + r * cols + j0;
      for (uint64_t v = 0; v < vectors; ++v) {
        Bytes32 c;
        std::memcpy(&c, p + v * kLanes, kLanes);
        const Signed32 sc = reinterpret_cast<Signed32>(c);
        smax = sc > smax ? sc : smax;
        umin = c < umin ? c : umin;
        umax = c > umax ? c : umax;
      }
      for (uint64_t j = vectors * kLanes; j < j1 - j0; ++j) {
        const uint8_t c = p[j];
        tailSmax = std::max(tailSmax, int8_t(c));
        tailUmin = std::min(tailUmin, c);
        tailUmax = std::max(tailUmax, c);
      }
    }
    E4m3Range& o = out[b];
    o.smax = std::max(o.smax, tailSmax), o.umin = std::min(o.umin, tailUmin), o.umax = std::max(o.umax, tailUmax);
    for (uint64_t k = 0; k < kLanes; ++k) o.smax = std::max(o.smax, smax[k]), o.umin = std::min(o.umin, umin[k]), o.umax = std::max(o.umax, umax[k]);
  }
}

__attribute__((target_clones("avx2", "default"))) void widenCode16Bounds(const uint8_t* raw, uint64_t n, Code16Bounds& b) {
  constexpr uint64_t kLanes = sizeof(Codes16) / 2;
  static_assert(std::endian::native == std::endian::little, "codes are stored little-endian");
  SignedCodes16 smin = SignedCodes16{} + int16_t(32767), smax = SignedCodes16{} + int16_t(-32768);
  Codes16 umin = Codes16{} + uint16_t(0xFFFF), umax = Codes16{};
  uint64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Codes16 c;
    std::memcpy(&c, raw + 2 * i, sizeof c);
    const SignedCodes16 sc = reinterpret_cast<SignedCodes16>(c);
    smin = sc < smin ? sc : smin, smax = sc > smax ? sc : smax;
    umin = c < umin ? c : umin, umax = c > umax ? c : umax;
  }
  for (uint64_t k = 0; k < kLanes; ++k)
    b.smin = std::min(b.smin, smin[k]), b.smax = std::max(b.smax, smax[k]), b.umin = std::min(b.umin, umin[k]), b.umax = std::max(b.umax, umax[k]);
  for (; i < n; ++i) {
    const uint16_t c = uint16_t(raw[2 * i] | raw[2 * i + 1] << 8);
    b.smin = std::min(b.smin, int16_t(c)), b.smax = std::max(b.smax, int16_t(c)), b.umin = std::min(b.umin, c), b.umax = std::max(b.umax, c);
  }
}

namespace {

// One group's codes; a compile-time width lets the compiler unroll it into a few vector
// compares and a horizontal reduction (Kimi-K2's 32-code int4 groups are 16 bytes).
// Inlined into each clone of groupCodeRanges, so they are built for its target too.
template <uint64_t kBytes, unsigned kBits>
[[gnu::always_inline]] inline void groupRange(const uint8_t* p, uint64_t bytes, uint8_t& lo, uint8_t& hi) {
  const uint64_t n = kBytes ? kBytes : bytes;
  uint8_t mn = 0xFF, mx = 0x00;
  for (uint64_t k = 0; k < n; ++k) {
    const uint8_t b = p[k];
    const uint8_t a = kBits == 4 ? uint8_t(b & 0xF) : b, c = kBits == 4 ? uint8_t(b >> 4) : b;
    const uint8_t small = a < c ? a : c, large = a < c ? c : a;
    mn = small < mn ? small : mn;
    mx = large > mx ? large : mx;
  }
  lo = mn, hi = mx;
}

template <uint64_t kBytes, unsigned kBits>
[[gnu::always_inline]] inline void rangesOf(const uint8_t* q, uint64_t groups, uint64_t groupBytes, uint8_t* lo, uint8_t* hi) {
  for (uint64_t g = 0; g < groups; ++g) groupRange<kBytes, kBits>(q + g * groupBytes, groupBytes, lo[g], hi[g]);
}

}  // namespace

__attribute__((target_clones("avx2", "default"))) void groupCodeRanges(const uint8_t* q, uint64_t groups, uint64_t groupBytes, unsigned bits, uint8_t* lo,
                                                                       uint8_t* hi) {
  if (bits == 4) {
    if (groupBytes == 16) return rangesOf<16, 4>(q, groups, groupBytes, lo, hi);
    if (groupBytes == 32) return rangesOf<32, 4>(q, groups, groupBytes, lo, hi);
    if (groupBytes == 64) return rangesOf<64, 4>(q, groups, groupBytes, lo, hi);
    return rangesOf<0, 4>(q, groups, groupBytes, lo, hi);
  }
  if (groupBytes == 32) return rangesOf<32, 8>(q, groups, groupBytes, lo, hi);
  if (groupBytes == 64) return rangesOf<64, 8>(q, groups, groupBytes, lo, hi);
  if (groupBytes == 128) return rangesOf<128, 8>(q, groups, groupBytes, lo, hi);
  return rangesOf<0, 8>(q, groups, groupBytes, lo, hi);
}

namespace {

// Group by group: each group's code range, then its two end products.
ProductRange productRangeScalar(const uint8_t* q, uint64_t groups, uint64_t groupBytes, int zero, GroupScales scales, ProductRange r = {}) {
  for (uint64_t g = 0; g < groups; ++g) {
    uint8_t lo, hi;
    groupRange<0, 4>(q + g * groupBytes, groupBytes, lo, hi);
    const float scale = scales[g];
    const float a = float(int(lo) - zero) * scale, b = float(int(hi) - zero) * scale;
    if (!std::isfinite(a) || !std::isfinite(b)) return {INFINITY, -INFINITY, false};
    r.lo = std::min(r.lo, std::min(a, b));
    r.hi = std::max(r.hi, std::max(a, b));
  }
  return r;
}

#if defined(__x86_64__)

// Byte-wise, the lesser and greater of each byte's two codes.
__attribute__((target("avx2"))) inline void nibbles(__m256i v, __m256i& a, __m256i& b) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  const __m256i l = _mm256_and_si256(v, low), h = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
  a = _mm256_min_epu8(l, h), b = _mm256_max_epu8(l, h);
}

// Two groups' byte-wise nibble minima and maxima, group g in the low 128-bit lane and g + 1 in
// the high one: the 16 bytes of each lane bound the group's codes. kChunks: 32-byte loads per
// group (0: a 16-byte group, two a load).
template <int kChunks>
__attribute__((target("avx2"))) inline void pairPartials(const uint8_t* p, uint64_t groupBytes, __m256i& mn, __m256i& mx) {
  if constexpr (kChunks == 0) {
    nibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), mn, mx);
  } else {
    __m256i half[2][2];  // [group][min, max], each group folded to one lane
    for (int k = 0; k < 2; ++k) {
      const uint8_t* g = p + uint64_t(k) * groupBytes;
      nibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g)), half[k][0], half[k][1]);
      for (int c = 1; c < kChunks; ++c) {
        __m256i a, b;
        nibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + 32 * c)), a, b);
        half[k][0] = _mm256_min_epu8(half[k][0], a), half[k][1] = _mm256_max_epu8(half[k][1], b);
      }
      half[k][0] = _mm256_min_epu8(half[k][0], _mm256_permute2x128_si256(half[k][0], half[k][0], 1));
      half[k][1] = _mm256_max_epu8(half[k][1], _mm256_permute2x128_si256(half[k][1], half[k][1], 1));
    }
    mn = _mm256_blend_epi32(half[0][0], half[1][0], 0xF0);
    mx = _mm256_blend_epi32(half[0][1], half[1][1], 0xF0);
  }
}

// Four groups' code ranges as 8 int32 lanes: lo, 15 - hi, for each group in turn. Each lane's
// 16 bytes fold to one: minima, and maxima as minima of 15 - code, in one register.
template <int kChunks>
__attribute__((target("avx2"))) inline __m256i quadRanges(const uint8_t* p, uint64_t groupBytes) {
  const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  __m128i out[2];
  for (int k = 0; k < 2; ++k) {
    __m256i mn, mx;
    pairPartials<kChunks>(p + uint64_t(2 * k) * groupBytes, groupBytes, mn, mx);
    mn = _mm256_min_epu8(mn, _mm256_srli_si256(mn, 8));
    mx = _mm256_max_epu8(mx, _mm256_srli_si256(mx, 8));
    __m256i t = _mm256_unpacklo_epi64(mn, _mm256_xor_si256(mx, _mm256_set1_epi8(0x0F)));
    t = _mm256_min_epu8(t, _mm256_srli_epi64(t, 32));
    t = _mm256_min_epu8(t, _mm256_srli_epi64(t, 16));
    t = _mm256_min_epu8(t, _mm256_srli_epi64(t, 8));
    t = _mm256_and_si256(t, _mm256_set1_epi64x(0xFF));  // one range end per 64-bit element
    out[k] = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(t, idx));
  }
  return _mm256_set_m128i(out[1], out[0]);
}

// Eight and four scales from `at` as floats: kBf16, BF16 codes widened (a float's high half).
template <bool kBf16>
__attribute__((target("avx2"))) inline __m256 eightScales(const void* at) {
  if constexpr (kBf16) return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(static_cast<const __m128i*>(at))), 16));
  else return _mm256_loadu_ps(static_cast<const float*>(at));
}
template <bool kBf16>
__attribute__((target("avx2"))) inline __m128 fourScales(const void* at) {
  if constexpr (kBf16) return _mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(_mm_loadl_epi64(static_cast<const __m128i*>(at))), 16));
  else return _mm_loadu_ps(static_cast<const float*>(at));
}

// Eight groups at a time: their 16 end products in two registers of floats, folded into running
// minima and maxima. With finite scales a product is finite unless it overflows, and an
// overflow is infinite, so it ends up as the least or the greatest: the ends tell it.
// Before its codes are read, each group is bounded by its scale alone: its products lie between
// (0 - zero) x scale and (15 - zero) x scale (rounding is monotone, so as floats too). Four
// groups whose bounds all lie strictly inside `known` cannot widen it and are passed over. An
// overflowing product has an infinite bound, which is never strictly inside, so it is still seen.
template <int kChunks, bool kBf16>
__attribute__((target("avx2"))) ProductRange productRangeAvx2(const uint8_t* q, uint64_t groups, uint64_t groupBytes, int zero, GroupScales scales, ProductRange known) {
  const uint8_t* scaleBytes = static_cast<const uint8_t*>(scales.p);
  constexpr uint64_t kScaleBytes = kBf16 ? 2 : 4;
  const __m256i exponent = _mm256_set1_epi32(0x7F800000);
  __m256i nonFinite = _mm256_setzero_si256();  // lanes whose scale's exponent is all ones
  const __m256 sign = _mm256_setr_ps(1, -1, 1, -1, 1, -1, 1, -1);
  const __m256 offset = _mm256_setr_ps(float(-zero), float(15 - zero), float(-zero), float(15 - zero), float(-zero), float(15 - zero), float(-zero), float(15 - zero));
  const __m256i pairs = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256 leastCode = _mm256_set1_ps(float(-zero)), greatestCode = _mm256_set1_ps(float(15 - zero));
  const __m256 knownLo = _mm256_set1_ps(known.lo), knownHi = _mm256_set1_ps(known.hi);
  __m256 lo = _mm256_set1_ps(INFINITY), hi = _mm256_set1_ps(-INFINITY);
  // A block of groups at a time: first the bounds of all its groups, noting the first group of
  // each quad that may widen `known`, then those quads' codes. Which quads those are is data, and
  // a branch on each in the first loop was mispredicted often enough to double its time (perf
  // annotate: half of this function in an 8-group loop of a dozen instructions).
  constexpr uint64_t kBlock = 1024;
  uint32_t wanted[kBlock / 4];
  uint64_t g = 0;
  for (uint64_t block = 0; block + 8 <= groups; block += kBlock) {
    const uint64_t blockEnd = std::min(groups, block + kBlock);
    uint64_t quads = 0;
    for (g = block; g + 8 <= blockEnd; g += 8) {
      const __m256 s8 = eightScales<kBf16>(scaleBytes + g * kScaleBytes);
      nonFinite = _mm256_or_si256(nonFinite, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(s8), exponent), exponent));
      const __m256 a = _mm256_mul_ps(s8, leastCode), b = _mm256_mul_ps(s8, greatestCode);
      // A lane may widen `known` unless both its bounds are strictly inside (unordered: it may).
      const __m256 widens = _mm256_or_ps(_mm256_cmp_ps(_mm256_max_ps(a, b), knownHi, _CMP_NLT_UQ), _mm256_cmp_ps(_mm256_min_ps(a, b), knownLo, _CMP_NGT_UQ));
      const int mask = _mm256_movemask_ps(widens);
      wanted[quads] = uint32_t(g - block), quads += (mask & 0xF) != 0;
      wanted[quads] = uint32_t(g - block + 4), quads += (mask >> 4) != 0;
    }
    for (uint64_t k = 0; k < quads; ++k) {
      const uint64_t first = block + wanted[k];
      // (lo - zero) and (15 - (15 - hi) - zero) = (hi - zero): small integers, exact as floats.
      const __m256 ends = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(quadRanges<kChunks>(q + first * groupBytes, groupBytes)), sign), offset);
      const __m256 s = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(fourScales<kBf16>(scaleBytes + first * kScaleBytes)), pairs);
      const __m256 v = _mm256_mul_ps(ends, s);
      lo = _mm256_min_ps(lo, v), hi = _mm256_max_ps(hi, v);
    }
  }
  // A NaN scale's products are NaN, which the minima and maxima may drop: the scales tell.
  if (!_mm256_testz_si256(nonFinite, nonFinite)) return {INFINITY, -INFINITY, false};
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, lo), _mm256_store_ps(h, hi);
  ProductRange r;
  for (int k = 0; k < 8; ++k) r.lo = std::min(r.lo, l[k]), r.hi = std::max(r.hi, h[k]);
  if ((std::isinf(r.lo) && r.lo < 0) || (std::isinf(r.hi) && r.hi > 0)) return {INFINITY, -INFINITY, false};  // an overflow
  r.lo = std::min(r.lo, known.lo), r.hi = std::max(r.hi, known.hi);
  return productRangeScalar(q + g * groupBytes, groups - g, groupBytes, zero, scales + g, r);  // the last groups
}

#endif

}  // namespace

float GroupScales::operator[](uint64_t g) const {
  if (!bf16) return static_cast<const float*>(p)[g];
  uint16_t code;
  std::memcpy(&code, static_cast<const uint8_t*>(p) + 2 * g, 2);
  return std::bit_cast<float>(uint32_t(code) << 16);
}

ProductRange int4ProductRange(const uint8_t* q, uint64_t groups, uint64_t groupBytes, int zero, GroupScales scales, ProductRange known) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) {
    auto run = [&]<bool kBf16>() -> std::optional<ProductRange> {
      if (groupBytes == 16) return productRangeAvx2<0, kBf16>(q, groups, groupBytes, zero, scales, known);
      if (groupBytes == 32) return productRangeAvx2<1, kBf16>(q, groups, groupBytes, zero, scales, known);
      if (groupBytes == 64) return productRangeAvx2<2, kBf16>(q, groups, groupBytes, zero, scales, known);
      return std::nullopt;
    };
    if (auto r = scales.bf16 ? run.operator()<true>() : run.operator()<false>()) return *r;
  }
#endif
  return productRangeScalar(q, groups, groupBytes, zero, scales, {known.lo, known.hi, true});
}

}  // namespace ws::num
