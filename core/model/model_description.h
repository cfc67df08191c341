// What the model is, from config.json / hf_quant_config.json or GGUF KV pairs, completed from the
// tensors where the config is silent.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ws {

// One compressed-tensors config group's weight arguments (quantization_config.config_groups.*.weights).
struct QuantGroup {
  int64_t bits = -1;
  std::string type;                 // "int" or "float"
  std::string strategy;             // tensor, channel, group, block, tensor_group
  int64_t groupSize = -1;
  std::vector<int64_t> blockStructure;
  bool symmetric = true;
  std::string activations;  // input_activations: "static", "dynamic", or "" (weights only)
  std::vector<std::string> targets;  // the modules it quantizes: names, "re:" patterns, class names ("Linear")
};

struct QuantConfig {
  std::string method;               // "fp8", "compressed-tensors", "modelopt", "mxfp4", "mlx", ... ("" = none)
  std::string algo;                 // ModelOpt quant_algo (NVFP4, FP8, ...)
  std::string format;               // compressed-tensors format (pack-quantized, ...)
  std::vector<int64_t> blockSize;   // FP8 weight_block_size
  int64_t groupSize = -1;
  int64_t bits = -1;
  bool symmetric = true;
  std::string strategy;             // group, channel, tensor (the first group's)
  std::string source;               // which file said so
  std::vector<QuantGroup> groups;   // every compressed-tensors config group, in file order
  std::vector<std::string> ignore;  // compressed-tensors: modules left unquantized (names, or "re:" patterns)
  // How activations are quantized: "static" (scales stored with the weights), "dynamic" (computed
  // per token at run time), "" (weights only, or the config does not say); activationsKey names
  // the key that said so. kvCacheQuantized: the config declares a quantized KV cache (kvCacheKey).
  std::string activations, activationsKey;
  bool kvCacheQuantized = false;
  std::string kvCacheKey;
  // GPTQ checkpoint_format: "gptq" (v1, AutoGPTQ's: each stored zero one below the real one) or
  // "gptq_v2" (GPTQModel's internal form, the zero as is); "" when the config does not say (v1).
  std::string checkpointFormat;
  // AWQ version: "gemm" (the default), "gemv", "gemv_fast", "marlin".
  std::string awqVersion;
  // bitsandbytes: bnb_4bit_quant_type ("nf4" or "fp4") when load_in_4bit; load_in_8bit sets bits 8.
  std::string bnbQuantType;
  // Another writer's list of the modules it left unquantized - FP8 ignored_layers (else
  // modules_to_not_convert), AWQ modules_to_not_convert, bitsandbytes llm_int8_skip_modules, ModelOpt
  // exclude_modules - or GPTQ's of those it quantized (modules_in_block_to_quantize, flattened) and
  // its dynamic "-:" patterns (skipped). listKey names the file and key. compressed-tensors' ignore
  // is `ignore` above.
  std::vector<std::string> excluded, gptqIncluded, gptqDynamicSkips;
  std::string listKey;
  // Every key quantization_config declares: engines take some paths only when a key is present
  // at all (vLLM's is_gptq_marlin_compatible needs bits, group_size, sym and desc_act).
  std::vector<std::string> declaredKeys;
  bool declares(const std::string& key) const {
    for (const auto& k : declaredKeys)
      if (k == key) return true;
    return false;
  }

  // The first group that quantizes weights to `bits`-bit `type` ("int"/"float"); null if none.
  const QuantGroup* groupFor(const std::string& type, int64_t bits) const {
    for (const auto& g : groups)
      if (g.type == type && g.bits == bits) return &g;
    return nullptr;
  }
};

// What the attention layers keep per token (the KV cache, core/plan/kv_cache.h), from config.json
// or the GGUF attention keys. -1: the config does not say. `keys` names where each came from, so a
// KV estimate that needs a missing key can name it.
struct AttentionConfig {
  int64_t numHeads = -1, numKvHeads = -1;
  int64_t headDim = -1, vHeadDim = -1;          // K and V widths per head (GQA / MHA)
  int64_t kvLoraRank = -1, qkRopeHeadDim = -1;   // MLA: one latent of kv_lora_rank + rope dims per token
  // DeepSeek-V3.2's sparse attention: an indexer beside each MLA layer with its own key cache.
  // indexTopk > 0 is what engines test for (vLLM 0.11.0 deepseek_v2.py: hasattr(config, "index_topk")).
  int64_t indexTopk = -1, indexHeadDim = -1;
  // GLM-DSA (GLM-5.2): which layers' indexers are "full" and keep keys, the others reusing an
  // earlier layer's top-k (GGUF attention.indexer.types); empty: the file does not say.
  std::vector<bool> indexerFull;
  // Layers whose widths differ (GGUF arrays, Gemma 4): llama.cpp's head_count_kv per layer (empty:
  // numKvHeads everywhere) and key_length_swa / value_length_swa for the sliding layers.
  std::vector<int64_t> kvHeadsPerLayer;
  int64_t headDimSwa = -1, vHeadDimSwa = -1;
  // config.json's per-layer head widths (Gemma 4: per_layer_config, or global_head_dim on the full
  // layers); empty: headDim everywhere.
  std::vector<int64_t> headDimPerLayer;
  // The last N layers reuse earlier layers' keys and values and keep no cache of their own
  // (num_kv_shared_layers, GGUF attention.shared_kv_layers: Gemma 3n, Gemma 4).
  int64_t kvSharedLayers = 0;
  int64_t slidingWindow = -1;
  int64_t slidingWindowPattern = -1;             // every N-th layer is full attention, the rest sliding
  int64_t fullAttentionInterval = -1;            // hybrids (Qwen3-Next): every N-th layer is full, the rest linear
  std::vector<std::string> layerTypes;           // per layer: full_attention, sliding_attention, linear_attention
  // DeepSeek-V4's per-layer compression of its keys: 0 (the sliding window alone), 4 (compressed
  // sparse attention, with the lightning indexer) or 128 (heavily compressed); empty elsewhere.
  std::vector<int64_t> compressRatios;
  // Kimi's KDA linear attention (linear_attn_config.kda_layers, or linear_attention layers with
  // linear_num_heads and linear_head_dim: SGLang 0.5.23 model_config.py uses_kda_attention).
  bool kdaAttention = false;
  bool hybridSwaFlag = false;  // config.json's is_hybrid_swa: SGLang's opt-in to its two sliding-window pools
  // Linear attention (Qwen3-Next Gated DeltaNet): a fixed state per sequence.
  int64_t linearKeyHeads = -1, linearValueHeads = -1, linearKeyHeadDim = -1, linearValueHeadDim = -1, linearConvKernel = -1;
  std::string mambaSsmDtype;  // config.json's mamba_ssm_dtype, where it says (SGLang keeps the SSM state in it, else FP32)
  std::string dtype;                             // the model's own dtype ("bfloat16"): the KV cache's "auto"
  int64_t maxPositions = -1;                     // max_position_embeddings / context_length

  // One layer's figures where layers differ (the fields above where they do not).
  bool slidingAt(int64_t layer) const { return layer >= 0 && size_t(layer) < layerTypes.size() && layerTypes[size_t(layer)] == "sliding_attention"; }
  int64_t kvHeadsAt(int64_t layer) const { return layer >= 0 && size_t(layer) < kvHeadsPerLayer.size() ? kvHeadsPerLayer[size_t(layer)] : numKvHeads; }
  int64_t headDimAt(int64_t layer) const {
    if (layer >= 0 && size_t(layer) < headDimPerLayer.size()) return headDimPerLayer[size_t(layer)];
    return slidingAt(layer) && headDimSwa > 0 ? headDimSwa : headDim;
  }
  int64_t vHeadDimAt(int64_t layer) const {
    if (layer >= 0 && size_t(layer) < headDimPerLayer.size()) return headDimPerLayer[size_t(layer)];
    return slidingAt(layer) && vHeadDimSwa > 0 ? vHeadDimSwa : vHeadDim;
  }
};

// Layer, expert and MTP counts are checked against this before anything loops over them: a config
// that declares 10^18 layers is an error, not an allocation.
constexpr int64_t kMaxPlausibleCount = int64_t(1) << 20;

struct ModelDescription {
  std::string architecture;         // model_type, or general.architecture in GGUF
  std::string source;               // "config.json", "gguf", or "tensors" when inferred
  std::string transformersVersion;
  // config.json's architectures: the model classes an engine's registry resolves (vLLM's
  // ModelRegistry, SGLang's); empty for GGUF and when the config gives none.
  std::vector<std::string> architectures;
  bool visionTower = false;         // config.json declares a vision_config (a multimodal model)
  int64_t numLayers = -1;
  int64_t hiddenSize = -1;
  int64_t intermediateSize = -1;    // dense MLP
  int64_t expertIntermediateSize = -1;
  int64_t numExperts = 0;
  int64_t numSharedExperts = 0;
  int64_t expertsPerToken = -1;
  // Group-limited routing (DeepSeek-V3's n_group / topk_group; GGUF expert_group_count /
  // expert_group_used_count): the router picks this many groups of contiguous experts first.
  int64_t expertGroups = 1, expertGroupsUsed = 1;
  int64_t vocabSize = -1;
  // config.json's first_k_dense_replace and moe_layer_freq as stated (-1: absent; a list-form
  // moe_layer_freq gives 1, its first MoE layer raising firstKDenseReplace; a GGUF's
  // leading_dense_block_count): the SGLang fork that serves KTransformers counts MoE layers by
  // these two alone, whatever mlp_only_layers says (core/plan/kt_offload.h).
  int64_t firstKDenseReplace = -1, moeLayerFreq = -1;
  std::vector<int> moeLayers;
  std::vector<int> denseLayers;
  std::vector<int> mtpLayers;       // layer indices of multi-token-prediction layers
  int64_t numaNodes = 0;            // KTransformers NUMA shards per expert (0: not a KT folder)
  bool mtpUnderLayers = true;       // DeepSeek/GLM keep MTP at model.layers.(L+i); Qwen3-Next under "mtp."
  QuantConfig quant;
  AttentionConfig attention;
  std::string baseModelEpPlan;      // transformers' base_model_ep_plan, as JSON text ("" when absent)
};

}  // namespace ws
