#include "core/plan/llama_cpp_cache.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace ws::plan {

namespace {

uint64_t pad(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// A cache type's block (ggml-common.h): the values a block holds (1 for the float types) and the
// bytes 32 values take.
struct CacheBlock {
  uint64_t values, bytesPer32;
};
CacheBlock cacheBlock(const std::string& type) {
  static const struct {
    const char* name;
    CacheBlock block;
  } kTypes[] = {{"f32", {1, 128}},  {"f16", {1, 64}},   {"bf16", {1, 64}},  {"q8_0", {32, 34}},   {"q4_0", {32, 18}},
                {"q4_1", {32, 20}}, {"q5_0", {32, 22}}, {"q5_1", {32, 24}}, {"iq4_nl", {32, 18}}};
  for (const auto& t : kTypes)
    if (type == t.name) return t.block;
  fail(ErrorCode::Usage, "llama.cpp's cache types are f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1 (common/arg.cpp), not '" + type + "'");
}

// ggml_row_size: bytes of `n` values of a cache type.
uint64_t rowBytes(const std::string& type, uint64_t n) {
  const CacheBlock b = cacheBlock(type);
  if (n % b.values) fail(ErrorCode::Usage, "llama.cpp's " + type + " cache needs rows of whole 32-value blocks; this layer's are " + std::to_string(n));
  return n * b.bytesPer32 / 32;
}

std::string mib(uint64_t b) {
  char s[32];
  std::snprintf(s, sizeof s, "%7.2f", double(float(b) / (1024.0f * 1024.0f)));  // llama.cpp casts to float
  return s;
}

// DeepSeek-V4's caches (llama_kv_cache_dsv4's constructor at 0c1e57098): each stream one sequence's
// whatever --kv-unified says (its unified_raw and unified_compressed are false).
std::vector<LlamaCppCachePart> deepseekV4Cache(const ModelDescription& m, const LlamaCppCacheOptions& o, const std::vector<LlamaCppLayerKv>& layers,
                                               uint64_t nCtxSeq) {
  const auto& a = m.attention;
  if (a.compressRatios.size() < layers.size())
    fail(ErrorCode::Usage, "the GGUF's deepseek4.attention.compress_ratios has " + std::to_string(a.compressRatios.size()) + " entries for " +
                               std::to_string(layers.size()) + " blocks: llama.cpp refuses it (deepseek4.cpp: compress_ratios is shorter than block_count)");
  if (a.slidingWindow <= 0) fail(ErrorCode::Usage, "the GGUF has no deepseek4.attention.sliding_window, which llama.cpp requires (deepseek4.cpp)");
  if (a.indexHeadDim <= 0) fail(ErrorCode::Usage, "the GGUF has no deepseek4.attention.indexer.key_length, which llama.cpp requires (deepseek4.cpp)");
  const uint32_t streams = uint32_t(o.nSeq);
  // One K-only cache (dsv4_make_k_only: V is not stored) over the layers `takes` admits, `width`
  // values a cell each.
  auto cache = [&](std::string name, uint32_t ratio, uint64_t cells, auto takes, auto width) {
    LlamaCppCachePart p;
    p.name = std::move(name), p.ratio = ratio, p.cells = cells, p.streams = streams;
    for (size_t il = 0; il < layers.size(); ++il)
      if (layers[il].hasKv && takes(a.compressRatios[il])) ++p.layers, p.kBytes += rowBytes(o.typeK, width(layers[il])) * cells * streams;
    return p;
  };
  // The compressed caches: dsv4_comp_size padded to 256 (GGML_PAD(..., 256u)).
  auto compressedCells = [&](uint64_t ratio) { return pad(std::max<uint64_t>(1, (nCtxSeq + ratio - 1) / ratio), 256); };
  auto ratioIs = [](int64_t r) { return [r](int64_t ratio) { return ratio == r; }; };
  auto kWidth = [](const LlamaCppLayerKv& l) { return l.kWidth; };
  auto indexerWidth = [&](const LlamaCppLayerKv&) { return uint64_t(a.indexHeadDim); };
  // The raw cache is llama_kv_cache_iswa: every layer slides (set_swa_pattern(0)), so its non-SWA
  // half holds none; the window's cells as for any sliding cache with one sequence a stream.
  const uint64_t swaCells = o.swaFull ? nCtxSeq : pad(std::min<uint64_t>(nCtxSeq, uint64_t(a.slidingWindow) + uint64_t(o.nUbatch)), 256);
  std::vector<LlamaCppCachePart> parts = {
      cache("non-SWA", 0, nCtxSeq, [](int64_t) { return false; }, kWidth), cache("SWA", 0, swaCells, [](int64_t) { return true; }, kWidth),
      cache("CSA", 4, compressedCells(4), ratioIs(4), kWidth),          cache("HCA", 128, compressedCells(128), ratioIs(128), kWidth),
      cache("indexer", 4, compressedCells(4), ratioIs(4), indexerWidth)};
  // llama_dsv4_comp_state: per layer a kv and a score tensor, F32, width x rows x (n_seq x (1 +
  // n_rs_seq)) planes - CSA 2 x head values by 2 x 4 rows, HCA head by 128, the indexer 2 x
  // indexer.key_length by 2 x 4.
  const uint64_t head = uint64_t(a.headDim), planes = uint64_t(o.nSeq) * (1 + uint64_t(std::max(0, o.nRsSeq)));
  for (const auto& [name, ratio, rows, width] : {std::tuple{"csa", 4u, 8u, 2 * head}, std::tuple{"hca", 128u, 128u, head},
                                                 std::tuple{"lid", 4u, 8u, 2 * uint64_t(a.indexHeadDim)}}) {
    LlamaCppCachePart st;
    st.name = name, st.state = true, st.ratio = ratio, st.stateRows = rows, st.stateWidth = uint32_t(width), st.streams = streams;
    for (size_t il = 0; il < layers.size(); ++il)
      if (a.compressRatios[il] == int64_t(ratio)) ++st.layers;
    st.kBytes = 2 * width * rows * 4 * planes * uint64_t(st.layers);
    parts.push_back(st);
  }
  return parts;
}

}  // namespace

const std::vector<LlamaCppSwaPattern>& llamaCppSwaPatterns() {
  // src/models/<file>.cpp load_arch_hparams at 0c1e57098. load_swa_pattern(ml, n) takes the GGUF's
  // per-layer array first, then its scalar n, then the architecture's n; n -1: get_arr, required.
  static const std::vector<LlamaCppSwaPattern> t = {
      {"gpt-oss", 2, false, false, "openai-moe.cpp: load_swa_pattern(ml, 2), sliding_window required"},
      {"gemma2", 2, false, false, "gemma2.cpp: n_swa = 4096 unless the GGUF says, load_swa_pattern(ml, 2)"},
      {"gemma3", 6, false, true, "gemma3.cpp: load_swa_pattern(ml, 6) when sliding_window > 0"},
      {"gemma3n", 5, false, false, "gemma3n.cpp: load_swa_pattern(ml, 5), sliding_window required"},
      {"gemma4", -1, false, false, "gemma4.cpp: ml.get_arr(sliding_window_pattern), sliding_window required"},
      {"cohere2", 4, false, false, "cohere2.cpp: load_swa_pattern(ml, 4), sliding_window required"},
      {"cohere2moe", 4, true, false, "cohere2moe.cpp: load_swa_pattern(ml, 4, true), sliding_window required"},
      {"olmo2", 4, false, true, "olmo2.cpp: load_swa_pattern(ml, 4) when sliding_window > 0"},
      {"afmoe", 4, false, true, "afmoe.cpp: load_swa_pattern(ml, 4) when sliding_window > 0"},
      {"exaone-moe", 4, false, false, "exaone-moe.cpp: load_swa_pattern(ml, 4), sliding_window required"},
      {"laguna", 4, true, true, "laguna.cpp: load_swa_pattern(ml, 4, true) when sliding_window > 0"},
      {"step35", -1, false, false, "step35.cpp: ml.get_arr(sliding_window_pattern), sliding_window required"},
      {"mimo2", -1, false, false, "mimo2.cpp: ml.get_arr(sliding_window_pattern), sliding_window required"},
      {"deepseek4", 0, false, false, "deepseek4.cpp: set_swa_pattern(0), every layer's raw keys slide; sliding_window required"},
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
  if (p->n < 0) fail(ErrorCode::Usage, "the GGUF has no per-layer " + m.architecture + ".attention.sliding_window_pattern, which llama.cpp requires of " + m.architecture);
  const int64_t n = a.slidingWindowPattern >= 0 ? a.slidingWindowPattern : p->n;
  for (size_t il = 0; il < out.size(); ++il)
    out[il] = n == 0 || (p->denseFirst ? int64_t(il) % n != 0 : int64_t(il) % n < n - 1);
  return out;
}

const std::vector<LlamaCppConversion>& llamaCppConversions() {
  // conversion/<file>.py at 0c1e57098: the class @ModelBase.register names and its model_arch.
  static const std::vector<LlamaCppConversion> t = {
      {"GptOssForCausalLM", "gpt-oss", "conversion/gpt_oss.py:13-16 (GptOssModel, MODEL_ARCH.GPT_OSS); writes sliding_window alone (line 130), so llama.cpp's own pattern of 2 applies"},
  };
  return t;
}

Result<ModelDescription> llamaCppModelOfConfig(const ModelDescription& config) {
  ModelDescription m = config;
  for (const auto& row : llamaCppConversions())
    if (std::find(config.architectures.begin(), config.architectures.end(), row.hfArchitecture) != config.architectures.end()) {
      m.architecture = std::string(row.ggufArch);
      m.attention.layerTypes.clear(), m.attention.slidingWindowPattern = -1;  // the conversion writes no pattern
      return m;
    }
  const auto& a = config.attention;
  const bool sliding = a.slidingWindow > 0 || std::find(a.layerTypes.begin(), a.layerTypes.end(), "sliding_attention") != a.layerTypes.end();
  const char* why = sliding ? "sliding-window layers" : !a.compressRatios.empty() ? "compressed attention" : a.indexTopk > 0 ? "an attention indexer"
                    : a.kvSharedLayers > 0 ? "layers sharing a cache" : !config.mtpLayers.empty() ? "MTP layers" : nullptr;
  if (why)
    return Error{ErrorCode::Usage,
                 std::string("a config.json with ") + why + ": how llama.cpp keeps them depends on what convert_hf_to_gguf.py writes for " +
                     (config.architectures.empty() ? config.architecture : config.architectures.front()) + ", not read here - hold the log to the GGUF",
                 {}, std::nullopt, {}};
  return m;  // full attention (or MLA) on every layer: the cache does not depend on the name
}

bool llamaCppIndexerKeys(const ModelDescription& m) {
  // llama-model.cpp create_memory: LLM_ARCH_DEEPSEEK32 and LLM_ARCH_GLM_DSA build
  // llama_kv_cache_dsa, its indexer cache on the layers filter_lid admits.
  return (m.architecture == "deepseek32" || m.architecture == "glm-dsa") && m.attention.kvLoraRank > 0 && m.attention.indexHeadDim > 0;
}

std::vector<bool> llamaCppIndexerLayers(const ModelDescription& m) {
  const size_t n = size_t(std::max<int64_t>(0, m.numLayers));
  if (m.architecture != "glm-dsa") return std::vector<bool>(n, true);
  const auto& a = m.attention;
  if (!a.indexerFull.empty()) {  // get_key_or_arr(INDEXER_TYPES, ..., n_layer): one entry a layer
    if (a.indexerFull.size() != n)
      fail(ErrorCode::Usage, "the GGUF's glm-dsa.attention.indexer.types has " + std::to_string(a.indexerFull.size()) + " entries for " + std::to_string(n) +
                                 " blocks, which llama.cpp refuses (get_key_or_arr)");
    return a.indexerFull;
  }
  std::vector<bool> full(n, true);
  if (a.maxPositions >= 1048576)  // GLM_5_2_DEFAULT_INDEXER_TYPES (glm-dsa.cpp), zero past its 78 entries
    for (size_t il = 0; il < n; ++il) full[il] = il < 2 || (il < 78 && (il - 2) % 4 == 0);
  return full;
}

bool llamaCppCompressedCaches(const ModelDescription& m) {
  // llama-model.cpp create_memory: LLM_ARCH_DEEPSEEK4 builds llama_kv_cache_dsv4 (a GGUF without
  // compress_ratios is refused by deepseekV4Cache, as llama.cpp refuses it).
  return m.architecture == "deepseek4";
}

std::vector<LlamaCppLayerKv> llamaCppLayerKv(const ModelDescription& m) {
  const auto& a = m.attention;
  const std::vector<bool> sliding = llamaCppSlidingLayers(m);
  const bool mla = a.kvLoraRank > 0;
  // hparams.n_layer_kv_from_start: Gemma 3n's first 20 layers keep a cache (gemma3n.cpp), Gemma 4's
  // all but attention.shared_kv_layers (gemma4.cpp); the rest read an earlier layer's.
  int64_t withKv = m.numLayers;
  if (m.architecture == "gemma3n") withKv = std::min<int64_t>(m.numLayers, 20);
  else if (m.architecture == "gemma4") withKv = m.numLayers - a.kvSharedLayers;
  std::vector<LlamaCppLayerKv> out(sliding.size());
  for (size_t il = 0; il < out.size(); ++il) {
    LlamaCppLayerKv& l = out[il];
    l.hasKv = int64_t(il) < withKv;
    l.sliding = sliding[il];
    const int64_t k = l.sliding && a.headDimSwa > 0 ? a.headDimSwa : a.headDim;
    const int64_t v = l.sliding && a.vHeadDimSwa > 0 ? a.vHeadDimSwa : a.vHeadDim;
    l.kHead = uint64_t(std::max<int64_t>(0, k)), l.vHead = uint64_t(std::max<int64_t>(0, v));
    if (mla) {  // one latent of kv_lora_rank + rope dims, no V
      l.kWidth = uint64_t(a.kvLoraRank + std::max<int64_t>(0, a.qkRopeHeadDim));
      continue;
    }
    const int64_t heads = a.kvHeadsAt(int64_t(il));
    l.kWidth = uint64_t(std::max<int64_t>(0, k * heads));
    l.vWidth = uint64_t(std::max<int64_t>(0, v * heads));
    if (l.hasKv && !l.kWidth)
      fail(ErrorCode::Usage, "the GGUF has no attention.head_count_kv or key_length for layer " + std::to_string(il) + ", which llama.cpp's cache needs");
  }
  return out;
}

std::string LlamaCppCachePart::logLine(const LlamaCppCacheOptions& o) const {
  char s[256];
  if (state) {  // total_size() / 1024.0 / 1024.0, a double
    std::snprintf(s, sizeof s, "llama_dsv4_comp_state: %s ratio = %u, state = %u x %u, streams = %u, rs_seq = %d, layers = %d, size = %7.2f MiB", name.c_str(), ratio,
                  stateRows, stateWidth, streams, std::max(0, o.nRsSeq), layers, double(kBytes) / 1024.0 / 1024.0);
    return s;
  }
  std::snprintf(s, sizeof s, "llama_kv_cache: size = %s MiB (%6llu cells, %3d layers, %2u/%u seqs), K (%s): %s MiB, V (%s): %s MiB", mib(kBytes + vBytes).c_str(),
                (unsigned long long)cells, layers, unsigned(o.nSeq), streams, o.typeK.c_str(), mib(kBytes).c_str(), o.typeV.c_str(), mib(vBytes).c_str());
  return s;
}

Result<std::vector<LlamaCppCachePart>> llamaCppCache(const ModelDescription& m, const LlamaCppCacheOptions& o) {
  return capture([&]() -> std::vector<LlamaCppCachePart> {
    const auto& a = m.attention;
    if (m.numLayers <= 0) fail(ErrorCode::Usage, "the GGUF has no block_count, which llama.cpp's cache needs");
    if (o.nCtx <= 0 || o.nSeq <= 0 || o.nUbatch <= 0) fail(ErrorCode::Usage, "llama.cpp's -c, -np and -ub must be positive");
    const std::vector<LlamaCppLayerKv> layers = llamaCppLayerKv(m);
    if ((a.kvLoraRank > 0 || llamaCppCompressedCaches(m)) && o.typeK != o.typeV)
      fail(ErrorCode::Usage, "model does not support different K (" + o.typeK + ") and V (" + o.typeV + ") cache types: llama.cpp creates no context (llama_init_from_model)");
    // With flash attention a quantized cache's block must divide every layer's head
    // (llama-context.cpp llama_init_from_model: it returns no context otherwise).
    for (const auto& l : layers)
      for (const auto& [type, head, which] : {std::tuple{o.typeK, l.kHead, "K"}, std::tuple{o.typeV, l.vHead, "V"}})
        if (uint64_t block = cacheBlock(type).values; block > 1 && head % block)
          fail(ErrorCode::Usage, std::string(which) + " cache type " + type + " with block size " + std::to_string(block) + " does not divide n_embd_head_" +
                                     (which[0] == 'K' ? "k" : "v") + "=" + std::to_string(head) + ": llama.cpp creates no context (llama_init_from_model)");
    const uint32_t streams = o.unified ? 1 : uint32_t(o.nSeq);
    const uint64_t nCtx = pad(uint64_t(o.nCtx), 256);
    const uint64_t nCtxSeq = o.unified ? nCtx : pad(nCtx / uint64_t(o.nSeq), 256);
    auto part = [&](std::string name, uint64_t cells, bool sliding) {
      LlamaCppCachePart p;
      p.name = std::move(name), p.cells = cells, p.streams = streams;
      for (const auto& l : layers) {
        if (!l.hasKv || l.sliding != sliding) continue;
        ++p.layers;
        p.kBytes += rowBytes(o.typeK, l.kWidth) * cells * streams;
        p.vBytes += l.vWidth ? rowBytes(o.typeV, l.vWidth) * cells * streams : 0;
      }
      return p;
    };
    if (llamaCppCompressedCaches(m)) return deepseekV4Cache(m, o, layers, nCtxSeq);
    const bool anySliding = std::any_of(layers.begin(), layers.end(), [](const LlamaCppLayerKv& l) { return l.sliding; });
    if (llamaCppIndexerKeys(m)) {
      // llama_kv_cache_dsa (src/llama-kv-cache-dsa.cpp): the MLA cache, then a second cache of the
      // same cells holding the indexer keys of the layers that keep them - one head of
      // indexer.key_length, K only.
      const std::vector<bool> keeps = llamaCppIndexerLayers(m);
      LlamaCppCachePart indexer;
      indexer.cells = nCtxSeq, indexer.streams = streams;
      indexer.layers = int(std::count(keeps.begin(), keeps.end(), true));
      indexer.kBytes = rowBytes(o.typeK, uint64_t(a.indexHeadDim)) * nCtxSeq * streams * uint64_t(indexer.layers);
      return {part("", nCtxSeq, false), indexer};
    }
    if (!anySliding) return {part("", nCtxSeq, false)};
    const int64_t window = a.slidingWindow > 0 ? a.slidingWindow : m.architecture == "gemma2" ? 4096 : 0;
    if (window <= 0) fail(ErrorCode::Usage, "the GGUF has no attention.sliding_window, which llama.cpp's sliding layers need");
    const uint64_t swaCells = o.swaFull ? nCtxSeq : pad(std::min<uint64_t>(nCtxSeq, uint64_t(window) * (o.unified ? uint64_t(o.nSeq) : 1) + uint64_t(o.nUbatch)), 256);
    return {part("non-SWA", nCtxSeq, false), part("SWA", swaCells, true)};
  });
}

}  // namespace ws::plan
