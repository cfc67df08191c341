// A serving engine's start-up log, read for the figures `plan --engine-log` holds its prediction
// to (docs/plan.md, "Predicted against an engine's log"): what vLLM, SGLang and llama.cpp print
// about the weights they loaded and the KV cache they allocated, and the settings they ran with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/util/error.h"

namespace ws::plan {

// One printed figure: its value, how many decimals the engine printed (what it rounds to), the
// worker that printed it ("Worker_TP3_EP3", "TP0"; empty for the engine core) and its line.
struct LoggedFigure {
  double value = 0;
  int decimals = 0;
  std::string worker;
  int line = 0;  // 1-based, in the file as written (before hard-wrapped lines are joined)
};

struct EngineLog {
  std::string path;
  std::string engine;   // "vllm" | "sglang" | "llama.cpp" | "" (not recognised)
  std::string version;  // as printed, when printed
  // Settings as the log states them; -1 or empty where it does not.
  int64_t maxModelLen = -1;
  int tp = -1, pp = -1;
  int64_t blockSize = -1;  // vLLM --block-size; SGLang page_size
  int64_t maxNumBatchedTokens = -1;  // vLLM's scheduler budget ("Chunked prefill is enabled with ...")
  int64_t maxNumSeqs = -1;           // vLLM's max_num_seqs where its arguments print it
  std::string kvCacheDtype;
  double gpuMemoryUtilization = -1;  // vLLM gpu_memory_utilization; SGLang mem_fraction_static
  // vLLM: "Model loading took X GiB"; SGLang: "Load weight end. ... mem usage=X GB" (GiB).
  std::vector<LoggedFigure> weightsGib;
  std::vector<LoggedFigure> availableKvGib;  // vLLM "Available KV cache memory: X GiB", one per worker
  // vLLM's itemized memory line (gpu_worker.py, INFO in 0.10.x, DEBUG in 0.11.0): "Free memory on
  // device (F/T GiB) on startup. Desired GPU memory utilization is (u, R GiB). Actual usage is W GiB
  // for weight, A GiB for peak activation, N GiB for non-torch memory, and G GiB for CUDAGraph memory."
  std::vector<LoggedFigure> deviceTotalGib, requestedGib, peakActivationGib, nonTorchGib, cudaGraphGib;
  std::vector<LoggedFigure> kvTokens;        // vLLM "GPU KV cache size: N tokens"; SGLang "#tokens: N"
  std::vector<LoggedFigure> maxConcurrency;  // vLLM "Maximum concurrency for L tokens per request: Xx"
  int64_t concurrencyLen = -1;               // its L
  std::vector<LoggedFigure> kSizeGib, vSizeGib;  // SGLang "K size: X GB, V size: X GB" (GB = 2^30 there)
  // SGLang: the free memory around the weights' load, "Load weight begin. avail mem=X GB" and "Load
  // weight end. ... avail mem=X GB" (GB = 2^30): what its KV pool is sized from.
  std::vector<LoggedFigure> freeBeforeWeightsGib, freeAfterWeightsGib;
  // llama.cpp: llama_context's settings (n_ctx is maxModelLen), its cache lines as printed
  // ("llama_kv_cache: size = ..."), and the buffers it reports in MiB.
  int64_t nSeqMax = -1;
  int64_t nRsSeq = -1;  // llama.cpp's n_rs_seq (DeepSeek-V4's compressor state planes)
  int64_t nUbatch = -1;
  int64_t nBatch = -1;
  int flashAttn = -1;  // 1 on, 0 off, -1 not printed or left at auto
  int kvUnified = -1;  // -1: not printed
  bool swaFull = false;
  std::string typeK, typeV;
  std::vector<std::string> llamaKvLines;
  std::vector<LoggedFigure> modelBufferMib, computeBufferMib, outputBufferMib;
};

// Reads and parses FILE; fails naming it when it cannot be read or no engine's lines are in it (or
// two engines' are).
Result<EngineLog> readEngineLog(const std::string& path);
// Parses log text. Lines a terminal hard-wrapped (a long line, the next opening no record) are
// joined first; lines starting with "#" are comments.
EngineLog parseEngineLog(const std::string& text, const std::string& path);

}  // namespace ws::plan
