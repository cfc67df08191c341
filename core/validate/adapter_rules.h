// LoRA adapters (docs/adapters.md): WS-A001 a factor without its partner, WS-A002 factors whose
// rank disagrees with each other or with adapter_config.json, WS-A003 (validate --base PATH)
// factors that do not fit the base model's module, WS-A004 what the adapter is.
#pragma once

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val {

// `base`: the base model to check the factors against (validate --base), or null.
void adapterRules(const Checkpoint& c, Sink& sink, const Checkpoint* base);

}  // namespace ws::val
