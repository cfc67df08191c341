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
//
// SGLang's --cpu-offload-gb G (0.5.23): the field cpu_offload_gb, a whole number of GB
// (arg_groups/fields/exec_.py:1068-1071; the flag is the field's name, arg_utils.py
// _field_to_cli_name), capped at int(G * 1024**3) bytes (utils/offloader.py create_offloader).
// make_layers (utils/common.py) hands each layer to OffloaderV1.maybe_offload_to_cpu, vLLM's
// algorithm - whole parameters to pinned host memory while the total is under the cap - except
// that the parameters of a module holding MLA's kv_b_proj with w_kc / w_vc (DeepSeek's attention)
// stay resident (_get_resident_parameter_ids: post_load_weights derives w_kc / w_vc from them).
#pragma once

#include <cstdint>
#include <string>

#include "core/model/tensor_record.h"

namespace ws::plan {

// Whether llama.cpp's --n-cpu-moe `n` keeps the tensor named `name` in host memory.
bool keptOnHostByNCpuMoe(const std::string& name, int n);

// vLLM's and SGLang's cap for --cpu-offload-gb `gib`: int(gib * 1024**3).
uint64_t cpuOffloadCap(double gib);

// Whether `engine`'s ("vllm", "sglang") --cpu-offload-gb can move the tensor: a decoder layer's
// weight, not an MTP layer's (the draft model's layers are not made by the main model's
// make_layers); under SGLang not MLA's kv_b_proj.
bool offloadableByCpuOffload(const TensorRecord& t, const std::string& engine);

}  // namespace ws::plan
