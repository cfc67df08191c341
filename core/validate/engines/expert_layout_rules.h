// WS-E010: the shapes a serving engine's weight loader takes checkpoint tensors in, where the
// names alone pass (WS-E009). Fused expert tensors (experts.gate_up_proj / experts.down_proj, one
// tensor for all experts) are transposed unconditionally by the loaders that read them, from the
// layout transformers 4.x stored them in: a checkpoint written in transformers 5's layout fails
// the copy into the FusedMoE, or - square per expert - loads scrambled. The expert count the
// engine builds from config.json against the router's rows. And the per-expert scales a MoE
// quantization method creates before loading and only the checkpoint's own fill (ModelOpt NVFP4's
// input scales).
#pragma once

#include <string>
#include <string_view>

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val::engines {

// The words of a finding whose engine loads scales left as allocated, or at its default, where
// the checkpoint has none (loadsBroken).
inline constexpr std::string_view kLoadsUninitialisedScales = "loads with those scales uninitialised", kLoadsDefaultScales = "loads with those scales at 1.0";

void expertLayoutRules(const Checkpoint& c, const std::string& engine, Sink& sink);

}  // namespace ws::val::engines
