// Does it fit: a rank's weights, the runtime reserves and the KV cache against a GPU budget, and
// the search for the fewest GPUs (EP, then attention TP within it, as vLLM's EP = TP x DP) whose
// every rank holds its weights and N concurrent requests of the context length. `plan` and the EP
// Ranks tab both call it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/plan/ep_plan.h"
#include "core/plan/kv_cache.h"

namespace ws::plan {

// The KV cache and the runtime reserves against what a rank's weights leave of the budget.
struct KvBudget {
  KvOptions options;
  std::optional<KvCache> cache;
  std::string why;  // when not estimated: the missing key, in words
  std::vector<Reserve> reserves;
  // A GGUF: the `llama_kv_cache: size = ...` lines llama.cpp prints for -c max-model-len and -np
  // max-num-seqs (1 when not given), one per cache part (core/plan/llama_cpp_cache.h).
  std::vector<std::string> llamaCppLog;
  uint64_t reserveBytes() const;
  // Free bytes of a rank once its weights, derived buffers, --reserve and the runtime reserves are in.
  KvFit fit(const PlanOptions& opt, const RankPlan& rp) const;
};
KvBudget kvBudgetFor(const ModelDescription& m, const KvOptions& o, uint64_t cudaGraphs);

struct FitRow {
  int ep = 1, tp = 1;
  bool weightsFit = false;
  double minRankConcurrency = 0;  // the worst rank's
  double concurrency = 0;         // served by the deployment: the worst rank's, once per TP group
  bool fits = false;
};
struct FitResult {
  std::vector<FitRow> tried;  // every layout tried, smallest first
  std::optional<FitRow> answer;
};

// From EP 1 doubling up to the expert count (64 for a dense model), TP 1 doubling up to
// min(EP, 8) within each: the first layout that fits `target` requests. `base` carries the
// capacity, reserve, skips and derives; `spec` builds each EP size's placement; `kv` is the KV
// options (its tp is set per layout).
Result<FitResult> fitDeployment(const Checkpoint& c, const PlanOptions& base, const PlacementSpec& spec, const KvOptions& kv, uint64_t cudaGraphs, double target);

}  // namespace ws::plan
