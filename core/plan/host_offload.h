// Weights an engine keeps in host memory instead of on the GPU. llama.cpp's --n-cpu-moe N (common/
// arg.cpp at 0c1e57098) adds, for each block i < N, the tensor override
// "blk\.i\.ffn_(up|down|gate|gate_up)_(ch|)exps" (common/common.h LLM_FFN_EXPS_REGEX,
// llm_ffn_block_regex) to the CPU buffer type; the loader holds each tensor's name to every
// override with std::regex_search (src/llama-model-loader.cpp, "check overrides").
#pragma once

#include <string>

namespace ws::plan {

// Whether llama.cpp's --n-cpu-moe `n` keeps the tensor named `name` in host memory.
bool keptOnHostByNCpuMoe(const std::string& name, int n);

}  // namespace ws::plan
