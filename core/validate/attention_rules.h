// WS-S008: the attention projections against the head counts the config (or the GGUF's
// attention.* keys) declares - a config whose num_key_value_heads or head_dim does not match the
// tensors makes every runtime size its KV cache and reshape its heads wrongly.
#pragma once

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val {

void attentionRules(const Checkpoint& c, Sink& sink);

}  // namespace ws::val
