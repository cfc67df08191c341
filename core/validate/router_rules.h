// WS-V014: routed experts the router's correction bias makes impossible to choose. DeepSeek-V3's
// router (and every family with an e_score_correction_bias / GGUF exp_probs_b) selects experts by
// score + bias, the score a sigmoid in [0, 1]; a bias far enough below its rivals' can never be
// made up. Read whole after the value pass, as the activation scales are.
#pragma once

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val {

// Returns the bytes it read (the bias tensors), for the report's bytes read.
uint64_t routerValueRules(const Checkpoint& c, Sink& sink);

}  // namespace ws::val
