// vLLM's DeepSeek-V2/V3 layers under TP with FP8 blocks (WS-E005): the MLA projections and the
// shared experts, whose shards the config-level block rules (layout_rules.cpp) do not see. Each
// shard's width is read from the stored weight, so it holds whatever the config says.
#pragma once

#include "core/model/checkpoint.h"
#include "core/validate/engines/engine_layout.h"
#include "core/validate/sink.h"

namespace ws::val::engines {

void vllmDeepseekShardRules(const Checkpoint& c, const EngineLayout& l, Sink& sink);

}  // namespace ws::val::engines
