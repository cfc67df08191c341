#include "core/numerics/grid_stats.h"

#include <algorithm>
#include <cmath>

namespace ws::num {

StatsPartial mergeBlocks(const std::vector<StatsPartial>& blocks) {
  StatsPartial total = emptyStatsPartial();
  for (const auto& b : blocks) statsMerge(total, b);
  return total;
}

GridStats finishGridStats(const std::vector<StatsPartial>& blocks, const std::vector<uint64_t>& bins, double m2, uint64_t n) {
  const StatsPartial a = mergeBlocks(blocks);
  GridStats out;
  Stats counts;
  counts.count = n;
  counts.nan = a.nan, counts.inf = a.inf, counts.zero = a.zero, counts.subnormal = a.subnormal, counts.negative = a.negative;
  out.sum = a.sum, out.sumSquares = a.sumSquares;
  out.histogram.below = a.below, out.histogram.above = a.above;
  for (size_t i = 0; i < bins.size() && i < size_t(kStatsBins); ++i) out.histogram.addFineBin(int(i), bins[i]);
  out.stats = counts;
  if (a.finite)
    out.stats = Stats::fromMoments(counts, a.finite, a.min, a.max, std::max(std::fabs(double(a.min)), std::fabs(double(a.max))), a.sum / double(a.finite), m2);
  return out;
}

GridStats emulateGridStats(const float* v, uint64_t n) {
  const LaunchGrid g = statsGrid(n);
  std::vector<StatsPartial> blocks(g.blocks, emptyStatsPartial());
  std::vector<uint64_t> bins(kStatsBins, 0);
  std::vector<uint32_t> shared(kStatsBins);
  for (uint64_t b = 0; b < g.blocks; ++b) {
    std::fill(shared.begin(), shared.end(), 0u);
    for (uint64_t t = 0; t < g.threads; ++t) {
      StatsPartial p = emptyStatsPartial();
      statsThread(v, n, p, [&](int bin) { ++shared[size_t(bin)]; }, ThreadIndex{b, t, g.blocks, g.threads});
      statsMerge(blocks[b], p);  // the block's reduction, in thread order
    }
    for (int i = 0; i < kStatsBins; ++i) bins[size_t(i)] += shared[size_t(i)];
  }
  const StatsPartial total = mergeBlocks(blocks);
  double m2 = 0;
  if (total.finite) {
    const double mean = total.sum / double(total.finite);
    for (uint64_t b = 0; b < g.blocks; ++b) {
      double block = 0;
      for (uint64_t t = 0; t < g.threads; ++t) block += deviationThread(v, n, mean, ThreadIndex{b, t, g.blocks, g.threads});
      m2 += block;
    }
  }
  return finishGridStats(blocks, bins, m2, n);
}

}  // namespace ws::num
