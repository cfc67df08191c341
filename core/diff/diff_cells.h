// A comparison grouped the way the comparison window maps it: one cell per (layer, expert) - layer
// -1 for tensors outside the layers, expert -1 for a layer's non-expert tensors - each listing its
// pairs worst first by one named metric, and the worst cell of all. One definition for the
// window's error map, the cell `--screenshot --view diff` selects and `diff --json`'s "cells" and
// "worst_cell".
#pragma once

#include <cstdint>
#include <vector>

#include "core/diff/diff.h"

namespace ws::diff {

// The metric cells are ranked by: the relative Frobenius error ||a - b|| / ||a|| of a pair (the
// measure WS-D001's --max-rel-error threshold uses).
inline constexpr const char* kRankMetric = "rel_frobenius";

// A pair's rank value: its relative Frobenius error; +infinity for a pair that could not be
// compared (a side failed to decode, or the shapes differ), worse than any number.
double rankValue(const PairResult& p);

struct DiffCell {
  int32_t layer = -1, expert = -1;
  std::vector<size_t> pairs;  // indices into DiffReport::pairs, worst first (ties in report order)
  double worst = 0;           // rankValue of pairs.front()
};

struct DiffCells {
  int32_t maxLayer = -1, maxExpert = -1;
  std::vector<DiffCell> cells;  // the non-empty cells, by layer then expert
  int64_t worstCell = -1;       // index into cells of the worst one (the first of equals), -1 if none

  const DiffCell* find(int32_t layer, int32_t expert) const;
};

DiffCells diffCells(const DiffReport& r);

}  // namespace ws::diff
