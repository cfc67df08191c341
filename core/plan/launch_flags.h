// plan --emit vllm|sglang|llama.cpp|kt: the engine's launch command for the planned layout, each flag
// as the engine spells it at the release the engine rules were read from (core/validate/runtimes:
// vLLM 0.11.0, SGLang 0.5.23) - the plan's EP N and TP t become vLLM's --tensor-parallel-size t
// --data-parallel-size N/t --enable-expert-parallel and SGLang's --tp-size N --ep-size N
// --attn-dp-size N/t. What the engine cannot take from the plan is a note, not a flag.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/plan/kt_offload.h"
#include "core/plan/placement.h"
#include "core/util/error.h"

namespace ws::plan {

struct LaunchRequest {
  std::string engine;            // vllm, sglang, llama.cpp
  std::string modelPath;         // what the engine is pointed at
  bool gguf = false;             // a GGUF file (llama.cpp's format)
  int ep = 1, tp = 1;            // the plan's layout
  PlacementKind placement = PlacementKind::Linear;
  int64_t maxModelLen = -1;      // -1: the engine's default (the model's)
  std::string kvCacheDtype;      // "" or "auto": the engine's default
  double gpuMemoryUtilization = 0;  // vLLM's --gpu-memory-utilization; 0: not given
  int64_t maxNumSeqs = -1;
  int64_t maxNumBatchedTokens = -1;  // vLLM's --max-num-batched-tokens, SGLang's --chunked-prefill-size; -1: not given
  double memFractionStatic = 0;      // SGLang's --mem-fraction-static; 0: not given (SGLang works it out)
  int nCpuMoe = 0;                 // llama.cpp's --n-cpu-moe (host_offload.h)
  double cpuOffloadGb = 0;         // vLLM's --cpu-offload-gb (host_offload.h)
  std::optional<KtOptions> kt;     // KTransformers' split (kt_offload.h): --emit kt
};

struct LaunchCommand {
  std::vector<std::string> argv;   // the command, one word each
  std::vector<std::string> notes;  // what the plan holds that the command cannot say
  std::string shell() const;       // argv quoted for a POSIX shell
};

// Usage error for an engine that has no launch line here, or a model it cannot take.
Result<LaunchCommand> launchCommand(const LaunchRequest& r);

}  // namespace ws::plan
