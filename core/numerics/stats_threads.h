// What one GPU thread of the statistics kernels does, written once for the device
// (kernels/device_numerics.cu) and for the CPU emulation (core/numerics/grid_stats.cpp), like the
// dequantization bodies in kernel_threads.h. Each thread folds its grid-stride share of the values
// into registers and counts histogram bins in its block's shared memory; a block then writes one
// partial and adds its bins to the grid's with one atomic per occupied bin - not ~7 global atomics
// per element, which serialise every thread of the device on the same few addresses.
#pragma once

#include <cstdint>

#include "core/numerics/gguf_scale_formulas.h"
#include "core/numerics/hd.h"
#include "core/numerics/kernel_threads.h"

namespace ws::num {

// One thread's (then one block's, then the grid's) share of the statistics.
struct StatsPartial {
  uint64_t nan, inf, zero, subnormal, negative, finite, below, above;
  float min, max;  // of the finite values
  double sum, sumSquares;
};

WS_HD StatsPartial emptyStatsPartial() {
  StatsPartial p{};
  p.min = hdBitsToFloat(0x7F800000u);   // +inf: any finite value is smaller
  p.max = hdBitsToFloat(0xFF800000u);   // -inf
  return p;
}

// Folds one value in, as num::Stats::add and Histogram::add (log2Fine) count it; bump(i) counts
// bin i (a shared-memory atomic on the device, a plain increment in the emulation).
template <class Bump>
WS_HD void statsFold(float x, StatsPartial& p, Bump bump) {
  const uint32_t u = hdMagnitude(x);
  if (hdNanMagnitude(u)) {
    ++p.nan;
    return;
  }
  if (hdInfMagnitude(u)) {
    ++p.inf;
    ++p.above;
    return;
  }
  if (x < 0.0f) ++p.negative;
  if (u == 0) {
    ++p.zero;
    ++p.below;
  } else {
    if (hdSubnormalMagnitude(u)) ++p.subnormal;
    bump(hdQuarterOctave(x) + kStatsBinOffset);
  }
  ++p.finite;
  p.min = x < p.min ? x : p.min;
  p.max = x > p.max ? x : p.max;
  p.sum += double(x);
  p.sumSquares += double(x) * double(x);
}

WS_HD void statsMerge(StatsPartial& a, const StatsPartial& b) {
  a.nan += b.nan, a.inf += b.inf, a.zero += b.zero, a.subnormal += b.subnormal, a.negative += b.negative;
  a.finite += b.finite, a.below += b.below, a.above += b.above;
  a.min = b.min < a.min ? b.min : a.min;
  a.max = b.max > a.max ? b.max : a.max;
  a.sum += b.sum, a.sumSquares += b.sumSquares;
}

// The statistics grid: few enough blocks that each thread folds many values (the per-block
// merge is then negligible) and enough to fill an H200's 132 SMs several times over.
WS_HD LaunchGrid statsGrid(uint64_t n) {
  LaunchGrid g;
  const uint64_t want = (n + g.threads - 1) / g.threads;
  g.blocks = uint32_t(want < 1024 ? want : 1024);
  return g;
}

template <class Bump>
WS_HD void statsThread(const float* v, uint64_t n, StatsPartial& p, Bump bump, ThreadIndex t) {
  for (uint64_t i = t.first(); i < n; i += t.stride()) statsFold(v[i], p, bump);
}

// The second pass: this thread's sum of squared deviations of the finite values from the mean.
WS_HD double deviationThread(const float* v, uint64_t n, double mean, ThreadIndex t) {
  double local = 0;
  for (uint64_t i = t.first(); i < n; i += t.stride()) {
    const float x = v[i];
    if (hdFiniteMagnitude(hdMagnitude(x))) local += (double(x) - mean) * (double(x) - mean);
  }
  return local;
}

// The scales inside GGUF blocks, kind by kind: block i's d, dmin, sub-scales and sub-minimums at
// d[i], dmin[i], sub[i * subs ...], subMin[i * mins ...] (a null array: a kind the type lacks),
// for the scale statistics that then run over each array.
WS_HD void ggufScalesThread(const uint8_t* w, uint32_t blockBytes, int id, uint64_t n, int subs, int mins, float* d, float* dmin, float* sub, float* subMin, ThreadIndex t) {
  for (uint64_t i = t.first(); i < n; i += t.stride()) {
    const GgufBlockScales s = ggufBlockScales(id, w + i * blockBytes);
    if (d) d[i] = s.d;
    if (dmin) dmin[i] = s.dmin;
    for (int k = 0; k < subs; ++k) sub[i * uint64_t(subs) + uint64_t(k)] = s.sub[k];
    for (int k = 0; k < mins; ++k) subMin[i * uint64_t(mins) + uint64_t(k)] = s.subMin[k];
  }
}

// F32 values to BF16, rounded to nearest even.
WS_HD void toBf16Thread(const float* v, uint64_t n, uint16_t* out, ThreadIndex t) {
  for (uint64_t i = t.first(); i < n; i += t.stride()) out[i] = hdToBf16Rne(v[i]);
}

}  // namespace ws::num
