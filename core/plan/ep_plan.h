// What each expert-parallel rank holds and whether it fits: the seed runtime's residency rules
// made visible (non-expert and MTP tensors replicated, routed experts by placement, fused and
// stacked expert tensors sliced), with bytes by category, derived-buffer predictions and a
// predicted load peak against a GPU budget.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/plan/kt_offload.h"
#include "core/plan/placement.h"
#include "core/plan/residency_rules.h"

namespace ws::plan {

enum Category { RoutedExperts, SharedExperts, Attention, DenseMlp, Embeddings, LmHead, Norms, Mtp, Other, Deferred, kCategories };
const char* categoryName(int c);
Category categoryOf(const TensorRecord& t);

struct PlanOptions {
  Placement placement;
  int tp = 1;                           // attention and dense MLP weights split over tp shards
  bool skipActivationScales = false;    // *.input_scale not uploaded
  bool skipMtp = false;                 // MTP layers not uploaded
  std::vector<std::string> defer;       // globs of tensors read later by the model, not uploaded
  // --defer-ngram: n-gram embedding tables (names with "ngram" or ".embedders.") left on disk, as
  // the seed runtime does when a model's loader asks for it (LongCat's tables are 63-102 GB).
  bool deferNgramTables = false;
  // llama.cpp's --n-cpu-moe N: the routed experts of blocks 0 .. N-1 in host memory (host_offload.h).
  int nCpuMoe = 0;
  // vLLM's or SGLang's --cpu-offload-gb as its byte cap per rank (host_offload.h): that much of
  // the rank's decoder-layer weights, the first layers first, in host memory; `cpuOffloadEngine`
  // says whose ("vllm", "sglang": SGLang keeps MLA's kv_b_proj on the device).
  uint64_t cpuOffloadCap = 0;
  std::string cpuOffloadEngine = "vllm";
  // KTransformers (SGLang + kt-kernel): --kt-num-gpu-experts of each MoE layer on the GPU, every
  // routed expert in host memory (kt_offload.h).
  std::optional<KtOptions> kt;
  std::optional<uint64_t> capacity;     // GPU bytes per rank
  uint64_t reserved = 0;                // bytes kept free per rank (runtime, activations, KV cache)
  double peakMultiplier = 0;            // 0: by scheme (1.3 NVFP4, 1.5 FP8, else 1.0)
  bool deriveFusedGateUp = false, deriveTranspose = false, deriveBf16 = false;
  const ResidencyRules* rules = &defaultResidencyRules();  // --runtime: where runtimes differ
};

struct HeldTensor {
  uint32_t tensor;
  uint64_t bytes;  // the rank's share: the whole tensor, or its experts' slice of a fused one
};

struct SkippedTensor {
  uint32_t tensor;
  std::string reason;  // "deferred", "activation scale", "mtp", "host" (kept in host memory)
  uint64_t bytes = 0;  // the rank's share it would have held
};

struct RankPlan {
  int rank = 0;
  std::vector<int64_t> experts;              // logical experts held (first MoE layer's map row)
  std::array<uint64_t, kCategories> bytes{};  // resident bytes by category; Deferred: not uploaded
  uint64_t scaleBytes = 0;                    // scale-like companions, also counted in their category
  uint64_t resident = 0;                      // sum of resident categories
  uint64_t host = 0;                          // kept in host memory (--n-cpu-moe, --cpu-offload-gb), not on the GPU
  uint64_t derived = 0, transient = 0, peak = 0;
  std::optional<bool> fits;
  int64_t headroom = 0;                       // capacity - reserved - peak (negative: short by)
  std::vector<HeldTensor> held;
  std::vector<SkippedTensor> skipped;
};

struct PlanResult {
  std::vector<RankPlan> ranks;
  double imbalance = 1.0;                      // max / mean of resident bytes
  double multiplier = 1.0;
  std::vector<int> moeLayers;                  // rows of expertBytes
  std::vector<std::vector<uint64_t>> expertBytes;  // [moe layer][logical expert] bytes
  std::vector<uint64_t> numaBytes;             // KTransformers: bytes per NUMA node (a KT folder's, or kt-kernel's host slices)
  std::string hostFormula;                     // how the host bytes were worked out (KTransformers)
  std::vector<std::string> notes;
};

// Every tensor some rank would hold and none uploads (deferred, skipped), once, in tensor order.
std::vector<SkippedTensor> notUploaded(const PlanResult& r);

// Derived buffers of a routed expert weight, for the planner's prediction and the loader's build
// alike (from the scheme table, so the two cannot disagree): a transposed twin of plain float
// storage, a BF16 twin of anything quantized.
bool buildsTransposedTwin(const Checkpoint& c, const TensorRecord& t);
bool buildsBf16Twin(const Checkpoint& c, const TensorRecord& t);

// A routed-expert tensor stored with every expert along dim 0 (stacked, or fused gate_up/down):
// each rank holds the slices of its own experts, one after another.
bool slicedByExpert(const Checkpoint& c, const TensorRecord& t);
// Whether a rank holds such a tensor as its experts' slices (vLLM) or whole (the seed).
bool heldAsSlices(const Checkpoint& c, const TensorRecord& t, const PlanOptions& opt);
// The parts (offset within the tensor, bytes) a rank's resident copy of a held tensor is made of,
// in order: the whole tensor (once per EPLB replica of its expert), or the slices of the rank's
// experts in the tensor's layer (`rankExperts`, as expertsOnRank gives them).
std::vector<std::pair<uint64_t, uint64_t>> residentParts(const Checkpoint& c, const PlanOptions& opt, const TensorRecord& t, const HeldTensor& h,
                                                         const std::vector<int64_t>& rankExperts);

// The row of the placement map for `layer` (one row serves every MoE layer, or one row per MoE
// layer in order), and the logical experts rank `rank` holds in that layer, sorted (an EPLB
// replica appears once per slot): what a fused or stacked tensor of that layer is sliced by.
size_t mapRowOf(const ModelDescription& m, const Placement& p, int layer);
std::vector<int64_t> expertsOnRank(const ModelDescription& m, const Placement& p, int rank, int layer);

Result<PlanResult> planCheckpoint(const Checkpoint& c, const PlanOptions& opt);


}  // namespace ws::plan
