// What vLLM 0.11.0's start-up profile run allocates besides the weights, and the `vllm serve`
// defaults that size it. vLLM measures the run's peak and keeps it out of the KV cache
// (v1/worker/gpu_worker.py determine_available_memory); these lines are the tensors its code
// must hold at that peak - lower bounds, each with its source. The rest of the forward pass's
// activations and the non-torch memory (cuBLAS workspaces, NCCL buffers) are measured by vLLM, not
// predicted here: an engine log shows them as the residual of its available memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model_description.h"
#include "core/plan/kv_cache.h"

namespace ws::plan {

// engine/arg_utils.py EngineArgs._set_default_args, the API server's row: on a device of 70 GiB
// or more (torch's total) whose name has no "a100", 8192 batched tokens and 1024 sequences; on
// any other, 2048 and 256. The sequences are capped at the tokens.
struct VllmServeDefaults {
  int64_t maxNumBatchedTokens = 8192, maxNumSeqs = 1024;
};
VllmServeDefaults vllmServeDefaults(uint64_t deviceTotalBytes, std::string_view deviceName);

// Moments of the profile run, each with the tensors certainly live then: the dummy sampler's
// logits (gpu_model_runner.py _dummy_sampler_run), a dense model's MLP (activation.py SiluAndMul),
// a MoE model's fused experts (fused_moe.py fused_experts_impl). They come one after another, the
// forward's freed before the sampler runs, so the run's peak is at least the largest - not their sum.
struct VllmProfileMoment {
  std::string name, formula;
  uint64_t bytes = 0;
};
std::vector<VllmProfileMoment> vllmProfileMoments(const ModelDescription& m, const KvOptions& o);

// The reserve line `profile_run`: the largest moment, every moment named in its formula; none
// when the model says too little for any (no vocabulary size).
std::vector<Reserve> vllmProfileReserves(const ModelDescription& m, const KvOptions& o);

}  // namespace ws::plan
