// What a TP / DP / EP split requires of the model in vLLM and SGLang (layout_rules.cpp names the
// source of each check): heads and linear shards (WS-E003), the experts' split (WS-E004), FP8 blocks (WS-E005),
// GPTQ / AWQ groups (WS-E006) and the slower kernels a shard falls back to (WS-E008).
#pragma once

#include <string>
#include <vector>

#include "core/model/model_description.h"
#include "core/validate/engines/engine_layout.h"
#include "core/validate/sink.h"

namespace ws::val::engines {

// The FP8 block [block_n, block_k]: weight_block_size, or a compressed-tensors block group's
// block_structure; empty when the checkpoint is not block-quantized.
std::vector<int64_t> fp8BlockOf(const ModelDescription& m);

// `quantPaths`: quantPathsOf(m), the engine's quantization paths.
void layoutRules(const std::string& engine, const ModelDescription& m, const EngineLayout& l, const std::vector<std::string>& quantPaths, Sink& sink);

}  // namespace ws::val::engines
