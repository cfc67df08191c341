// SGLang 0.5.23's split of a GPU: the static share (weights and KV cache) it works out itself when
// --mem-fraction-static is not given, and the headroom that share leaves for activations and CUDA
// graphs. Read in the 0.5.23 wheel:
//   srt/arg_groups/memory_hook.py handle_gpu_memory_settings: chunked_prefill_size and the decode
//     graph's max_bs by GPU memory tier, then reserved_mem = 512 + max(chunked_prefill_size, 2048)
//     x 1.5 + tp x pp / 8 x 1024 + reserve_for_graph_mb, floored at 10 GiB above 60 GiB, and
//     mem_fraction_static = round((gpu_mem - reserved_mem) / gpu_mem, 3), all in MiB;
//   srt/arg_groups/cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes and
//     srt/model_executor/cuda_graph_config.py (prefill graphs "breakable" on CUDA by default);
//   srt/utils/common.py get_device_memory_capacity: gpu_mem is nvidia-smi's memory.total (MiB);
//   srt/mem_cache/kv_cache_configurator.py _profile_available_bytes: the KV pool gets the free
//     memory after the weights load less pre_model_load_memory x (1 - mem_fraction_static), where
//     pre_model_load_memory is the free memory measured before they load - so the headroom is that
//     free memory x (1 - mem_fraction_static), whatever the weights take.
// Modelled for a CUDA launch without pipeline stages, DeepEP, speculative decoding, KV sharding,
// post-capture sizing (SGLANG_ENABLE_POST_CAPTURE_KV_SIZING, off by default), disaggregation or
// explicit CUDA-graph flags. A config with a vision tower is refused: SGLang lowers its share by its
// own multimodal architecture list and breakable-graph allowlist (model_config.py), not read here.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/model_description.h"
#include "core/util/error.h"

namespace ws::plan {

// What the share is worked out from: the launch's settings as SGLang's flags name them.
struct SglangLaunch {
  double gpuMemMiB = 0;             // get_device_memory_capacity (nvidia-smi memory.total); 0: unknown
  int tpSize = 1;                   // --tp-size: the whole group with expert parallelism (EP N: tp N)
  int attnDpSize = 1;               // --attn-dp-size (DP attention when above 1)
  int64_t chunkedPrefillSize = -1;  // --chunked-prefill-size; -1: SGLang's default for the GPU memory
  int64_t maxRunningRequests = -1;  // --max-running-requests; -1: not given
  double memFractionStatic = -1;    // --mem-fraction-static; -1: SGLang works it out
  std::string modelPath;            // --model-path: "llama-2" in it caps the prefill graphs at 4096 tokens
  uint64_t preLoadFreeBytes = 0;    // the free memory before the weights load (the GPU budget); 0: none given
};

struct SglangStaticShare {
  double memFractionStatic = 0;
  bool given = false;  // --mem-fraction-static, not worked out
  int64_t chunkedPrefillSize = 0, decodeMaxBs = 0, prefillMaxBs = 0, prefillGraphs = 0;
  double reservedMiB = 0;
  std::string formula;  // every term, in words and numbers
};

// A usage error naming what SGLang decides by that is not read here (a vision tower, no GPU memory).
Result<SglangStaticShare> sglangStaticShare(const ModelDescription& m, const SglangLaunch& launch);

// A share as the plan prints it: three decimals, what SGLang rounds its own to.
std::string sglangShareText(double share);

// The batch sizes SGLang captures prefill graphs at up to max_bs tokens (their count is what the
// reserve charges, 8 MiB each).
int64_t sglangPrefillGraphCount(int64_t maxBs);

}  // namespace ws::plan
