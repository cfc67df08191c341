// A lower bound on llama.cpp's compute buffers, from the tensors its worst-case graph must hold
// at once. llama.cpp sizes the buffers by reserving that graph through ggml's allocator
// (src/llama-context.cpp sched_reserve at 0c1e57098): a prompt-processing ubatch of
// n_tokens = min(n_ctx, n_ubatch) tokens (rounded up to a multiple of n_seq_max, graph_reserve)
// over the whole cache, with n_outputs = min(n_tokens, n_batch) outputs. Two moments of that
// graph are certain:
//   - attention: the KQ mask input, n_kv x n_tokens in F16 with flash attention, else F32
//     (src/llama-graph.cpp build_attn_inp_kq_mask; n_kv is the cache's cells a stream in a
//     reserve, init_full), and without flash attention the KQ product beside it, n_kv x
//     n_tokens x n_head F32 (build_attn_mha's ggml_mul_mat(k, q));
//   - output: the logits n_vocab x n_outputs F32 and the normed hidden state they are computed
//     from, n_embd x n_outputs F32.
// Each moment's tensors sit in one device's buffer, so the largest buffer holds at least the
// larger moment. The rest (FFN and MoE intermediates, other live inputs, the allocator's
// alignment) is not modelled: it is what an engine log shows above the bound.
#pragma once

#include <cstdint>
#include <string>

#include "core/model/model_description.h"
#include "core/plan/llama_cpp_cache.h"
#include "core/util/error.h"

namespace ws::plan {

struct LlamaCppComputeOptions {
  LlamaCppCacheOptions cache;
  int64_t nBatch = 2048;   // -b
  bool flashAttn = true;   // llama-server's -fa auto turns it on where the device runs it (resolve_fused_ops)
};

struct LlamaCppComputeBound {
  uint64_t bytes = 0;      // the larger moment
  uint64_t attentionBytes = 0, outputBytes = 0;
  std::string formula;
};

// A usage error naming what the model lacks (the vocabulary or hidden size).
Result<LlamaCppComputeBound> llamaCppComputeBound(const ModelDescription& m, const LlamaCppComputeOptions& o);

}  // namespace ws::plan
