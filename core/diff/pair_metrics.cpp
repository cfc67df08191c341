#include "core/diff/pair_metrics.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace ws::diff {

PairMetrics compareMatrices(const Matrix& a, const Matrix& b) {
  PairMetrics m;
  m.shapesAgree = a.rows == b.rows && a.cols == b.cols;
  if (!m.shapesAgree) return m;
  m.count = a.values.size();
  double dot = 0, aa = 0, bb = 0, dd = 0;
  for (uint64_t i = 0; i < m.count; ++i) {
    const float x = a.values[i], y = b.values[i];
    uint32_t bx, by;
    std::memcpy(&bx, &x, 4);
    std::memcpy(&by, &y, 4);
    const bool nx = std::isnan(x), ny = std::isnan(y);
    if (bx != by && !(nx && ny)) ++m.differing;
    if (nx != ny) ++m.nanMismatch;
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    const double dx = x, dy = y, d = dx - dy;
    dot += dx * dy;
    aa += dx * dx;
    bb += dy * dy;
    dd += d * d;
    m.maxAbs = std::max(m.maxAbs, std::fabs(d));
  }
  m.identical = m.differing == 0;
  m.cosine = aa == 0 && bb == 0 ? 1.0 : (aa == 0 || bb == 0 ? 0.0 : dot / std::sqrt(aa * bb));
  m.nmse = dd == 0 ? 0.0 : (aa == 0 ? std::numeric_limits<double>::infinity() : dd / aa);
  m.relFrobenius = std::sqrt(m.nmse);
  return m;
}

}  // namespace ws::diff
