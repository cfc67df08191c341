// Structure recognition over a catalog: classify every tensor, complete the model description
// from the tensors where the config is silent, and decide the layout of fused expert tensors.
#pragma once

#include "core/model/checkpoint.h"

namespace ws {

void recognizeStructure(Checkpoint& ckpt);

}  // namespace ws
