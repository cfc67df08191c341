// Streaming statistics over float values: one pass gives min, max, mean, standard deviation,
// absmax, counts of NaN, Inf, zero and subnormal values, and a log2-magnitude histogram. A linear
// histogram needs its range up front: give it (one pass) or take it from a first pass.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ws::num {

struct Histogram {
  bool log = false;        // log: bins over log2|x| (sign ignored); linear: bins over x
  double lo = 0, hi = 0;   // range of the bin edges (log2 units when log)
  std::vector<uint64_t> counts;
  // log2Fine(): quarter-octave bins placed exactly from the float's bits. `counts` holds only the
  // bins from the first occupied one to the last (none while empty) and grows as values arrive:
  // the scale pass keeps one such histogram per tensor to the end, ~70k on Kimi-K2, and the whole
  // grid (1,136 bins, 9 KB) of each came to ~630 MB. So two fine histograms of the same values
  // have the same `lo`, `hi` and `counts`.
  bool fine = false;
  uint64_t below = 0, above = 0;  // values outside [lo, hi) (zeros, for a log histogram, count below)

  static Histogram linear(double lo, double hi, int bins);
  static Histogram log2(double lo, double hi, int bins);
  // Quarter-octave log2 bins over every finite float magnitude: exact counts in one pass, later
  // merged into coarser bins with coarsened().
  static Histogram log2Fine();
  // The occupied range merged into at most `bins` bins (each a union of fine bins, so exact).
  Histogram coarsened(int bins) const;
  void add(float x, uint64_t times = 1);
  // Each of the m values v[i], k[i] times: a tally's distinct values (scale_stats.cpp).
  void addCounted(const float* v, const uint64_t* k, uint64_t m);
  // The same counts as add() of each value in turn; a fine histogram takes them without a call
  // or an unpredictable branch per value (the scale pass adds ~130M over Kimi-K2's group scales).
  void add(const float* x, uint64_t n);
  // A fine histogram: `times` nonzero finite values in grid bin `bin` (hdQuarterOctave(x) +
  // kStatsBinOffset, 0 <= bin < kStatsBins), as the GPU's and the emulated kernels count them.
  void addFineBin(int bin, uint64_t times);
  void merge(const Histogram& o);  // same edges; fine histograms of any occupied ranges
  double binWidth() const { return fine ? 0.25 : (hi - lo) / double(counts.size()); }
  double edge(size_t i) const { return fine ? lo + 0.25 * double(i) : lo + (hi - lo) * double(i) / double(counts.size()); }

 private:
  int firstFineBin() const;  // the grid bin of counts[0]
  void widenFine(int first, int last);  // to hold grid bins first..last as well
};

class Stats {
 public:
  void add(const float* x, uint64_t n);
  // Each of the m values v[i], k[i] times: the counts and extremes exactly as add() of them all,
  // the moments from the weighted sums (within rounding of add()'s).
  void addCounted(const float* v, const uint64_t* k, uint64_t m);
  void merge(const Stats& o);

  uint64_t count = 0, nan = 0, inf = 0, zero = 0, subnormal = 0, negative = 0;
  double min() const { return finite_ ? min_ : 0; }
  double max() const { return finite_ ? max_ : 0; }
  double absmax() const { return absmax_; }
  double mean() const { return finite_ ? mean_ : 0; }
  double stddev() const;  // population standard deviation of the finite values
  uint64_t finite() const { return finite_; }
  double m2() const { return m2_; }  // sum of squared deviations from the mean (finite values)
  // Counts from `counts`, moments computed elsewhere (the GPU): m2 is the sum of squared
  // deviations from the mean.
  static Stats fromMoments(const Stats& counts, uint64_t finite, double min, double max, double absmax, double mean, double m2) {
    Stats s = counts;
    s.finite_ = finite, s.min_ = min, s.max_ = max, s.absmax_ = absmax, s.mean_ = mean, s.m2_ = m2;
    return s;
  }

 private:
  // Merges a batch of n finite values (their extremes, mean and M2 about that mean) into the
  // running moments (Chan).
  void absorb(uint64_t n, double min, double max, double absmax, double mean, double m2);
  uint64_t finite_ = 0;
  double min_ = 0, max_ = 0, absmax_ = 0, mean_ = 0, m2_ = 0;  // Welford / Chan
};

// What the value rules ask of a tensor's values - how many, how many are NaN or infinite, and the
// extremes of the finite ones - without Stats' moments and finer counts, in a pass the compiler
// vectorizes (AVX2 where the CPU has it): Stats::add was 91% of validate --values (perf), the
// decoders 7%. Equal to the same fields of Stats over the same values (tst_stats).
struct Extent {
  uint64_t count = 0, nan = 0, inf = 0, finite = 0;
  void add(const float* x, uint64_t n);
  // n finite values whose least is lo and greatest hi (lo <= hi, both finite), known without
  // visiting them: a decoder tells them from the extremes of its codes (RowDecoder::extent).
  void addFinite(uint64_t n, float lo, float hi);
  void merge(const Extent& o);
  // Of the finite values; 0 when there are none, as Stats says.
  double min() const { return finite ? double(min_) : 0; }
  double max() const { return finite ? double(max_) : 0; }
  double absmax() const { return double(absmax_); }
  // The same ends as floats, INFINITY and -INFINITY while there are none: a decoder passes over
  // codes that cannot widen them (int4ProductRange).
  float least() const { return min_; }
  float greatest() const { return max_; }

 private:
  float min_ = INFINITY, max_ = -INFINITY, absmax_ = 0.0f;
};

nlohmann::json statsJson(const Stats& s);
nlohmann::json histogramJson(const Histogram& h);

}  // namespace ws::num
