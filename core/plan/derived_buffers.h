// The derived buffers a load builds from what one EP rank holds, as one list both the planner
// (their bytes: the prediction) and the loader (what it builds, and from which bytes) use, so the
// two cannot disagree:
// - fused-gate-up: gate then up of each expert, whatever the layout - per-expert tensors, stacked
//   (GGUF) or fused tensors sliced per expert, KTransformers NUMA parts paired part by part;
//   a checkpoint whose gate_up is already fused gets nothing;
// - transpose: a transposed twin of plain float expert weights (BF16/F16/F32);
// - bf16: a BF16 copy of each quantized expert weight, once per logical tensor (its NUMA parts
//   together), of the rank's experts only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/plan/ep_plan.h"

namespace ws::plan {

enum class DerivedKind { FusedGateUp, Transpose, Bf16 };
const char* derivedKindName(DerivedKind k);  // "fused-gate-up", "transpose", "bf16"

// Bytes [offset, offset + bytes) of the rank's resident copy of a held tensor (a sliced tensor's
// copy holds the rank's experts one after another).
struct DerivedSource {
  uint32_t tensor = 0;
  uint64_t offset = 0, bytes = 0;
};

struct DerivedSpec {
  std::string name;  // unique within a rank
  DerivedKind kind = DerivedKind::FusedGateUp;
  std::vector<DerivedSource> sources;  // fused-gate-up: gate, up; transpose: the matrices; bf16: the weight
  uint64_t bytes = 0;
  // transpose: `mats` row-major [rows, cols] matrices of elemBytes-byte elements
  uint64_t mats = 0, rows = 0, cols = 0;
  uint32_t elemBytes = 0;
  // bf16: the logical tensor, and the (first row, rows) ranges of its decoder this rank holds
  uint32_t logical = 0;
  std::vector<std::pair<uint64_t, uint64_t>> rowRanges;
};

struct DerivedPlan {
  std::vector<DerivedSpec> buffers;
  std::vector<std::string> notes;  // what was asked for and cannot be built, and why
  uint64_t bytes() const;
};

DerivedPlan derivedBuffers(const Checkpoint& c, const PlanOptions& opt, const RankPlan& rp);

}  // namespace ws::plan
