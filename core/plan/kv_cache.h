// The KV cache a rank keeps per token and per sequence, by layer kind, with the serving engines'
// own formulas (docs/plan.md, "KV cache"), and how many tokens and sequences fit in what the
// weights and the runtime reserves leave of a GPU budget.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model_description.h"
#include "core/plan/sglang_memory.h"
#include "core/util/error.h"

namespace ws::plan {

struct KvOptions {
  int64_t maxModelLen = -1;        // tokens per request; -1: the model's max_position_embeddings
  std::string dtype = "auto";      // auto bf16 fp16 fp32 fp8 fp8_e4m3 fp8_e5m2 fp8_ds_mla; GGUF: f16 bf16 f32 q8_0 q4_0
  int64_t blockSize = 16;          // tokens per cache block (vLLM --block-size)
  int64_t maxNumBatchedTokens = 8192;  // vLLM --max-num-batched-tokens
  int tp = 1;                      // attention tensor parallelism: KV heads split over it
  bool attentionDp = false;        // attention data parallel: every rank keeps whole heads
  int speculative = 0;             // draft (MTP) layers run per token: their cache counts too
  bool llamaCpp = false;           // a GGUF model: llama.cpp's cache (n_ctx x n_layer x (k + v)), no TP
  int64_t maxNumSeqs = -1;         // vLLM --max-num-seqs: the scheduler runs at most this many at once; -1: no cap
  int64_t defaultMaxNumSeqs = 1024;  // what vLLM takes without --max-num-seqs (vllm_profile.h vllmServeDefaults)
  bool sglang = false;             // --runtime sglang: SGLang's own pools where it sizes them apart (DeepSeek-V4),
                                   // and its headroom instead of vLLM's reserves
  SglangLaunch sglangLaunch;       // what SGLang's static share is worked out from (sglang_memory.h)
};

struct KvLayers {
  int full = 0, mla = 0, sliding = 0, linear = 0;
  int shared = 0;  // reuse an earlier layer's cache (Gemma 3n / 4): none of their own
};

struct KvCache {
  KvLayers layers;
  std::string dtype;                  // resolved: "bf16", "fp8_ds_mla", "q8_0" ...
  uint64_t bytesPerToken = 0;         // full and MLA layers: what grows with the context, per rank
  uint64_t slidingBytesPerToken = 0;  // all sliding layers, per token inside the window
  int64_t window = 0;
  uint64_t slidingBytesPerSeq = 0;    // the window as vLLM caps it, for one sequence of maxModelLen
  uint64_t stateBytesPerSeq = 0;      // linear-attention state, fixed per sequence
  uint64_t indexerBytesPerToken = 0;  // DeepSeek-V3.2's indexer keys, all layers (in bytesPerToken too)
  // DeepSeek-V4 in llama.cpp: the compressed caches (CSA, HCA, indexer keys) of one sequence of
  // maxModelLen as llama.cpp pads them, and their growth a token (ceil(row / ratio) summed; in
  // bytesPerToken too, which is what tokens-fit divides by).
  int compressedLayers = 0;
  uint64_t compressedBytesPerSeq = 0, compressedBytesPerToken = 0;
  // SGLang's pools sized as a whole - a fractional charge a token of the full pool and what is
  // charged once: DeepSeek-V4's (sglang_dsv4_pool.h; bytesPerToken holds the charge rounded up, the
  // ratio-128 compressor states are fixed) and a hybrid-SWA model's (sglang_swa_pool.h: full layers'
  // bytes + 0.8 x the sliding layers').
  double poolBytesPerToken = 0;
  uint64_t poolFixedBytes = 0;
  // SGLang's linear-attention state pool (Qwen3-Next): one slot's conv and SSM states over every
  // linear layer, and the slots a running request holds; the pool takes 0.9 / 1.9 of the budget
  // in whole slots, the full-attention layers' tokens the rest (kv_cache.cpp sglangLinearState).
  uint64_t stateSlotBytes = 0;
  int slotsPerRequest = 0;
  int64_t blockSize = 16;             // tokens a cache block: --block-size, or what the engine forces
  int64_t maxModelLen = 0;
  std::vector<std::string> formulas;  // how each figure was computed, in words and numbers
};

// Fails naming the config key a layer kind needs when it is missing, never a silent zero.
Result<KvCache> kvCachePerRank(const ModelDescription& m, const KvOptions& o);

// Runtime buffers besides weights and cache, each a named line with its formula: vLLM's for a
// safetensors model, llama.cpp's own for a GGUF (o.llamaCpp), and under o.sglang the headroom
// SGLang's static share leaves of the free memory before the weights load (sglang_memory.h).
struct Reserve {
  std::string name, formula;
  uint64_t bytes = 0;      // on each GPU
  uint64_t hostBytes = 0;  // in host memory instead (llama.cpp's output buffer)
};
std::vector<Reserve> runtimeReserves(const ModelDescription& m, const KvOptions& o, uint64_t cudaGraphs);

struct KvFit {
  int64_t freeBytes = 0;        // budget - --reserve - resident weights - derived - runtime reserves (negative: short)
  uint64_t tokensFit = 0;       // free / bytesPerToken, rounded down to whole blocks
  double maxConcurrency = 0;    // free / (maxModelLen x bytesPerToken + sliding, compressed and state per sequence)
  double servedConcurrency = 0; // the same, capped at --max-num-seqs: what one engine actually runs
  int64_t stateSlots = -1;      // SGLang's max_mamba_cache_size (a state pool); -1: none
  int64_t maxRunning = -1;      // SGLang's max_running_requests as its state pool caps it; -1: not capped
};
KvFit fitKvCache(const KvCache& kv, int64_t freeBytes, int64_t blockSize, int64_t maxNumSeqs = -1);

}  // namespace ws::plan
