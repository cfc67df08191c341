#include "core/numerics/stats.h"

#include "core/numerics/hd.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

namespace ws::num {

Histogram Histogram::linear(double lo, double hi, int bins) {
  Histogram h;
  h.lo = lo;
  h.hi = hi > lo ? hi : lo + 1;
  h.counts.assign(size_t(bins > 0 ? bins : 1), 0);
  return h;
}

Histogram Histogram::log2(double lo, double hi, int bins) {
  Histogram h = linear(lo, hi, bins);
  h.log = true;
  return h;
}

Histogram Histogram::log2Fine() {
  Histogram h;
  h.log = h.fine = true;
  h.lo = h.hi = -double(kStatsBinOffset) / 4;  // empty: where the grid starts
  return h;
}

int Histogram::firstFineBin() const { return int(lo * 4) + kStatsBinOffset; }

void Histogram::widenFine(int first, int last) {
  if (counts.empty()) {
    counts.assign(size_t(last - first + 1), 0);
  } else {
    const int have = firstFineBin(), haveLast = have + int(counts.size()) - 1;
    first = std::min(first, have), last = std::max(last, haveLast);
    counts.insert(counts.begin(), size_t(have - first), 0);
    counts.resize(size_t(last - first + 1), 0);
  }
  lo = double(first - kStatsBinOffset) / 4;
  hi = lo + double(counts.size()) / 4;
}

void Histogram::addFineBin(int bin, uint64_t times) {
  if (!times) return;  // an empty end bin would make equal histograms differ
  const int first = firstFineBin();
  if (counts.empty() || bin < first || bin >= first + int(counts.size())) widenFine(bin, bin);
  counts[size_t(bin - firstFineBin())] += times;
}

Histogram Histogram::coarsened(int bins) const {
  size_t first = counts.size(), last = 0;
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i]) first = std::min(first, i), last = i;
  const double w = binWidth();
  if (first == counts.size()) {  // empty
    Histogram h = *this;
    h.fine = false;
    h.counts.assign(1, 0);
    h.hi = h.lo + w;
    return h;
  }
  const size_t occupied = last - first + 1, want = size_t(bins > 0 ? bins : 1);
  const size_t group = (occupied + want - 1) / want;
  Histogram h;
  h.log = log;
  h.below = below;
  h.above = above;
  h.lo = lo + w * double(first);
  const size_t n = (occupied + group - 1) / group;
  h.hi = h.lo + w * double(n * group);
  h.counts.assign(n, 0);
  for (size_t i = first; i <= last; ++i) h.counts[(i - first) / group] += counts[i];
  return h;
}

void Histogram::add(float x, uint64_t times) {
  if (std::isnan(x)) return;
  if (fine) {  // exact bin from the bits (hd.h), identical on the GPU
    const uint32_t u = hdMagnitude(x);
    if (u == 0) below += times;
    else if (hdInfMagnitude(u)) above += times;
    else addFineBin(hdQuarterOctave(x) + kStatsBinOffset, times);
    return;
  }
  double v;
  if (log) {
    if (x == 0.0f) {
      below += times;
      return;
    }
    v = std::log2(std::fabs(double(x)));
  } else {
    v = x;
  }
  if (v < lo) {
    below += times;
    return;
  }
  if (!(v < hi)) {
    // the top edge itself belongs to the last bin
    if (v == hi) counts.back() += times;
    else above += times;
    return;
  }
  size_t i = size_t((v - lo) / (hi - lo) * double(counts.size()));
  counts[std::min(i, counts.size() - 1)] += times;
}

void Histogram::addCounted(const float* v, const uint64_t* k, uint64_t m) {
  for (uint64_t i = 0; i < m; ++i) add(v[i], k[i]);
}

void Histogram::add(const float* x, uint64_t n) {
  if (!fine) {
    for (uint64_t i = 0; i < n; ++i) add(x[i]);
    return;
  }
  int first = firstFineBin();
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t u = hdMagnitude(x[i]);
    if (hdNonzeroFiniteMagnitude(u)) {
      const int bin = hdQuarterOctave(x[i]) + kStatsBinOffset;
      const size_t at = size_t(bin - first);  // below the window wraps past its end
      if (at < counts.size()) ++counts[at];
      else addFineBin(bin, 1), first = firstFineBin();  // once per bin the window grows by
    } else if (u == 0) {
      ++below;
    } else if (hdInfMagnitude(u)) {
      ++above;  // NaN is not counted, as in add(float)
    }
  }
}

void Histogram::merge(const Histogram& o) {
  below += o.below;
  above += o.above;
  if (fine && o.fine) {
    if (o.counts.empty()) return;
    const int from = o.firstFineBin();
    widenFine(from, from + int(o.counts.size()) - 1);
    const size_t at = size_t(from - firstFineBin());
    for (size_t i = 0; i < o.counts.size(); ++i) counts[at + i] += o.counts[i];
    return;
  }
  for (size_t i = 0; i < counts.size() && i < o.counts.size(); ++i) counts[i] += o.counts[i];
}

void Stats::add(const float* x, uint64_t n) {
  // Block by block: the block's counts, extremes and sum in one branch-free pass (the class of a
  // value from its bits), its M2 about its own mean in a second pass while the block is still in
  // cache, then Chan's merge into the running moments. Two passes per block are as accurate as
  // Welford's update and need no division per value (which made the value scan 1.5x slower).
  constexpr uint64_t kBlock = 4096;
  constexpr int kLanes = 8;  // independent sums, so the additions do not wait on each other
  for (uint64_t start = 0; start < n; start += kBlock) {
    const uint64_t m = std::min(kBlock, n - start);
    const float* v = x + start;
    uint64_t bnan = 0, binf = 0, bzero = 0, bsub = 0, bneg = 0, bn = 0;
    float bmin = INFINITY, bmax = -INFINITY, babs = 0.0f;
    double lane[kLanes] = {};
    for (uint64_t i = 0; i < m; ++i) {
      const uint32_t bits = hdFloatToBits(v[i]), a = hdMagnitude(v[i]);
      const bool finite = hdFiniteMagnitude(a);
      bnan += hdNanMagnitude(a);
      binf += hdInfMagnitude(a);
      bzero += a == 0;
      bsub += hdSubnormalMagnitude(a);
      bneg += finite & (a != 0) & (bits >> 31);
      bn += finite;
      const float f = finite ? v[i] : 0.0f;
      bmin = std::min(bmin, finite ? f : INFINITY);
      bmax = std::max(bmax, finite ? f : -INFINITY);
      babs = std::max(babs, std::fabs(f));
      lane[i % kLanes] += double(f);
    }
    count += m;
    nan += bnan, inf += binf, zero += bzero, subnormal += bsub, negative += bneg;
    if (!bn) continue;
    double sum = 0;
    for (double l : lane) sum += l;
    const double bmean = sum / double(bn);
    double dev[kLanes] = {};
    for (uint64_t i = 0; i < m; ++i) {
      const double d = hdFiniteMagnitude(hdMagnitude(v[i])) ? double(v[i]) - bmean : 0.0;
      dev[i % kLanes] += d * d;
    }
    double bm2 = 0;
    for (double l : dev) bm2 += l;
    absorb(bn, bmin, bmax, babs, bmean, bm2);
  }
}

void Stats::addCounted(const float* v, const uint64_t* k, uint64_t m) {
  uint64_t bn = 0;
  double bmin = INFINITY, bmax = -INFINITY, babs = 0, sum = 0;
  for (uint64_t i = 0; i < m; ++i) {
    const uint32_t bits = hdFloatToBits(v[i]), a = hdMagnitude(v[i]);
    count += k[i];
    if (hdNanMagnitude(a)) nan += k[i];
    if (hdInfMagnitude(a)) inf += k[i];
    if (!hdFiniteMagnitude(a) || !k[i]) continue;
    zero += a == 0 ? k[i] : 0;
    subnormal += hdSubnormalMagnitude(a) ? k[i] : 0;
    negative += a != 0 && (bits >> 31) ? k[i] : 0;
    bn += k[i];
    bmin = std::min(bmin, double(v[i]));
    bmax = std::max(bmax, double(v[i]));
    babs = std::max(babs, std::fabs(double(v[i])));
    sum += double(k[i]) * double(v[i]);
  }
  if (!bn) return;
  const double bmean = sum / double(bn);
  double bm2 = 0;
  for (uint64_t i = 0; i < m; ++i) {
    if (!hdFiniteMagnitude(hdMagnitude(v[i]))) continue;
    const double d = double(v[i]) - bmean;
    bm2 += double(k[i]) * d * d;
  }
  absorb(bn, bmin, bmax, babs, bmean, bm2);
}

void Stats::absorb(uint64_t n, double min, double max, double absmax, double mean, double m2) {
  if (!finite_) {
    min_ = min;
    max_ = max;
  } else {
    min_ = std::min(min_, min);
    max_ = std::max(max_, max);
  }
  absmax_ = std::max(absmax_, absmax);
  const uint64_t total = finite_ + n;
  const double delta = mean - mean_;
  mean_ += delta * double(n) / double(total);
  m2_ += m2 + delta * delta * double(finite_) * double(n) / double(total);
  finite_ = total;
}

void Stats::merge(const Stats& o) {
  count += o.count;
  nan += o.nan;
  inf += o.inf;
  zero += o.zero;
  subnormal += o.subnormal;
  negative += o.negative;
  if (!o.finite_) return;
  absmax_ = std::max(absmax_, o.absmax_);
  if (!finite_) {  // into no finite value: o's moments exactly (Chan's update would round the mean)
    min_ = o.min_, max_ = o.max_, mean_ = o.mean_, m2_ = o.m2_, finite_ = o.finite_;
    return;
  }
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  const uint64_t total = finite_ + o.finite_;
  const double delta = o.mean_ - mean_;
  mean_ += delta * double(o.finite_) / double(total);
  m2_ += o.m2_ + delta * delta * double(finite_) * double(o.finite_) / double(total);
  finite_ = total;
}

namespace {

struct ExtentRun {
  uint64_t nan = 0, inf = 0, finite = 0;
  float min = INFINITY, max = -INFINITY, absmax = 0.0f;
};

// Eight independent lanes of selects and compares (minps/maxps on AVX2), each value classified
// from its bits; a non-finite value leaves the extremes as they are.
__attribute__((target_clones("avx2", "default"))) ExtentRun extentRun(const float* x, uint64_t n) {
  constexpr int kLanes = 8;
  float mn[kLanes], mx[kLanes], ab[kLanes];
  uint32_t nan[kLanes] = {}, inf[kLanes] = {}, fin[kLanes] = {};  // n <= 2^32 a call (add's blocks)
  for (int k = 0; k < kLanes; ++k) mn[k] = INFINITY, mx[k] = -INFINITY, ab[k] = 0.0f;
  const uint64_t whole = n / kLanes * kLanes;
  auto one = [&](int k, float v) {
    const uint32_t a = hdMagnitude(v);
    const bool finite = hdFiniteMagnitude(a);
    nan[k] += hdNanMagnitude(a);
    inf[k] += hdInfMagnitude(a);
    fin[k] += finite;
    const float lo = finite ? v : INFINITY, hi = finite ? v : -INFINITY, mag = finite ? std::fabs(v) : 0.0f;
    mn[k] = lo < mn[k] ? lo : mn[k];
    mx[k] = hi > mx[k] ? hi : mx[k];
    ab[k] = mag > ab[k] ? mag : ab[k];
  };
  for (uint64_t i = 0; i < whole; i += kLanes)
    for (int k = 0; k < kLanes; ++k) one(k, x[i + uint64_t(k)]);
  for (uint64_t i = whole; i < n; ++i) one(0, x[i]);
  ExtentRun r;
  for (int k = 0; k < kLanes; ++k) {
    r.nan += nan[k], r.inf += inf[k], r.finite += fin[k];
    r.min = std::min(r.min, mn[k]);
    r.max = std::max(r.max, mx[k]);
    r.absmax = std::max(r.absmax, ab[k]);
  }
  return r;
}

}  // namespace

void Extent::add(const float* x, uint64_t n) {
  constexpr uint64_t kBlock = uint64_t(1) << 20;  // the lanes count in 32 bits
  for (uint64_t start = 0; start < n; start += kBlock) {
    const uint64_t m = std::min(kBlock, n - start);
    const ExtentRun r = extentRun(x + start, m);
    count += m;
    nan += r.nan, inf += r.inf, finite += r.finite;
    min_ = std::min(min_, r.min);
    max_ = std::max(max_, r.max);
    absmax_ = std::max(absmax_, r.absmax);
  }
}

void Extent::addFinite(uint64_t n, float lo, float hi) {
  if (!n) return;
  count += n, finite += n;
  min_ = std::min(min_, lo);
  max_ = std::max(max_, hi);
  absmax_ = std::max(absmax_, std::max(std::fabs(lo), std::fabs(hi)));
}

void Extent::merge(const Extent& o) {
  count += o.count, nan += o.nan, inf += o.inf, finite += o.finite;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
  absmax_ = std::max(absmax_, o.absmax_);
}

double Stats::stddev() const { return finite_ ? std::sqrt(m2_ / double(finite_)) : 0; }

nlohmann::json statsJson(const Stats& s) {
  return {{"count", s.count}, {"finite", s.finite()}, {"min", s.min()}, {"max", s.max()}, {"mean", s.mean()}, {"std", s.stddev()},
          {"absmax", s.absmax()}, {"nan", s.nan}, {"inf", s.inf}, {"zero", s.zero}, {"subnormal", s.subnormal},
          {"negative", s.negative}};
}

nlohmann::json histogramJson(const Histogram& h) {
  nlohmann::json edges = nlohmann::json::array();
  for (size_t i = 0; i <= h.counts.size(); ++i) edges.push_back(h.edge(i));
  return {{"scale", h.log ? "log2" : "linear"}, {"edges", edges}, {"counts", h.counts}, {"below", h.below}, {"above", h.above}};
}

}  // namespace ws::num
