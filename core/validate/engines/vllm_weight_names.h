// WS-E009: the checkpoint's tensor names against what vLLM's weight loader for its model class
// consumes (core/validate/engines/vllm_loaders.cpp): a tensor the loader cannot place stops the
// load (KeyError, ValueError, TypeError), and a parameter no tensor fills is refused
// (unquantized) or left uninitialised.
#pragma once

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val::engines {

void vllmWeightNameRules(const Checkpoint& c, Sink& sink);

}  // namespace ws::val::engines
