// WS-E010: the shapes a serving engine's weight loader takes checkpoint tensors in, where the
// names alone pass (WS-E009). Fused expert tensors (experts.gate_up_proj / experts.down_proj, one
// tensor for all experts) are transposed unconditionally by the loaders that read them, from the
// layout transformers 4.x stored them in: a checkpoint written in transformers 5's layout fails
// the copy into the FusedMoE, or - square per expert - loads scrambled. And the expert count the
// engine builds from config.json against the router's rows.
#pragma once

#include <string>

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val::engines {

void expertLayoutRules(const Checkpoint& c, const std::string& engine, Sink& sink);

}  // namespace ws::val::engines
