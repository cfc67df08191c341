// Weights an engine keeps in host memory instead of on the GPU.
//
// llama.cpp's --n-cpu-moe N (common/arg.cpp at 0c1e57098) adds, for each block i < N, the tensor
// override "blk\.i\.ffn_(up|down|gate|gate_up)_(ch|)exps" (common/common.h LLM_FFN_EXPS_REGEX,
// llm_ffn_block_regex) to the CPU buffer type; the loader holds each tensor's name to every
// override with std::regex_search (src/llama-model-loader.cpp, "check overrides").
//
// vLLM's --cpu-offload-gb G (0.11.0): "the space in GiB to offload to CPU, per GPU"
// (config/cache.py CacheConfig.cpu_offload_gb); each worker caps it at int(G * 1024**3) bytes
// (v1/worker/gpu_model_runner.py, set_cpu_offload_max_bytes). make_layers
// (model_executor/models/utils.py) wraps each decoder layer of the worker's pipeline stage, in
// layer order, in maybe_offload_to_cpu, which moves the layer's parameters one whole parameter at
// a time to pinned host memory (read through UVA) while the running total is under the cap.
// Embeddings, the final norm, lm_head and a separate MTP draft model are not made by make_layers
// and stay on the GPU.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/tensor_record.h"

namespace ws::plan {

// Whether llama.cpp's --n-cpu-moe `n` keeps the tensor named `name` in host memory.
bool keptOnHostByNCpuMoe(const std::string& name, int n);

// vLLM's cap for --cpu-offload-gb `gib`: int(gib * 1024**3).
uint64_t vllmCpuOffloadCap(double gib);

// Whether vLLM's --cpu-offload-gb can move the tensor: a decoder layer's weight, not an MTP
// layer's (the draft model's layers are not made by the main model's make_layers).
bool offloadableByVllmCpuOffload(const TensorRecord& t);

}  // namespace ws::plan
