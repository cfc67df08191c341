// Pairs every weight with its companion tensors into logical tensors and names the quant scheme
// that ties them together (formats.md 3-6, 10; every GGUF block type).
#pragma once

#include <string>
#include <vector>

#include "core/model/checkpoint.h"

namespace ws {

// logicalNames[i] is the logical name of ckpt.tensors[i] (from parseTensorName).
void assignQuantSchemes(Checkpoint& ckpt, const std::vector<std::string>& logicalNames);

// True for components that hold scale-like data (scales, global/input scales, zero points).
bool isScaleComponent(Component c);

}  // namespace ws
