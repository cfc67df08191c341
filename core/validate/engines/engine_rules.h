// The serving engines' load-time refusals for one deployment (validate / plan --runtime
// vllm|sglang): the architecture registry (WS-E001, WS-E002), the parallel layout (WS-E003 to
// WS-E006), the quantization kernels on the GPU (WS-E007, fallbacks WS-E008), the tensor names
// the engine's weight loader consumes (WS-E009), and the verdict.
#pragma once

#include <string>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/validate/engines/engine_layout.h"
#include "core/validate/sink.h"

namespace ws::val::engines {

// True for the runtimes these rules model ("vllm", "sglang").
bool isServingEngine(const std::string& runtime);

void engineRules(const Checkpoint& c, const std::string& engine, const EngineLayout& l, Sink& sink);

// The engine rules alone on a checkpoint, outside a validate run (plan --runtime, the EP Ranks
// tab): the findings, errors first, and their verdict. The layout must be one the engine can form
// (layoutProblem) and its GPU resolved (resolveGpu).
struct EngineCheck {
  std::vector<Finding> findings;
  std::string verdict;
  bool refuses() const;
};
EngineCheck checkEngine(const Checkpoint& c, const std::string& engine, const EngineLayout& l);

// "vLLM 0.11.0, TP 8, EP 8 on H200-141GB (SM 9.0): refuses: 2 reasons (WS-E005, WS-E007); ..." -
// or "loads broken: 1 reason (WS-E009)" where the engine would load it with tensors skipped or
// parameters uninitialised.
// from the findings of a run with engineRules.
std::string verdictLine(const std::string& engine, const EngineLayout& l, const std::vector<Finding>& findings);

}  // namespace ws::val::engines
