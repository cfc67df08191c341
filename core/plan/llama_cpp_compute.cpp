#include "core/plan/llama_cpp_compute.h"

#include <algorithm>

#include "core/util/format_bytes.h"

namespace ws::plan {

Result<LlamaCppComputeBound> llamaCppComputeBound(const ModelDescription& m, const LlamaCppComputeOptions& o) {
  if (m.vocabSize <= 0 || m.hiddenSize <= 0)
    return Error{ErrorCode::Usage, std::string("llama.cpp's compute buffers: the model's ") + (m.vocabSize <= 0 ? "vocabulary" : "hidden") + " size is unknown", {}, std::nullopt, {}};
  auto parts = llamaCppCache(m, o.cache);
  if (!parts) return parts.error();
  const uint64_t nCtx = (uint64_t(o.cache.nCtx) + 255) / 256 * 256, seqs = uint64_t(o.cache.nSeq);
  const uint64_t tokens = (std::min<uint64_t>(nCtx, uint64_t(std::min(o.nBatch, o.cache.nUbatch))) + seqs - 1) / seqs * seqs;
  const uint64_t outputs = std::min<uint64_t>(tokens, uint64_t(o.nBatch));
  LlamaCppComputeBound b;
  b.outputBytes = outputs * (uint64_t(m.vocabSize) + uint64_t(m.hiddenSize)) * 4;
  b.formula = "output: " + std::to_string(outputs) + " outputs x (n_vocab " + std::to_string(m.vocabSize) + " + n_embd " + std::to_string(m.hiddenSize) +
              ") x 4 B = " + formatBytes(b.outputBytes);
  // The attention caches' cells a stream (DeepSeek-V4's raw and compressed caches are masked
  // differently, llama-graph.cpp dsv4_build_raw_kq_mask: not bounded here).
  if (!llamaCppCompressedCaches(m)) {
    const uint64_t heads = m.attention.numHeads > 0 ? uint64_t(m.attention.numHeads) : 0;
    for (const LlamaCppCachePart& p : parts.value()) {
      if (p.state || (!p.name.empty() && p.name != "non-SWA" && p.name != "SWA")) continue;
      const uint64_t mask = p.cells * tokens * (o.flashAttn ? 2 : 4);
      const uint64_t kq = o.flashAttn ? 0 : p.cells * tokens * heads * 4;
      if (mask + kq <= b.attentionBytes) continue;
      b.attentionBytes = mask + kq;
      b.formula += std::string("; attention") + (p.name.empty() ? "" : " (" + p.name + ")") + ": mask " + std::to_string(p.cells) + " cells x " + std::to_string(tokens) +
                   " tokens x " + (o.flashAttn ? "2 B (F16, flash attention)" : "4 B") +
                   (o.flashAttn ? "" : " + KQ x n_head " + std::to_string(heads) + " x 4 B (no flash attention)") + " = " + formatBytes(b.attentionBytes);
    }
  }
  b.bytes = std::max(b.outputBytes, b.attentionBytes);
  b.formula = "at least " + formatBytes(b.bytes) + " in the largest buffer (" + b.formula + "; llama.cpp 0c1e57098 sched_reserve at n_ubatch " +
              std::to_string(o.cache.nUbatch) + ", n_batch " + std::to_string(o.nBatch) + ")";
  return b;
}

}  // namespace ws::plan
