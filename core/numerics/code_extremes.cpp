#include "core/numerics/code_extremes.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace ws::num {

__attribute__((target_clones("avx2", "default"))) void e4m3Ranges(const uint8_t* q, uint64_t rows, uint64_t cols, uint64_t blockCols, E4m3Range* out) {
  constexpr uint64_t kLanes = 32;  // one AVX2 register of bytes: vpmaxsb, vpminub, vpmaxub
  const uint64_t blocks = (cols + blockCols - 1) / blockCols;
  // Each block's lanes, carried from row to row: rows are read whole and in order, which the
  // hardware prefetcher follows (a block at a time, 128 bytes then a jump of a row, it did not).
  std::vector<uint8_t> acc(blocks * 3 * kLanes);
  for (uint64_t b = 0; b < blocks; ++b) {
    uint8_t* a = acc.data() + b * 3 * kLanes;
    std::memset(a, 0x80, kLanes), std::memset(a + kLanes, 0xFF, kLanes), std::memset(a + 2 * kLanes, 0x00, kLanes);
  }
  for (uint64_t r = 0; r < rows; ++r) {
    const uint8_t* p = q + r * cols;
    for (uint64_t b = 0, j0 = 0; b < blocks; ++b, j0 += blockCols) {
      int8_t* __restrict smax = reinterpret_cast<int8_t*>(acc.data() + b * 3 * kLanes);
      uint8_t* __restrict umin = acc.data() + b * 3 * kLanes + kLanes;
      uint8_t* __restrict umax = umin + kLanes;
      const uint64_t j1 = std::min(cols, j0 + blockCols);
      uint64_t j = j0;
      for (; j + kLanes <= j1; j += kLanes)
        for (uint64_t k = 0; k < kLanes; ++k) {
          const uint8_t c = p[j + k];
          const int8_t sc = int8_t(c);
          smax[k] = sc > smax[k] ? sc : smax[k];
          umin[k] = c < umin[k] ? c : umin[k];
          umax[k] = c > umax[k] ? c : umax[k];
        }
      for (; j < j1; ++j) {
        const uint8_t c = p[j];
        smax[0] = int8_t(c) > smax[0] ? int8_t(c) : smax[0];
        umin[0] = c < umin[0] ? c : umin[0];
        umax[0] = c > umax[0] ? c : umax[0];
      }
    }
  }
  for (uint64_t b = 0; b < blocks; ++b)
    for (uint64_t k = 0; k < kLanes; ++k) {
      const uint8_t* a = acc.data() + b * 3 * kLanes;
      out[b].smax = std::max(out[b].smax, int8_t(a[k]));
      out[b].umin = std::min(out[b].umin, a[kLanes + k]);
      out[b].umax = std::max(out[b].umax, a[2 * kLanes + k]);
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

}  // namespace ws::num
