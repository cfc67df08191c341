// int4ProductRange with the ends of the rows before carried in (groups that cannot widen them
// are passed over) against the same calls with no ends known (every group visited), on rows of
// 224 groups of 32 codes (Kimi-K2's 7168 columns), 72 MB of codes held in memory. Two data
// sets: random codes under scales spread over 1e-3..1e-2 (as `weightscope synth` writes them),
// and the worst case for passing over, one scale and codes 6..9 only, where no group's bound
// falls inside the ends found. Prints the best of 7 runs of each, and their ratio.
//   build/bench/product_range_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "core/numerics/code_extremes.h"

namespace {

constexpr uint64_t kGroups = 224, kGroupBytes = 16, kRows = 20000;

// Best of 7 passes over all rows, in seconds; `carry`: each row starts from the ends before it.
double bestPass(const std::vector<uint8_t>& q, const std::vector<float>& s, bool carry, ws::num::ProductRange& ends) {
  double best = 1e30;
  for (int run = 0; run < 7; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    ws::num::ProductRange known;
    for (uint64_t r = 0; r < kRows; ++r) {
      const auto p = ws::num::int4ProductRange(q.data() + r * kGroups * kGroupBytes, kGroups, kGroupBytes, 8, s.data() + r * kGroups, carry ? known : ws::num::ProductRange{});
      known.lo = std::min(known.lo, p.lo), known.hi = std::max(known.hi, p.hi);
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    ends = known;
  }
  return best;
}

}  // namespace

int main() {
  std::vector<uint8_t> q(kRows * kGroups * kGroupBytes);
  std::vector<float> s(kRows * kGroups);
  for (const bool worst : {false, true}) {
    std::mt19937 rng(3);
    for (auto& b : q) b = worst ? uint8_t((6 + rng() % 4) | (6 + rng() % 4) << 4) : uint8_t(rng());
    for (auto& x : s) x = worst ? 0.01f : 1e-3f + 9e-3f * float(rng() % 1000) / 1000;
    ws::num::ProductRange carried, visited;
    const double withEnds = bestPass(q, s, true, carried), everyGroup = bestPass(q, s, false, visited);
    if (carried.lo != visited.lo || carried.hi != visited.hi) {
      std::fprintf(stderr, "the two passes disagree\n");
      return 1;
    }
    std::printf("%s: ends carried %.2f ms, every group %.2f ms: %.2fx\n", worst ? "one scale, codes 6..9" : "random codes, scales 1e-3..1e-2", withEnds * 1e3,
                everyGroup * 1e3, everyGroup / withEnds);
  }
  return 0;
}
