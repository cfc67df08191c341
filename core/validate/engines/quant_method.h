// The quantization path a serving engine takes for a checkpoint: the key of its row in
// quantKernelTable() (core/validate/engines/engine_tables.h), resolved as the engine resolves it
// from the quantization config (the engines follow the config, not the tensors).
#pragma once

#include <string>
#include <vector>

#include "core/model/model_description.h"

namespace ws::val::engines {

// Every path the checkpoint's config sends its layers down (compressed-tensors may declare several
// groups); empty for an unquantized checkpoint and for a method no table row covers (`unknown`
// then names it). AWQ and GPTQ resolve to their Marlin forms where the engine converts them
// (vLLM 0.11.0 / SGLang 0.5.23 override_quantization_method: 4-bit AWQ with zero points, symmetric
// 4/8-bit GPTQ, group -1/32/64/128), and AWQ experts add "awq-moe" (vLLM runs them through Marlin).
std::vector<std::string> quantPathsOf(const ModelDescription& m, std::string* unknown = nullptr);

}  // namespace ws::val::engines
