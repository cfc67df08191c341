// `plan --engine-log`: the plan's prediction held to what a serving engine printed at start-up,
// figure by figure, each difference either inside the engine's own printing precision or named
// (docs/plan.md, "Predicted against an engine's log").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/model_description.h"
#include "core/plan/engine_log.h"
#include "core/plan/kv_cache.h"

namespace ws::plan {

enum class LogVerdict {
  Agrees,          // the engine printed what the prediction prints
  WithinRounding,  // differs only inside the precision the engine printed its input with
  Differs,         // a KV-cache figure the prediction gets wrong, or one below its bound: plan exits 1
  Residual,        // an estimate (weights, free memory): the difference shown and what it holds
  NotPredicted,    // the inputs are missing (no weights in PATH, no --gpu-mem), said why
  AboveBound,      // a figure predicted as a lower bound (llama.cpp's compute buffers) that holds
};
const char* logVerdictName(LogVerdict v);

struct LogRow {
  std::string quantity, worker;
  std::string predicted, logged, difference;
  LogVerdict verdict = LogVerdict::NotPredicted;
  std::string explanation;
};

struct LogCheckInputs {
  KvOptions kv;                            // the log's settings, the command line's where it states none
  std::optional<uint64_t> weightsPerRank;  // rank 0's resident bytes as planned; none: PATH holds no weights
  std::optional<uint64_t> requested;       // vLLM's requested memory: device total x utilization (--gpu-mem)
  std::vector<Reserve> reserves;           // weightscope's runtime reserves at these settings
  bool gguf = false;                       // PATH is a GGUF: a llama.cpp log is held to its cache
  int64_t nVocab = -1;                     // the tokens llama.cpp counts: a GGUF's token list, else vocab_size
};

// Fails naming the config key the KV cache needs when the model cannot say.
Result<std::vector<LogRow>> checkEngineLog(const ModelDescription& m, const EngineLog& log, const LogCheckInputs& in);

// The KV options a log ran with: its own settings over `fallback` (the command line's).
KvOptions kvOptionsOfLog(const EngineLog& log, KvOptions fallback);

// What the caller knows beside the log (plan --engine-log's flags, the EP Ranks tab's controls).
struct LogCheckRequest {
  KvOptions fallback;                      // settings where the log states none
  std::optional<uint64_t> weightsPerRank;  // rank 0's resident bytes as planned
  std::optional<uint64_t> deviceTotal;     // the GPU's total memory (a --gpu-mem device or size)
  double utilization = -1;                 // given: over the log's; else the log's, else vLLM's 0.9
  uint64_t cudaGraphs = 0;
  bool gguf = false;
  int64_t nVocab = -1;  // a GGUF's token list length; -1: the model's vocab_size
};
// The inputs for checkEngineLog: the log's settings over the request's, vLLM's requested memory
// (total x gpu_memory_utilization, 0.9 unless said: vLLM 0.11.0 config/cache.py; no CUDA-context
// deduction, gpu_worker.py) and weightscope's reserves at those settings.
LogCheckInputs logCheckInputs(const ModelDescription& m, const EngineLog& log, const LogCheckRequest& r);

}  // namespace ws::plan
