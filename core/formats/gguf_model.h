// GGUF KV pairs -> ModelDescription ({arch}.block_count, expert_count, ...).
#pragma once

#include "core/formats/gguf.h"
#include "core/model/model_description.h"

namespace ws {

ModelDescription modelFromGgufKv(const GgufFile& g);

}  // namespace ws
