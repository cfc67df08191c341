#include "core/diff/diff_cells.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ws::diff {

double rankValue(const PairResult& p) {
  if (!p.error.empty() || !p.metrics.shapesAgree) return INFINITY;
  return std::isnan(p.metrics.relFrobenius) ? INFINITY : p.metrics.relFrobenius;
}

const DiffCell* DiffCells::find(int32_t layer, int32_t expert) const {
  auto it = std::lower_bound(cells.begin(), cells.end(), std::pair(layer, expert),
                             [](const DiffCell& c, const std::pair<int32_t, int32_t>& k) { return std::pair(c.layer, c.expert) < k; });
  return it != cells.end() && it->layer == layer && it->expert == expert ? &*it : nullptr;
}

DiffCells diffCells(const DiffReport& r) {
  DiffCells out;
  std::map<std::pair<int32_t, int32_t>, std::vector<size_t>> byCell;
  for (size_t i = 0; i < r.pairs.size(); ++i) {
    const Pair& p = r.pairs[i].pair;
    byCell[{p.layer, p.expert}].push_back(i);
    out.maxLayer = std::max(out.maxLayer, p.layer);
    out.maxExpert = std::max(out.maxExpert, p.expert);
  }
  for (auto& [key, pairs] : byCell) {
    std::stable_sort(pairs.begin(), pairs.end(), [&](size_t x, size_t y) { return rankValue(r.pairs[x]) > rankValue(r.pairs[y]); });
    DiffCell c;
    c.layer = key.first;
    c.expert = key.second;
    c.worst = rankValue(r.pairs[pairs.front()]);
    c.pairs = std::move(pairs);
    if (out.worstCell < 0 || c.worst > out.cells[size_t(out.worstCell)].worst) out.worstCell = int64_t(out.cells.size());
    out.cells.push_back(std::move(c));
  }
  return out;
}

}  // namespace ws::diff
