// How far one decoded matrix moved from another: cosine similarity, NMSE, max absolute error,
// relative Frobenius error, bit identity. A is the reference (NMSE and the relative error divide
// by A's energy). Sums are in double, so the figures do not depend on the order of summation
// beyond double rounding.
#pragma once

#include <cstdint>

#include "core/diff/unit_matrix.h"

namespace ws::diff {

struct PairMetrics {
  bool shapesAgree = false;
  uint64_t count = 0;          // elements compared
  bool identical = false;      // every element has the same bits (NaN equals NaN)
  uint64_t differing = 0;      // elements whose bits differ
  uint64_t nanMismatch = 0;    // NaN on exactly one side
  double cosine = 0;           // 1 when both are all zero
  double nmse = 0;             // sum (a-b)^2 / sum a^2; 0 when identical, inf when A is zero and B not
  double relFrobenius = 0;     // sqrt(nmse)
  double maxAbs = 0;           // max |a - b| over elements finite on both sides
};

PairMetrics compareMatrices(const Matrix& a, const Matrix& b);

}  // namespace ws::diff
