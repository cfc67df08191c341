// GGUF KV pairs -> ModelDescription ({arch}.block_count, expert_count, ...).
#pragma once

#include "core/formats/gguf.h"
#include "core/model/model_description.h"

namespace ws {

// `path` names the file in errors (a count that is not plausible: GgufBadValue at the key).
ModelDescription modelFromGgufKv(const GgufFile& g, const std::string& path);

}  // namespace ws
