// The statistics kernels' host side: the per-block partials and bins they leave turned into
// num::Stats and a log2Fine histogram (what kernels/ does after its launches), and the same two
// kernels run over their whole grid on the CPU (the emulation tests compare with num::Stats).
#pragma once

#include <cstdint>
#include <vector>

#include "core/numerics/stats.h"
#include "core/numerics/stats_threads.h"

namespace ws::num {

struct GridStats {
  Stats stats;
  Histogram histogram = Histogram::log2Fine();
  double sum = 0, sumSquares = 0;
};

// The blocks' partials merged in block order (deterministic), the bins, and the second pass's
// sum of squared deviations, for n values.
GridStats finishGridStats(const std::vector<StatsPartial>& blocks, const std::vector<uint64_t>& bins, double m2, uint64_t n);
// The grid's total of the first pass (what the second pass needs: the mean).
StatsPartial mergeBlocks(const std::vector<StatsPartial>& blocks);

// Both kernels over statsGrid(n), every block and thread, on the CPU.
GridStats emulateGridStats(const float* v, uint64_t n);

}  // namespace ws::num
