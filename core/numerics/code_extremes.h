// The extremes of quantized codes, found without decoding them: a value that is a monotone
// function of its code under one scale (RowDecoder::extent) has its extremes at the codes'.
// Byte-wide compares, 32 lanes at a time on AVX2, instead of a float per element.
#pragma once

#include <cmath>
#include <cstdint>

namespace ws::num {

// What bounds a run of E4M3 codes (sign and magnitude), from three byte-wide reductions: the
// greatest code read as int8 is the largest positive code when there is one, the greatest read as
// uint8 the largest-magnitude negative one when there is one, and the least as uint8 is the other
// end when all codes share a sign. A NaN code (0x7F, 0xFF) has the largest magnitude of its sign,
// so it is an end whenever it is present: its value (NaN) tells the caller to decode instead.
struct E4m3Range {
  int8_t smax = -128;
  uint8_t umin = 0xFF, umax = 0x00;
  uint8_t greatest() const { return smax >= 0 ? uint8_t(smax) : umin; }  // the code of the largest value
  uint8_t least() const { return umax >= 0x80 ? umax : umin; }            // the code of the smallest value
};

// The same for 16-bit codes (BF16, F16; little-endian): the positive codes (sign bit clear) lie
// in [umin, smax] when there are any (umin < 0x8000), the negative ones in [uint16(smin), umax]
// when there are any (umax >= 0x8000). Two runs of codes, one for each sign: what a
// tally of such codes has to visit to find its counts.
struct Code16Bounds {
  int16_t smin = 32767, smax = -32768;
  uint16_t umin = 0xFFFF, umax = 0x0000;
  bool anyPositive() const { return umin < 0x8000; }
  bool anyNegative() const { return umax >= 0x8000; }
};
// Widens b by the n codes at `raw`.
void widenCode16Bounds(const uint8_t* raw, uint64_t n, Code16Bounds& b);

// Widens out[b] by the codes of column block b (columns [b x blockCols, (b + 1) x blockCols)) of
// a rows x cols matrix of E4M3 codes: out holds ceil(cols / blockCols) ranges.
void e4m3Ranges(const uint8_t* q, uint64_t rows, uint64_t cols, uint64_t blockCols, E4m3Range* out);

// The least and greatest code of each of `groups` consecutive groups of `groupBytes` bytes of
// packed unsigned codes: two a byte, low nibble first, when `bits` is 4; one a byte when 8.
void groupCodeRanges(const uint8_t* q, uint64_t groups, uint64_t groupBytes, unsigned bits, uint8_t* lo, uint8_t* hi);

// The least and greatest of (code - zero) x scale over a row of `groups` consecutive groups of
// packed int4 codes (two a byte, low nibble first), `groupBytes` bytes each, group g scaled by
// scales[g], with one zero for every group (a symmetric scheme), widened by `known` (the range
// of the values seen before; empty by default). Each product is computed as
// float(code - zero) x scale, so the ends are values the row decodes to. `finite` is false when
// a product is NaN or infinite (a NaN or infinite scale, or an overflow); lo and hi then mean
// nothing and the caller decodes the row.
// A group whose scale alone keeps its products strictly inside `known` cannot change the answer,
// and its codes are not looked at: across a tensor, only the groups that could widen what the
// rows before them found are reduced.
struct ProductRange {
  float lo = INFINITY, hi = -INFINITY;
  bool finite = true;
};
// The group scales: floats, or BF16 codes as the file stores them (little-endian, any alignment),
// widened to floats in registers. Converting a tensor's BF16 scales to floats first was a pass of
// its own, 6% of a warm INT4 validate (perf).
struct GroupScales {
  const void* p = nullptr;
  bool bf16 = false;
  GroupScales(const float* f) : p(f) {}  // implicit: a float array is the usual case
  static GroupScales storedBf16(const uint8_t* codes) {
    GroupScales s(nullptr);
    s.p = codes, s.bf16 = true;
    return s;
  }
  float operator[](uint64_t g) const;
  GroupScales operator+(uint64_t g) const {
    GroupScales s = *this;
    s.p = static_cast<const uint8_t*>(p) + g * (bf16 ? 2 : 4);
    return s;
  }
};
ProductRange int4ProductRange(const uint8_t* q, uint64_t groups, uint64_t groupBytes, int zero, GroupScales scales, ProductRange known = {});

}  // namespace ws::num
