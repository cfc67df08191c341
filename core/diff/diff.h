// weightscope diff: every matched unit of two checkpoints decoded on both sides and compared,
// tensor by tensor (memory bounded by the largest pair in flight, one per worker thread).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/diff/diff_match.h"
#include "core/diff/metadata_diff.h"
#include "core/diff/pair_metrics.h"
#include "core/model/checkpoint.h"
#include "core/numerics/numerics_mode.h"

namespace ws::diff {

struct DiffOptions {
  std::string tensors;   // glob over the canonical key and both logical names; empty: all
  unsigned threads = 0;  // 0: all cores
  bool useDevice = true;  // dequantize on the GPU when kernels/ registered one (num::deviceDequant)
  num::Numerics numerics = num::Numerics::Reference;  // whose arithmetic both sides follow
  // Called after each pair with (done, total); returning false cancels.
  std::function<bool(uint64_t, uint64_t)> progress;
};

struct PairResult {
  Pair pair;
  std::string nameA, nameB, schemeA, schemeB;
  std::vector<uint64_t> shapeA, shapeB;  // of the compared matrices, [out, in]
  PairMetrics metrics;
  double saturatedA = -1, saturatedB = -1;  // share of extreme codes; -1 when not defined
  std::string error;                        // a side could not be decoded
  std::vector<std::string> undone;          // converter transformations undone first ("B: RoPE ...")
};

struct DiffReport {
  std::string pathA, pathB;
  std::vector<PairResult> pairs;
  std::vector<std::string> onlyA, onlyB;
  uint64_t shapeMismatches = 0, errors = 0;
  std::string numerics = "reference";  // numerics_mode.h
  std::string device = "cpu";  // where the tensors were dequantized: "cpu" or "cuda:0"
  std::vector<MetadataDifference> metadata;  // besides the tensors (metadata_diff.h)
};

// Throws nothing: decode failures land in PairResult::error. Returns Error(Usage) when cancelled.
Result<DiffReport> diffCheckpoints(const Checkpoint& a, const Checkpoint& b, const DiffOptions& opt);

}  // namespace ws::diff
