#include "core/plan/llama_cpp_cache.h"

#include <algorithm>
#include <cstdio>

namespace ws::plan {

namespace {

uint64_t pad(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// ggml_row_size: bytes of `n` values of a cache type (ggml-common.h block sizes; all per 32).
uint64_t rowBytes(const std::string& type, uint64_t n) {
  static const struct {
    const char* name;
    uint64_t bytesPer32;
  } kTypes[] = {{"f32", 128}, {"f16", 64}, {"bf16", 64}, {"q8_0", 34}, {"q4_0", 18}, {"q4_1", 20}, {"q5_0", 22}, {"q5_1", 24}, {"iq4_nl", 18}};
  for (const auto& t : kTypes)
    if (type == t.name) {
      if (t.bytesPer32 != 128 && t.bytesPer32 != 64 && n % 32)
        fail(ErrorCode::Usage, "llama.cpp's " + type + " cache needs rows of whole 32-value blocks; this layer's are " + std::to_string(n));
      return n * t.bytesPer32 / 32;
    }
  fail(ErrorCode::Usage, "llama.cpp's cache types are f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1 (common/arg.cpp), not '" + type + "'");
}

std::string mib(uint64_t b) {
  char s[32];
  std::snprintf(s, sizeof s, "%7.2f", double(float(b) / (1024.0f * 1024.0f)));  // llama.cpp casts to float
  return s;
}

}  // namespace

const std::vector<LlamaCppSwaPattern>& llamaCppSwaPatterns() {
  // src/models/<file>.cpp load_arch_hparams at 0c1e57098.
  static const std::vector<LlamaCppSwaPattern> t = {
      {"gpt-oss", 2, false, false, "openai-moe.cpp: load_swa_pattern(ml, 2), sliding_window required"},
      {"gemma2", 2, false, false, "gemma2.cpp: n_swa = 4096 unless the GGUF says, load_swa_pattern(ml, 2)"},
      {"gemma3", 6, false, true, "gemma3.cpp: load_swa_pattern(ml, 6) when sliding_window > 0"},
      {"cohere2", 4, false, false, "cohere2.cpp: load_swa_pattern(ml, 4), sliding_window required"},
      {"olmo2", 4, false, true, "olmo2.cpp: load_swa_pattern(ml, 4) when sliding_window > 0"},
  };
  return t;
}

std::vector<bool> llamaCppSlidingLayers(const ModelDescription& m) {
  const auto& a = m.attention;
  std::vector<bool> out(size_t(std::max<int64_t>(0, m.numLayers)), false);
  const LlamaCppSwaPattern* p = nullptr;
  for (const auto& row : llamaCppSwaPatterns())
    if (row.arch == m.architecture) p = &row;
  if (!p || (p->needsWindow && a.slidingWindow <= 0)) return out;
  // The GGUF's own attention.sliding_window_pattern: a per-layer array wins, then a scalar n.
  if (!a.layerTypes.empty() && a.layerTypes.size() == out.size()) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = a.layerTypes[i] == "sliding_attention";
    return out;
  }
  const int64_t n = a.slidingWindowPattern >= 0 ? a.slidingWindowPattern : p->n;
  for (size_t il = 0; il < out.size(); ++il)
    out[il] = n == 0 || (p->denseFirst ? int64_t(il) % n != 0 : int64_t(il) % n < n - 1);
  return out;
}

std::string LlamaCppCachePart::logLine(const LlamaCppCacheOptions& o) const {
  char s[256];
  std::snprintf(s, sizeof s, "llama_kv_cache: size = %s MiB (%6llu cells, %3d layers, %2u/%u seqs), K (%s): %s MiB, V (%s): %s MiB", mib(kBytes + vBytes).c_str(),
                (unsigned long long)cells, layers, unsigned(o.nSeq), streams, o.typeK.c_str(), mib(kBytes).c_str(), o.typeV.c_str(), mib(vBytes).c_str());
  return s;
}

Result<std::vector<LlamaCppCachePart>> llamaCppCache(const ModelDescription& m, const LlamaCppCacheOptions& o) {
  return capture([&]() -> std::vector<LlamaCppCachePart> {
    const auto& a = m.attention;
    if (m.numLayers <= 0) fail(ErrorCode::Usage, "the GGUF has no block_count, which llama.cpp's cache needs");
    if (o.nCtx <= 0 || o.nSeq <= 0 || o.nUbatch <= 0) fail(ErrorCode::Usage, "llama.cpp's -c, -np and -ub must be positive");
    const bool mla = a.kvLoraRank > 0;
    // K: key_length x head_count_kv a cell; MLA one latent of kv_lora_rank + rope dims, no V.
    const uint64_t kWidth = mla ? uint64_t(a.kvLoraRank + std::max<int64_t>(0, a.qkRopeHeadDim)) : uint64_t(std::max<int64_t>(0, a.headDim * a.numKvHeads));
    const uint64_t vWidth = mla ? 0 : uint64_t(std::max<int64_t>(0, a.vHeadDim * a.numKvHeads));
    if (!kWidth) fail(ErrorCode::Usage, "the GGUF has no attention.head_count_kv or key_length, which llama.cpp's cache needs");
    const uint32_t streams = o.unified ? 1 : uint32_t(o.nSeq);
    const uint64_t nCtx = pad(uint64_t(o.nCtx), 256);
    const uint64_t nCtxSeq = o.unified ? nCtx : pad(nCtx / uint64_t(o.nSeq), 256);
    const std::vector<bool> sliding = llamaCppSlidingLayers(m);
    const int slidingLayers = int(std::count(sliding.begin(), sliding.end(), true));
    auto part = [&](std::string name, uint64_t cells, int layers) {
      LlamaCppCachePart p;
      p.name = std::move(name), p.cells = cells, p.layers = layers, p.streams = streams;
      p.kBytes = rowBytes(o.typeK, kWidth) * cells * streams * uint64_t(layers);
      p.vBytes = vWidth ? rowBytes(o.typeV, vWidth) * cells * streams * uint64_t(layers) : 0;
      return p;
    };
    if (!slidingLayers) return {part("", nCtxSeq, int(m.numLayers))};
    const int64_t window = a.slidingWindow > 0 ? a.slidingWindow : m.architecture == "gemma2" ? 4096 : 0;
    if (window <= 0) fail(ErrorCode::Usage, "the GGUF has no attention.sliding_window, which llama.cpp's sliding layers need");
    const uint64_t swaCells = o.swaFull ? nCtxSeq : pad(std::min<uint64_t>(nCtxSeq, uint64_t(window) * (o.unified ? uint64_t(o.nSeq) : 1) + uint64_t(o.nUbatch)), 256);
    return {part("non-SWA", nCtxSeq, int(m.numLayers) - slidingLayers), part("SWA", swaCells, slidingLayers)};
  });
}

}  // namespace ws::plan
