// Pairs every weight with its companion tensors into logical tensors and names the quant scheme
// that ties them together (formats.md 3-6, 10; every GGUF block type).
#pragma once

#include <string>
#include <vector>

#include "core/model/checkpoint.h"

namespace ws {

// logicalNames[i] is the logical name of ckpt.tensors[i] (from parseTensorName).
void assignQuantSchemes(Checkpoint& ckpt, const std::vector<std::string>& logicalNames);

// The schemes the checkpoint's own quantization config declares (compressed-tensors config
// groups, FP8 weight_block_size, ModelOpt quant_algo, gpt-oss mxfp4, MLX); empty when it declares
// none or one this table does not know, so the schemes were inferred from the tensors.
std::vector<Scheme> declaredSchemes(const QuantConfig& q);

// True for components that hold scale-like data (scales, global/input scales, zero points).
bool isScaleComponent(Component c);

}  // namespace ws
