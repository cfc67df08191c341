#include "core/numerics/stats.h"

#include "core/numerics/hd.h"

#include <algorithm>
#include <cmath>

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
  Histogram h = log2(-152.0, 132.0, 284 * 4);
  h.fine = true;
  return h;
}

Histogram Histogram::coarsened(int bins) const {
  size_t first = counts.size(), last = 0;
  for (size_t i = 0; i < counts.size(); ++i)
    if (counts[i]) first = std::min(first, i), last = i;
  if (first > last) {  // empty
    Histogram h = *this;
    h.counts.assign(1, 0);
    h.hi = h.lo + (hi - lo) / double(counts.size());
    return h;
  }
  const size_t occupied = last - first + 1, want = size_t(bins > 0 ? bins : 1);
  const size_t group = (occupied + want - 1) / want;
  Histogram h;
  h.log = log;
  h.below = below;
  h.above = above;
  const double w = (hi - lo) / double(counts.size());
  h.lo = lo + w * double(first);
  const size_t n = (occupied + group - 1) / group;
  h.hi = h.lo + w * double(n * group);
  h.counts.assign(n, 0);
  for (size_t i = first; i <= last; ++i) h.counts[(i - first) / group] += counts[i];
  return h;
}

void Histogram::add(float x) {
  if (std::isnan(x)) return;
  if (fine) {  // exact bin from the bits (hd.h), identical on the GPU
    if (x == 0.0f) {
      ++below;
      return;
    }
    if (std::isinf(x)) {
      ++above;
      return;
    }
    counts[size_t(hdQuarterOctave(x) + 152 * 4)]++;
    return;
  }
  double v;
  if (log) {
    if (x == 0.0f) {
      ++below;
      return;
    }
    v = std::log2(std::fabs(double(x)));
  } else {
    v = x;
  }
  if (v < lo) { ++below; return; }
  if (!(v < hi)) {
    // the top edge itself belongs to the last bin
    if (v == hi) ++counts.back();
    else ++above;
    return;
  }
  size_t i = size_t((v - lo) / (hi - lo) * double(counts.size()));
  counts[std::min(i, counts.size() - 1)]++;
}

void Histogram::merge(const Histogram& o) {
  for (size_t i = 0; i < counts.size() && i < o.counts.size(); ++i) counts[i] += o.counts[i];
  below += o.below;
  above += o.above;
}

void Stats::add(const float* x, uint64_t n) {
  // Chunked: the block's own mean and M2, then Chan's parallel merge (exact enough, stable).
  uint64_t bn = 0;
  double bmean = 0, bm2 = 0, bmin = INFINITY, bmax = -INFINITY, babs = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const float v = x[i];
    if (std::isnan(v)) { ++nan; continue; }
    if (std::isinf(v)) { ++inf; continue; }
    if (v < 0.0f) ++negative;
    if (v == 0.0f) ++zero;
    else if (std::fpclassify(v) == FP_SUBNORMAL) ++subnormal;
    const double d = v;
    ++bn;
    const double delta = d - bmean;
    bmean += delta / double(bn);
    bm2 += delta * (d - bmean);
    bmin = std::min(bmin, d);
    bmax = std::max(bmax, d);
    babs = std::max(babs, std::fabs(d));
  }
  count += n;
  if (!bn) return;
  if (!finite_) {
    min_ = bmin;
    max_ = bmax;
  } else {
    min_ = std::min(min_, bmin);
    max_ = std::max(max_, bmax);
  }
  absmax_ = std::max(absmax_, babs);
  const uint64_t total = finite_ + bn;
  const double delta = bmean - mean_;
  mean_ += delta * double(bn) / double(total);
  m2_ += bm2 + delta * delta * double(finite_) * double(bn) / double(total);
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
  if (!finite_) {
    min_ = o.min_;
    max_ = o.max_;
  } else {
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
  }
  absmax_ = std::max(absmax_, o.absmax_);
  const uint64_t total = finite_ + o.finite_;
  const double delta = o.mean_ - mean_;
  mean_ += delta * double(o.finite_) / double(total);
  m2_ += o.m2_ + delta * delta * double(finite_) * double(o.finite_) / double(total);
  finite_ = total;
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
