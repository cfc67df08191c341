// WS-E009: the checkpoint's tensor names against what the engine's weight loader for its model
// class consumes (core/validate/engines/weight_loaders.cpp, vLLM and SGLang): a tensor the loader
// cannot place stops the load (KeyError, ValueError, TypeError) or is skipped, and a parameter no
// tensor fills is refused (vLLM, unquantized) or left uninitialised.
#pragma once

#include <string>

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val::engines {

void weightNameRules(const Checkpoint& c, const std::string& engine, Sink& sink);

// True for a WS-E009 / WS-E010 finding of a load that goes through broken - tensors the loader
// skips, parameters or scales it leaves uninitialised - rather than one the engine refuses.
bool loadsBroken(const Finding& f);

}  // namespace ws::val::engines
