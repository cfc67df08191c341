// The cross-rank check of a distributed load: every routed expert held by exactly the ranks the
// placement says (EPLB replicas included), the shared and dense weights by every rank, nothing
// loaded twice, nothing missing. Each rank counts what its own load put on its device; rank 0
// compares every rank's count with what its own plan of the same checkpoint says that rank holds,
// so a rank that loaded by other options (another placement, a --defer of its own) or dropped a
// tensor is named with the experts it lacks or holds twice.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/load/weight_store.h"
#include "core/model/checkpoint.h"
#include "core/plan/ep_plan.h"

namespace ws::load {

// The logical expert of each part of a routed expert tensor (ResidentTensor::experts): `parts`
// as plan::residentParts gives them. Empty for a tensor that is not a routed expert's.
std::vector<int64_t> expertsOfParts(const Checkpoint& c, const TensorRecord& t, const std::vector<std::pair<uint64_t, uint64_t>>& parts);

// What one rank holds, in the units the check compares: parts of routed expert tensors per
// (layer, logical expert), and every other tensor by name with its copies.
struct Holdings {
  std::map<std::pair<int, int64_t>, uint64_t> expertParts;
  std::map<std::string, uint64_t> tensors;
};

// Counted from what a load put on its device.
Holdings heldBy(const Checkpoint& c, const WeightStore& store);
// What a rank holds by the plan (`rp`, one rank of a plan of `c` made with `opt`).
Holdings expectedOf(const Checkpoint& c, const plan::PlanOptions& opt, const plan::RankPlan& rp);
nlohmann::json holdingsJson(const Holdings& h);
Holdings holdingsFromJson(const nlohmann::json& j);
// The logical experts of which the rank holds any part, ascending.
std::vector<int64_t> expertIdsOf(const Holdings& h);

struct ExpertGap {
  int rank = 0, layer = -1;
  int64_t expert = -1;
  uint64_t expected = 0, held = 0;  // parts of its tensors
};
struct TensorGap {
  int rank = 0;
  std::string tensor;
  uint64_t expected = 0, held = 0;  // copies
};
struct Coverage {
  std::vector<ExpertGap> missing, duplicated;           // held < expected, held > expected
  std::vector<TensorGap> tensorsMissing, tensorsDuplicated;
  std::vector<std::pair<int, int64_t>> unplaced;         // (layer, expert) the placement gives no rank
  std::vector<int> unchecked;                            // ranks whose load failed: nothing to count
  bool ok() const {
    return missing.empty() && duplicated.empty() && tensorsMissing.empty() && tensorsDuplicated.empty() && unplaced.empty() && unchecked.empty();
  }
};

// expected[r] and held[r] for every rank r (none: its load failed, so it is left unchecked);
// `placement` for the experts no rank is given.
Coverage checkCoverage(const Checkpoint& c, const plan::Placement& placement, const std::vector<Holdings>& expected,
                       const std::vector<std::optional<Holdings>>& held);
nlohmann::json coverageJson(const Coverage& v);

}  // namespace ws::load
