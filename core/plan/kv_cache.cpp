#include "core/plan/kv_cache.h"

#include "core/plan/llama_cpp_cache.h"
#include "core/plan/llama_cpp_compute.h"
#include "core/plan/sglang_dsv4_pool.h"
#include "core/plan/sglang_swa_pool.h"
#include "core/plan/vllm_profile.h"
#include "core/util/format_bytes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace ws::plan {

namespace {

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Tokens a request: --max-model-len, else the model's max_position_embeddings (<= 0: unknown).
int64_t maxModelLenOf(const ModelDescription& m, const KvOptions& o) { return o.maxModelLen > 0 ? o.maxModelLen : m.attention.maxPositions; }

// Bytes a cache element takes, times 32 (llama.cpp's q8_0/q4_0 store 32 values in 34/18 bytes).
struct CacheType {
  std::string name;
  uint64_t bytesPer32 = 64;
  bool dsMla = false;  // vLLM's fp8_ds_mla: 656 bytes per token per MLA layer
};

bool declaresArchitecture(const ModelDescription& m, const std::string& cls) {
  return std::find(m.architectures.begin(), m.architectures.end(), cls) != m.architectures.end();
}

CacheType cacheType(const ModelDescription& m, const KvOptions& o) {
  std::string d = o.dtype;
  if (!o.llamaCpp && declaresArchitecture(m, "DeepseekV32ForCausalLM")) {
    // vLLM 0.11.0 model_executor/models/config.py DeepseekV32ForCausalLM.verify_and_update_config:
    // "auto" and every fp8 dtype become its custom fp8_ds_mla, bfloat16 becomes "auto".
    if (d == "auto" || d.rfind("fp8", 0) == 0) return {"fp8_ds_mla", 32, true};
    if (d == "bf16") d = "auto";
  }
  if (d == "auto") {
    // The engines' "auto": the model's own dtype, not an FP8 checkpoint's weight format (vLLM 0.11.0
    // v1/worker/gpu_model_runner.py: cache_dtype "auto" -> model_config.dtype; llama.cpp: f16).
    const std::string& md = m.attention.dtype;
    if (o.llamaCpp) d = "f16";
    else if (md == "float16" || md == "half") d = "fp16";
    else if (md == "float32" || md == "float") d = "fp32";
    else d = "bf16";  // bfloat16, or unsaid: what MoE checkpoints ship in
  }
  if (d == "bf16" || d == "fp16" || d == "f16") return {d, 64};
  if (d == "fp32" || d == "f32") return {d, 128};
  if (d == "fp8" || d == "fp8_e4m3" || d == "fp8_e5m2") return {d, 32};
  if (d == "fp8_ds_mla") return {d, 32, true};
  if (o.llamaCpp && d == "q8_0") return {d, 34};
  if (o.llamaCpp && d == "q4_0") return {d, 18};
  fail(ErrorCode::Usage, "--kv-cache-dtype '" + o.dtype + "' is not one of auto, bf16, fp16, fp32, fp8, fp8_e4m3, fp8_e5m2, fp8_ds_mla" +
                             (o.llamaCpp ? ", q8_0, q4_0" : ""));
}

int64_t need(int64_t v, const char* key, const char* what) {
  if (v <= 0) fail(ErrorCode::Usage, std::string("the config has no ") + key + ", which the KV cache of " + what + " needs");
  return v;
}

enum class Kind { Full, Mla, Sliding, Linear, Shared };

std::vector<Kind> layerKinds(const ModelDescription& m) {
  const AttentionConfig& a = m.attention;
  const int64_t L = need(m.numLayers, "num_hidden_layers", "any model");
  const bool mla = a.kvLoraRank > 0;
  std::vector<Kind> kinds(size_t(L), mla ? Kind::Mla : Kind::Full);
  if (!a.layerTypes.empty()) {
    if (int64_t(a.layerTypes.size()) != L)
      fail(ErrorCode::Usage, "layer_types lists " + std::to_string(a.layerTypes.size()) + " layers, num_hidden_layers says " + std::to_string(L));
    for (size_t i = 0; i < kinds.size(); ++i) {
      const std::string& t = a.layerTypes[i];
      if (t == "sliding_attention") kinds[i] = Kind::Sliding;
      else if (t == "linear_attention") kinds[i] = Kind::Linear;
      // indexed_attention: DeepSeek-V3.2's MLA with its indexer (transformers 5.25.0
      // configuration_deepseek_v32.py writes it for every layer); the indexer's keys are added below.
      else if (t != "full_attention" && t != "attention" && t != "indexed_attention")
        fail(ErrorCode::Usage, "layer_types[" + std::to_string(i) + "] is '" + t + "', not full_attention, sliding_attention, linear_attention or indexed_attention");
    }
  } else if (a.fullAttentionInterval > 0) {
    for (size_t i = 0; i < kinds.size(); ++i)
      kinds[i] = (int64_t(i) + 1) % a.fullAttentionInterval == 0 ? Kind::Full : Kind::Linear;
  } else if (a.slidingWindow > 0 && !mla) {
    // sliding_window_pattern N: every N-th layer is global (Gemma); without it every layer slides.
    for (size_t i = 0; i < kinds.size(); ++i)
      kinds[i] = a.slidingWindowPattern > 0 && (int64_t(i) + 1) % a.slidingWindowPattern == 0 ? Kind::Full : Kind::Sliding;
  }
  return kinds;
}

// DeepSeek-V4 in llama.cpp: one sequence's caches exactly as llamaCppCache allocates them at
// n_ctx = maxModelLen (its raw sliding window, the compressed caches, the compressor states).
void deepseekV4LlamaCpp(const ModelDescription& m, const CacheType& ct, KvCache& kv) {
  LlamaCppCacheOptions lo;
  lo.nCtx = kv.maxModelLen;
  lo.typeK = lo.typeV = ct.name == "fp16" ? "f16" : ct.name == "fp32" ? "f32" : ct.name;
  auto parts = llamaCppCache(m, lo);
  if (!parts) fail(parts.error().code, parts.error().message);
  uint64_t per128 = 0;  // the compressed caches' growth, in bytes per 128 tokens
  for (const LlamaCppCachePart& p : parts.value()) {
    const uint64_t bytes = p.kBytes + p.vBytes;
    if (p.state) {
      kv.stateBytesPerSeq += bytes;
    } else if (p.name == "SWA") {
      kv.layers.sliding = p.layers, kv.window = m.attention.slidingWindow;
      kv.slidingBytesPerSeq = bytes, kv.slidingBytesPerToken = p.cells ? bytes / p.cells : 0;
    } else if (p.ratio) {
      kv.compressedBytesPerSeq += bytes;
      per128 += (p.cells ? bytes / p.cells : 0) * (128 / p.ratio);
    }
  }
  const auto& r = m.attention.compressRatios;
  kv.compressedLayers = int(std::count_if(r.begin(), r.end(), [](int64_t ratio) { return ratio == 4 || ratio == 128; }));
  kv.compressedBytesPerToken = ceilDiv(per128, 128);
  kv.bytesPerToken = kv.compressedBytesPerToken;
  kv.formulas.push_back("DeepSeek-V4 (llama_kv_cache_dsv4): every layer's raw keys slide (window " + std::to_string(kv.window) + "), K only; ratio-4 layers keep ceil(n / 4) compressed keys and as many indexer keys, ratio-128 layers ceil(n / 128), padded to 256 cells: " +
                        std::to_string(kv.compressedBytesPerToken) + " B per token, " + std::to_string(kv.compressedBytesPerSeq) + " B for one sequence of " +
                        std::to_string(kv.maxModelLen) + "; compressor states " + std::to_string(kv.stateBytesPerSeq) + " B per sequence");
}

// DeepSeek-V4 in SGLang: its pools' charge a full token and the compressor states it sizes once
// (sglang_dsv4_pool.h), in the default fp8 layout with its 256-token pages.
void deepseekV4Sglang(const ModelDescription& m, const KvOptions& o, KvCache& kv) {
  if (o.dtype != "auto" && o.dtype != "fp8" && o.dtype != "fp8_e4m3")
    fail(ErrorCode::Usage, "SGLang 0.5.23's DeepSeek-V4 pools hold FP8 (--kv-cache-dtype auto resolves to fp8_e4m3, arg_groups/overrides.py:891-913; the layout asserts uint8 storage): not " + o.dtype);
  auto pool = sglangDsv4Pool(m, o.maxNumSeqs > 0 ? int(o.maxNumSeqs) : 256);
  if (!pool) fail(pool.error().code, pool.error().message);
  const SglangDsv4Pool& p = pool.value();
  kv.dtype = "fp8_e4m3";
  kv.compressedLayers = p.ratio4 + p.ratio128;
  kv.window = m.attention.slidingWindow;
  kv.poolBytesPerToken = p.bytesPerFullToken, kv.poolFixedBytes = p.fixedBytes;
  kv.bytesPerToken = uint64_t(std::ceil(p.bytesPerFullToken));
  kv.blockSize = 256;
  kv.formulas = p.formulas;
}

// SGLang's sliding layers (sglang_swa_pool.h): a pool of their own sized at 0.8 x the full pool's
// tokens for a hybrid-SWA architecture, else the full cache in the one pool.
void sglangSlidingLayers(const ModelDescription& m, uint64_t perLayer, KvCache& kv) {
  kv.window = m.attention.slidingWindow;
  const uint64_t perToken = perLayer * uint64_t(kv.layers.sliding);
  const std::string n = std::to_string(kv.layers.sliding);
  if (!sglangHybridSwa(m)) {
    kv.bytesPerToken += perToken;
    kv.formulas.push_back("SGLang: not a hybrid-SWA architecture (model_config.py is_hybrid_swa_model), so its " + n +
                          " sliding layers keep a full cache in the one pool: " + std::to_string(perToken) + " B per token more");
    return;
  }
  if (kv.layers.mla) fail(ErrorCode::Usage, "SGLang 0.5.23 sizes an MLA model's sliding layers by swa_kv_lora_rank (HybridSWAPoolConfigurator), not modelled here");
  kv.slidingBytesPerToken = perToken;
  kv.poolBytesPerToken = double(kv.bytesPerToken) + kSglangSwaFullTokensRatio * double(perToken);
  char pool[64];
  std::snprintf(pool, sizeof pool, "%.1f", kv.poolBytesPerToken);
  kv.formulas.push_back("SGLang hybrid SWA (pool_configurator.py HybridSWAPoolConfigurator): the full pool's token " + std::to_string(kv.bytesPerToken) + " B + 0.8 x the " + n +
                        " sliding layers' " + std::to_string(perToken) + " B = " + pool + " B, the sliding pool holding 0.8 x the full pool's tokens");
}

// SGLang 0.5.23's state pool for the Gated DeltaNet layers of Qwen3-Next and Qwen3.5 (whose text
// configs subclass Qwen3NextConfig, configs/qwen3_5.py), per slot: a conv state of (2 x key heads x
// key dim + value heads x value dim) / TP x (kernel - 1) in BF16 (SGLANG_MAMBA_CONV_DTYPE) and an
// SSM state of value heads / TP x key dim x value dim in the config's mamba_ssm_dtype, else FP32
// (mamba2_state_dtype), over every linear layer (configs/mamba_utils.py mamba_cache_per_req,
// configs/qwen3_next.py mamba2_cache_params). A running request holds 5 slots: 3, and 2 tracking
// slots of the extra_buffer radix strategy the overlap scheduler resolves for these architectures
// (kv_cache_configurator.py _calculate_mamba_ratio, arg_groups/overrides.py
// _mamba_radix_cache_resolution, _MAMBA_EXTRA_BUFFER_ARCHS).
void sglangLinearState(const ModelDescription& m, int tp, KvCache& kv) {
  const auto& a = m.attention;
  // Every one of these is on overrides.py's _MAMBA_RADIX_CACHE_ARCHS and _MAMBA_EXTRA_BUFFER_ARCHS
  // (the same pool split and extra_buffer strategy below).
  static const char* const kGatedDeltaNet[] = {"Qwen3NextForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM", "Qwen3_5ForConditionalGeneration",
                                               "Qwen3_5MoeForConditionalGeneration"};
  // Kimi K3's text config is a KimiLinearConfig (configs/kimi_k3.py; hybrid_arch.py kimi_linear_config).
  const bool kimiLinear = declaresArchitecture(m, "KimiLinearForCausalLM") || declaresArchitecture(m, "KimiK3ForConditionalGeneration");
  if (!kimiLinear && std::none_of(std::begin(kGatedDeltaNet), std::end(kGatedDeltaNet), [&](const char* arch) { return declaresArchitecture(m, arch); }))
    fail(ErrorCode::Usage, "SGLang 0.5.23 sizes a linear-attention model's state pool by its architecture's state shapes and radix strategy, read here for "
                           "Qwen3-Next and Qwen3.5 (Gated DeltaNet) and Kimi Linear and K3 (KDA) only");
  const uint64_t conv = uint64_t(2 * a.linearKeyHeads * a.linearKeyHeadDim + a.linearValueHeads * a.linearValueHeadDim) / uint64_t(tp) *
                        uint64_t(a.linearConvKernel - 1) * 2;
  // The SSM state's dtype: the config's mamba_ssm_dtype for Gated DeltaNet (mamba2_state_dtype(config));
  // Kimi Linear's KimiLinearCacheParams takes mamba2_state_dtype(None), FP32 whatever the config says.
  const uint64_t ssmElement = !kimiLinear && (a.mambaSsmDtype == "bfloat16" || a.mambaSsmDtype == "float16") ? 2 : 4;
  const uint64_t ssm = uint64_t(a.linearValueHeads / tp) * uint64_t(a.linearKeyHeadDim) * uint64_t(a.linearValueHeadDim) * ssmElement;
  kv.stateSlotBytes = (conv + ssm) * uint64_t(kv.layers.linear);
  kv.slotsPerRequest = 5;
  kv.stateBytesPerSeq = kv.stateSlotBytes * uint64_t(kv.slotsPerRequest);  // what a running request holds
  kv.formulas.push_back("SGLang state pool: (conv " + std::to_string(conv) + " B BF16 + SSM " + std::to_string(ssm) + (ssmElement == 4 ? " B FP32) x " : " B 16-bit) x ") +
                        std::to_string(kv.layers.linear) +
                        " layers = " + std::to_string(kv.stateSlotBytes) +
                        " B a slot; 0.9 / 1.9 of the budget in whole slots (one for padding), 5 a running request; the full-attention tokens take the rest "
                        "(kv_cache_configurator.py _handle_max_mamba_cache)");
}

}  // namespace

Result<KvCache> kvCachePerRank(const ModelDescription& m, const KvOptions& o) {
  return capture([&]() -> KvCache {
    const AttentionConfig& a = m.attention;
    KvCache kv;
    const CacheType ct = cacheType(m, o);
    kv.dtype = ct.name;
    kv.maxModelLen = maxModelLenOf(m, o);
    if (kv.maxModelLen <= 0) fail(ErrorCode::Usage, "give --max-model-len: the config has no max_position_embeddings");
    if (!a.compressRatios.empty() || (o.llamaCpp && llamaCppCompressedCaches(m))) {
      if (o.llamaCpp) {
        deepseekV4LlamaCpp(m, ct, kv);
        return kv;
      }
      if (!o.sglang)
        fail(ErrorCode::Usage, "DeepSeek-V4's compressed attention (compress_ratios): vLLM 0.11.0 registers no DeepseekV4ForCausalLM - plan it as SGLang 0.5.23 sizes its pools "
                               "(--runtime sglang) or as llama.cpp keeps it (a GGUF)");
      deepseekV4Sglang(m, o, kv);
      return kv;
    }
    const int tp = o.llamaCpp || o.attentionDp ? 1 : std::max(1, o.tp);
    std::vector<Kind> kinds = layerKinds(m);
    // llama.cpp's widths layer by layer (head_count_kv arrays, key_length_swa), summed by kind.
    uint64_t llamaFull = 0, llamaSliding = 0;
    const bool llamaLayers = o.llamaCpp && !kinds.empty() && kinds.front() != Kind::Mla;
    if (llamaLayers) {
      // llama.cpp slides only the layers its architecture's pattern names, and gives the
      // KV-sharing layers no cache (llama_cpp_cache.h).
      const std::vector<LlamaCppLayerKv> layers = llamaCppLayerKv(m);
      std::map<std::string, int> groups;  // one formula line per distinct layer shape
      for (size_t i = 0; i < kinds.size() && i < layers.size(); ++i) {
        const LlamaCppLayerKv& l = layers[i];
        kinds[i] = !l.hasKv ? Kind::Shared : l.sliding ? Kind::Sliding : Kind::Full;
        if (!l.hasKv) continue;
        const uint64_t bytes = ceilDiv(l.kWidth * ct.bytesPer32, 32) + ceilDiv(l.vWidth * ct.bytesPer32, 32);
        (l.sliding ? llamaSliding : llamaFull) += bytes;
        ++groups[std::string(l.sliding ? "sliding" : "full") + " layers x (K " + std::to_string(l.kWidth) + " + V " + std::to_string(l.vWidth) + ") x " +
                 ct.name + " = " + std::to_string(bytes) + " B per token each"];
      }
      for (const auto& [shape, n] : groups) kv.formulas.push_back("llama.cpp: " + std::to_string(n) + " " + shape);
    } else if (a.kvSharedLayers > 0) {
      // vLLM 0.11.0 gemma3n.py:332-344: the last num_kv_shared_layers layers name an earlier layer
      // as kv_sharing_target_layer_name, and gpu_model_runner.get_kv_cache_spec gives them no spec.
      for (int64_t i = std::max<int64_t>(0, int64_t(kinds.size()) - a.kvSharedLayers); i < int64_t(kinds.size()); ++i) kinds[size_t(i)] = Kind::Shared;
    }
    // Speculative decoding with MTP: each draft layer keeps a cache like the model's layers.
    for (int i = 0; i < o.speculative; ++i) kinds.push_back(a.kvLoraRank > 0 ? Kind::Mla : Kind::Full);

    uint64_t full = 0, mla = 0, sliding = 0;
    auto perHeadTokens = [&](const char* what) {
      // vLLM: KV heads split over TP, replicated (at least one per rank) when TP exceeds them.
      const int64_t kvHeads = need(a.numKvHeads, "num_key_value_heads", what);
      const int64_t perRank = std::max<int64_t>(1, kvHeads / tp);
      const int64_t k = need(a.headDim, "head_dim", what), v = need(a.vHeadDim, "v_head_dim", what);
      const uint64_t bytes = ceilDiv(uint64_t(perRank) * uint64_t(k + v) * ct.bytesPer32, 32);
      kv.formulas.push_back(std::string(what) + ": " + std::to_string(perRank) + " KV heads per rank x (" + std::to_string(k) + " + " + std::to_string(v) +
                            ") x " + ct.name + " = " + std::to_string(bytes) + " B per token per layer");
      return bytes;
    };
    for (Kind k : kinds) {
      switch (k) {
        case Kind::Full: ++kv.layers.full; break;
        case Kind::Mla: ++kv.layers.mla; break;
        case Kind::Sliding: ++kv.layers.sliding; break;
        case Kind::Linear: ++kv.layers.linear; break;
        case Kind::Shared: ++kv.layers.shared; break;
      }
    }
    if (kv.layers.shared) kv.formulas.push_back(std::to_string(kv.layers.shared) + " layers reuse an earlier layer's keys and values: no cache of their own");
    // Speculative layers past the model's are uniform even where llama.cpp's layers are not.
    const int extraFull = llamaLayers ? std::max(0, int(kinds.size()) - int(m.numLayers)) : kv.layers.full;
    if (extraFull) full = perHeadTokens("full attention");
    if (kv.layers.sliding && !llamaLayers) sliding = perHeadTokens("sliding-window attention");
    if (kv.layers.mla) {
      // MLA keeps one latent per token, never split by TP; vLLM's fp8_ds_mla packs it in 656 bytes
      // (512 FP8 values, 4 F32 scales, 64 BF16 rope values).
      const int64_t r = need(a.kvLoraRank, "kv_lora_rank", "MLA"), rope = need(a.qkRopeHeadDim, "qk_rope_head_dim", "MLA");
      mla = ct.dsMla ? 656 : ceilDiv(uint64_t(r + rope) * ct.bytesPer32, 32);
      kv.formulas.push_back("MLA: " + (ct.dsMla ? std::string("fp8_ds_mla 656 B") : "(" + std::to_string(r) + " + " + std::to_string(rope) + ") x " + ct.name + " = " + std::to_string(mla) + " B") +
                            " per token per layer, not split by TP");
    } else if (ct.dsMla) {
      fail(ErrorCode::Usage, "--kv-cache-dtype fp8_ds_mla is for MLA models (kv_lora_rank), and this one has none");
    }
    kv.bytesPerToken = llamaFull + full * uint64_t(extraFull) + mla * uint64_t(kv.layers.mla);
    kv.blockSize = o.blockSize;
    if (o.llamaCpp && llamaCppIndexerKeys(m) && kv.layers.mla) {
      // llama.cpp's DSA cache: the indexer key of each layer that keeps one (GLM-DSA: its "full"
      // indexers), one head of indexer.key_length in -ctk's type.
      const uint64_t perLayer = ceilDiv(uint64_t(a.indexHeadDim) * ct.bytesPer32, 32);
      const std::vector<bool> keeps = llamaCppIndexerLayers(m);
      kv.indexerBytesPerToken = perLayer * uint64_t(std::count(keeps.begin(), keeps.end(), true));
      kv.bytesPerToken += kv.indexerBytesPerToken;
      kv.formulas.push_back("llama.cpp indexer keys: " + std::to_string(a.indexHeadDim) + " x " + ct.name + " = " + std::to_string(perLayer) +
                            " B per token per layer that keeps them (" + std::to_string(std::count(keeps.begin(), keeps.end(), true)) +
                            "), a cache of its own (llama_kv_cache_dsa)");
    } else if (!o.llamaCpp && a.indexTopk > 0 && kv.layers.mla) {
      // DeepSeek-V3.2 (vLLM 0.11.0 deepseek_v2.py Indexer): each MLA layer, the MTP layers too
      // (deepseek_mtp.py builds the same decoder layer), keeps one indexer key a token beside its
      // latent - index_head_dim FP8 values and an FP32 scale per 128 of them, uint8, never split by
      // TP (DeepseekV32IndexerCache: MLAAttentionSpec, one head). Both kinds are full-attention
      // specs of one block size, so they share one group and one block count
      // (kv_cache_utils.py: UniformTypeKVCacheSpecs). FlashMLASparse forces 64-token blocks
      // (platforms/cuda.py:181).
      const int64_t d = need(a.indexHeadDim, "index_head_dim", "DeepSeek-V3.2's indexer");
      const uint64_t perLayer = uint64_t(d + d / 128 * 4);
      kv.indexerBytesPerToken = perLayer * uint64_t(kv.layers.mla);
      kv.bytesPerToken += kv.indexerBytesPerToken;
      kv.blockSize = 64;
      kv.formulas.push_back("indexer keys: " + std::to_string(d) + " FP8 + " + std::to_string(d / 128) + " x 4 B scale = " + std::to_string(perLayer) +
                            " B per token per MLA layer, not split by TP; blocks of 64 tokens (FlashMLASparse)");
    }
    if (kv.layers.sliding && o.sglang && !o.llamaCpp) {
      sglangSlidingLayers(m, sliding, kv);
    } else if (kv.layers.sliding && o.llamaCpp) {
      // llama.cpp's sliding cache for one sequence (its own stream): PAD(min(n_ctx_seq, n_swa +
      // n_ubatch), 256) cells, n_ctx_seq = PAD(n_ctx, 256) (llama-kv-cache-iswa.cpp at 0c1e57098).
      kv.window = a.slidingWindow > 0 ? a.slidingWindow : m.architecture == "gemma2" ? 4096 : need(a.slidingWindow, "sliding_window", "sliding-window layers");
      kv.slidingBytesPerToken = llamaLayers ? llamaSliding : sliding * uint64_t(kv.layers.sliding);
      const uint64_t ctx = ceilDiv(uint64_t(kv.maxModelLen), 256) * 256, ubatch = 512;
      const uint64_t cells = ceilDiv(std::min(ctx, uint64_t(kv.window) + ubatch), 256) * 256;
      kv.slidingBytesPerSeq = cells * kv.slidingBytesPerToken;
      kv.formulas.push_back("llama.cpp sliding window " + std::to_string(kv.window) + ": PAD(min(PAD(" + std::to_string(kv.maxModelLen) + ", 256), " +
                            std::to_string(kv.window) + " + n_ubatch 512), 256) = " + std::to_string(cells) + " cells x " + std::to_string(kv.layers.sliding) +
                            " layers per sequence");
    } else if (kv.layers.sliding) {
      kv.window = need(a.slidingWindow, "sliding_window", "sliding-window layers");
      kv.slidingBytesPerToken = sliding * uint64_t(kv.layers.sliding);
      // vLLM v1 (SlidingWindowSpec): the last window - 1 tokens plus one batch of new ones, at most
      // the request, in whole blocks plus one (the window need not start on a block boundary).
      const uint64_t tokens = uint64_t(std::min<int64_t>(kv.window - 1 + o.maxNumBatchedTokens, kv.maxModelLen));
      kv.slidingBytesPerSeq = (ceilDiv(tokens, uint64_t(o.blockSize)) + 1) * uint64_t(o.blockSize) * kv.slidingBytesPerToken;
      kv.formulas.push_back("sliding window " + std::to_string(kv.window) + ": (ceil(min(" + std::to_string(kv.window) + " - 1 + " +
                            std::to_string(o.maxNumBatchedTokens) + ", " + std::to_string(kv.maxModelLen) + ") / " + std::to_string(o.blockSize) +
                            ") + 1) blocks x " + std::to_string(kv.layers.sliding) + " layers per sequence");
    }
    if (kv.layers.linear) {
      // Gated DeltaNet (Qwen3-Next): a causal-conv state of (kernel - 1) x (2 key dims + value dims)
      // and a recurrent state of value heads x key dim x value dim, split by TP, in the model dtype.
      const int64_t kh = need(a.linearKeyHeads, "linear_num_key_heads", "linear attention"), vh = need(a.linearValueHeads, "linear_num_value_heads", "linear attention");
      const int64_t kd = need(a.linearKeyHeadDim, "linear_key_head_dim", "linear attention"), vd = need(a.linearValueHeadDim, "linear_value_head_dim", "linear attention");
      const int64_t kernel = need(a.linearConvKernel, "linear_conv_kernel_dim", "linear attention");
      const uint64_t conv = uint64_t(kernel - 1) * uint64_t(2 * kh * kd + vh * vd) / uint64_t(tp);
      const uint64_t ssm = uint64_t(vh) / uint64_t(tp) * uint64_t(kd) * uint64_t(vd);
      const uint64_t elem = a.dtype == "float32" ? 4 : 2;
      kv.stateBytesPerSeq = (conv + ssm) * elem * uint64_t(kv.layers.linear);
      kv.formulas.push_back("linear attention: ((" + std::to_string(kernel) + " - 1) x (2 x " + std::to_string(kh * kd) + " + " + std::to_string(vh * vd) +
                            ") + " + std::to_string(vh) + " x " + std::to_string(kd) + " x " + std::to_string(vd) + ") / TP x " + std::to_string(elem) + " B x " +
                            std::to_string(kv.layers.linear) + " layers per sequence");
      if (o.sglang && !o.llamaCpp) sglangLinearState(m, tp, kv);
    }
    if (o.llamaCpp)
      kv.formulas.push_back("llama.cpp: n_ctx x n_layer x (n_embd_k_gqa + n_embd_v_gqa) x " + ct.name + ", one copy (no tensor parallelism); layers slide as " +
                            (m.architecture.empty() ? std::string("its architecture") : m.architecture) + "'s pattern says (llama_cpp_cache.h)");
    return kv;
  });
}

std::vector<Reserve> runtimeReserves(const ModelDescription& m, const KvOptions& o, uint64_t cudaGraphs) {
  std::vector<Reserve> r;
  if (o.sglang && !o.llamaCpp) {
    // SGLang keeps activations and graphs in what its static share leaves: one line, not vLLM's.
    const auto share = sglangStaticShare(m, o.sglangLaunch);
    const uint64_t free = o.sglangLaunch.preLoadFreeBytes;
    if (!share) r.push_back({"sglang_headroom", "unknown: " + share.error().message, 0, 0});
    else if (!free) r.push_back({"sglang_headroom", "(1 - mem_fraction_static) of the free memory before the weights load: give --gpu-mem; " + share.value().formula, 0, 0});
    else
      r.push_back({"sglang_headroom",
                   "free before the weights load " + formatBytes(free) + " x (1 - mem_fraction_static " + sglangShareText(share.value().memFractionStatic) +
                       ") (kv_cache_configurator.py _profile_available_bytes); " + share.value().formula,
                   uint64_t(std::floor(double(free) * (1 - share.value().memFractionStatic))), 0});
    if (cudaGraphs) r.push_back({"cuda_graphs", "given (--reserve-cuda-graphs)", cudaGraphs, 0});
    return r;
  }
  if (o.llamaCpp) {
    // llama.cpp sizes its compute buffers by reserving the worst-case graph of n_ubatch tokens
    // (llama_context's sched_reserve): what that graph must hold at once is a lower bound
    // (llama_cpp_compute.h), at llama-server's defaults. Its output buffer - n_vocab FP32 logits
    // for each of n_seq_max outputs (llama_context::output_reserve) - is allocated in the output
    // device's host buffer type (CUDA_Host), not on the GPU.
    LlamaCppComputeOptions co;
    co.cache.nCtx = maxModelLenOf(m, o);
    co.cache.nSeq = o.maxNumSeqs > 0 ? int(o.maxNumSeqs) : 1;
    const auto bound = llamaCppComputeBound(m, co);
    if (bound)
      r.push_back({"compute_buffers", bound.value().formula + ", with flash attention (llama-server's -fa auto where the device runs it); the rest of the graph is not modelled: add it with --reserve", bound.value().bytes, 0});
    else
      r.push_back({"compute_buffers", "not predicted: " + bound.error().message + "; add what yours prints (CUDA0 compute buffer size) with --reserve", 0, 0});
    if (m.vocabSize > 0) {
      const uint64_t seqs = uint64_t(std::max<int64_t>(1, o.maxNumSeqs));
      r.push_back({"output_buffer", "n_vocab " + std::to_string(m.vocabSize) + " x n_seq_max " + std::to_string(seqs) +
                                        " x 4 B (llama_context::output_reserve), in host memory: the output device's host buffer type (CUDA_Host)",
                   0, uint64_t(m.vocabSize) * seqs * 4});
    }
    if (cudaGraphs) r.push_back({"cuda_graphs", "given (--reserve-cuda-graphs)", cudaGraphs, 0});
    return r;
  }
  r = vllmProfileReserves(m, o);
  r.push_back({"cuda_graphs", cudaGraphs ? "given (--reserve-cuda-graphs)" : "0: vLLM measures it at start-up; give what yours prints with --reserve-cuda-graphs",
               cudaGraphs});
  return r;
}

KvFit fitKvCache(const KvCache& kv, int64_t freeBytes, int64_t blockSize, int64_t maxNumSeqs) {
  KvFit f;
  f.freeBytes = freeBytes;
  if (freeBytes <= 0) return f;
  const uint64_t free = uint64_t(freeBytes);
  if (kv.poolBytesPerToken > 0) {  // SGLang's pools sized as a whole, with its sizers' float arithmetic
    const uint64_t page = uint64_t(std::max<int64_t>(1, blockSize));
    f.tokensFit = kv.compressedLayers ? uint64_t(sglangDsv4Sizes(kv.poolBytesPerToken, kv.poolFixedBytes, double(free)).full)
                                      : uint64_t(std::floor(double(free) / kv.poolBytesPerToken)) / page * page;  // hybrid SWA
    f.maxConcurrency = kv.maxModelLen > 0 ? double(f.tokensFit) / double(kv.maxModelLen) : 0;
    f.servedConcurrency = maxNumSeqs > 0 ? std::min(f.maxConcurrency, double(maxNumSeqs)) : f.maxConcurrency;
    return f;
  }
  if (kv.stateSlotBytes && kv.bytesPerToken) {
    // SGLang's state pool first (kv_cache_configurator.py _handle_max_mamba_cache, in GiB as there):
    // K = (budget x 0.9 / 1.9 - one slot) // slot, the K + 1 slots charged, the rest to the tokens.
    const double gib = double(1ull << 30), slot = double(kv.stateSlotBytes), rest = double(free) / gib;
    const double slots = std::floor((rest * 0.9 / (1 + 0.9) * gib - slot) / slot);
    if (slots <= 0) return f;  // SGLang refuses to start: not enough memory for the state cache
    f.stateSlots = int64_t(slots);
    const double left = (rest - (slots + 1) * slot / gib) * gib;
    const uint64_t page = uint64_t(std::max<int64_t>(1, blockSize));
    f.tokensFit = left > 0 ? uint64_t(left) / kv.bytesPerToken / page * page : 0;
    // resolve_max_num_reqs: min(--max-running-requests, else clamp(tokens / context x 512, 2048,
    // 4096); tokens / 2; slots / 5).
    const int64_t tokens = int64_t(f.tokensFit);
    const int64_t asked = maxNumSeqs > 0 ? maxNumSeqs : std::max<int64_t>(std::min<int64_t>(int64_t(double(tokens) / double(kv.maxModelLen) * 512), 4096), 2048);
    f.maxRunning = std::min({asked, tokens / 2, f.stateSlots / kv.slotsPerRequest});
    f.maxConcurrency = std::min(double(f.tokensFit) / double(kv.maxModelLen), double(f.maxRunning));
    f.servedConcurrency = maxNumSeqs > 0 ? std::min(f.maxConcurrency, double(maxNumSeqs)) : f.maxConcurrency;
    return f;
  }
  if (kv.bytesPerToken) {
    const uint64_t block = uint64_t(std::max<int64_t>(1, blockSize));
    f.tokensFit = free / kv.bytesPerToken / block * block;
  }
  const double perSeq = double(kv.maxModelLen) * double(kv.bytesPerToken - kv.compressedBytesPerToken) + double(kv.compressedBytesPerSeq) +
                        double(kv.slidingBytesPerSeq) + double(kv.stateBytesPerSeq);
  f.maxConcurrency = perSeq > 0 ? double(free) / perSeq : 0;
  f.servedConcurrency = maxNumSeqs > 0 ? std::min(f.maxConcurrency, double(maxNumSeqs)) : f.maxConcurrency;
  return f;
}

}  // namespace ws::plan
