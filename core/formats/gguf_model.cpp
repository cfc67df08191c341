#include "core/formats/gguf_model.h"

#include "core/formats/hf_config.h"

#include <algorithm>

#include "core/util/error.h"

namespace ws {

ModelDescription modelFromGgufKv(const GgufFile& g, const std::string& path) {
  ModelDescription m;
  m.source = "gguf";
  if (const GgufKv* a = g.find("general.architecture"))
    if (auto s = a->asString()) m.architecture = *s;
  auto num = [&](const char* key, int64_t fallback = -1) -> int64_t {
    const GgufKv* kv = g.find(m.architecture + "." + key);
    if (!kv) return fallback;
    if (auto v = kv->asInt()) return *v;
    return fallback;
  };
  // Counts the model loops over must be plausible; naming the key and where it sits in the file.
  auto count = [&](const char* key, int64_t fallback = -1) -> int64_t {
    int64_t v = num(key, fallback);
    if (v > kMaxPlausibleCount) {
      const GgufKv* kv = g.find(m.architecture + "." + key);
      fail(ErrorCode::GgufBadValue, kv->key + " = " + std::to_string(v) + " is not a plausible count (at most " + std::to_string(kMaxPlausibleCount) + ")", path, kv->offset);
    }
    return v;
  };
  int64_t blocks = count("block_count");
  int64_t nextn = std::min(count("nextn_predict_layers", 0), std::max<int64_t>(0, blocks));
  m.numLayers = blocks >= 0 ? blocks - std::max<int64_t>(0, nextn) : -1;
  m.hiddenSize = num("embedding_length");
  m.intermediateSize = num("feed_forward_length");
  m.numExperts = std::max<int64_t>(0, count("expert_count", 0));
  m.numSharedExperts = std::max<int64_t>(0, count("expert_shared_count", 0));
  m.expertsPerToken = count("expert_used_count");
  m.expertGroups = std::max<int64_t>(1, count("expert_group_count", 1));
  m.expertGroupsUsed = std::max<int64_t>(1, count("expert_group_used_count", 1));
  m.expertIntermediateSize = num("expert_feed_forward_length");
  if (m.expertIntermediateSize < 0 && m.numExperts > 0) m.expertIntermediateSize = m.intermediateSize;
  // llama.cpp's n_vocab: <arch>.vocab_size, else the token list's length (load_hparams:
  // get_key(LLM_KV_VOCAB_SIZE) || get_arr_n(LLM_KV_TOKENIZER_LIST)).
  m.vocabSize = num("vocab_size");
  if (m.vocabSize < 0)
    if (const GgufKv* tokens = g.find("tokenizer.ggml.tokens"); tokens && tokens->type == GgufType::Array) m.vocabSize = int64_t(tokens->arrayCount);
  if (m.numLayers >= 0) {
    int64_t leadingDense = num("leading_dense_block_count");
    m.firstKDenseReplace = leadingDense;
    applyLayerPattern(m, leadingDense, -1, {}, -1, num("interleave_moe_layer_step"), {});
    for (int64_t i = 0; i < nextn; ++i) m.mtpLayers.push_back(int(m.numLayers + i));
  }
  // llama.cpp's attention keys (llama-model.cpp): head counts, K/V widths, MLA's latent rank.
  AttentionConfig& a = m.attention;
  a.numHeads = num("attention.head_count");
  a.numKvHeads = num("attention.head_count_kv", a.numHeads);
  a.headDim = num("attention.key_length", a.numHeads > 0 && m.hiddenSize > 0 ? m.hiddenSize / a.numHeads : -1);
  a.vHeadDim = num("attention.value_length", a.headDim);
  // Per-layer head counts (llama-model.cpp load_hparams: get_key_or_arr(HEAD_COUNT_KV)): an array
  // of one count a block; numKvHeads then holds the largest, for rules that want one figure.
  if (const GgufKv* h = g.find(m.architecture + ".attention.head_count_kv"); h && !h->asInt() && blocks > 0 && h->arrayNumbers.size() == uint64_t(blocks)) {
    for (double v : h->arrayNumbers) a.kvHeadsPerLayer.push_back(int64_t(v));
    a.numKvHeads = *std::max_element(a.kvHeadsPerLayer.begin(), a.kvHeadsPerLayer.end());
  }
  // DeepSeek-V3.2's lightning indexer (llama-arch.cpp LLM_KV_ATTENTION_INDEXER_*).
  a.indexHeadDim = num("attention.indexer.key_length");
  a.indexTopk = num("attention.indexer.top_k");
  if (const GgufKv* t = g.find(m.architecture + ".attention.indexer.types"); t && !t->asInt())
    for (double v : t->arrayNumbers) a.indexerFull.push_back(v != 0);
  a.headDimSwa = num("attention.key_length_swa");
  a.vHeadDimSwa = num("attention.value_length_swa");
  a.kvSharedLayers = std::max<int64_t>(0, count("attention.shared_kv_layers", 0));
  a.kvLoraRank = num("attention.kv_lora_rank");
  a.qkRopeHeadDim = num("rope.dimension_count");
  a.slidingWindow = num("attention.sliding_window");
  // llama.cpp's own override of the architecture's sliding pattern (llama-model.cpp
  // load_swa_pattern): a per-layer bool array, or every n-th layer dense.
  if (const GgufKv* p = g.find(m.architecture + ".attention.sliding_window_pattern")) {
    if (auto n = p->asInt()) a.slidingWindowPattern = *n;
    else if (m.numLayers > 0 && p->arrayNumbers.size() == uint64_t(m.numLayers))
      for (double v : p->arrayNumbers) a.layerTypes.push_back(v != 0 ? "sliding_attention" : "full_attention");
  }
  // DeepSeek-V4's per-layer compression (deepseek4.cpp load_arch_hparams: get_arr, at least
  // block_count entries).
  if (const GgufKv* r = g.find(m.architecture + ".attention.compress_ratios"); r && !r->asInt())
    for (double v : r->arrayNumbers) a.compressRatios.push_back(int64_t(v));
  a.maxPositions = num("context_length");
  m.quant.method = "gguf";
  m.quant.source = "general.file_type";
  return m;
}

}  // namespace ws
