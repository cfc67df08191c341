#include "core/validate/engines/weight_name_rules.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/formats/tokenizer_info.h"
#include "core/io/text_file.h"
#include "core/validate/engines/engine_tables.h"
#include "core/validate/engines/expert_layout_rules.h"
#include "core/validate/engines/quant_params.h"
#include "core/validate/engines/name_list.h"

namespace ws::val::engines {

namespace {

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// The words of the two findings of a load that goes through broken (loadsBroken).
constexpr std::string_view kNeverLoads = "never loads", kLoadsUninitialised = "loads uninitialised", kOverwrites = "the later load overwrites the earlier";
// The shard of a fused expert tensor that fills every expert's shards of its parameter at once.
constexpr std::string_view kAllExperts = "all experts";

// Python's str.replace: every occurrence.
std::string replaceAll(std::string s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

std::string_view moduleOf(std::string_view name) { return name.substr(0, std::min(name.rfind('.'), name.size())); }
std::string_view leafOf(std::string_view name) { return name.substr(name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1); }

// config.json as vLLM's config object holds it: a key it lacks takes the default of the config
// class vLLM builds for its model_type (configDefaults); a key no read class defaults is recorded
// as missing, and the class's parameters are then unknown.
struct Config {
  nlohmann::json j, defaults;
  mutable std::set<std::string> missing;
  const nlohmann::json* find(const char* key) const {
    if (j.contains(key)) return &j[key];
    if (defaults.contains(key)) return &defaults[key];
    missing.insert(key);
    return nullptr;
  }
  bool optionalFlag(const char* key, bool fallback) const {
    const nlohmann::json& v = j.contains(key) ? j[key] : defaults.contains(key) ? defaults[key] : nlohmann::json();
    return v.is_boolean() ? v.get<bool>() : fallback;
  }
  // Present and not None, read with hasattr: absent is not unknown.
  bool present(const char* key) const {
    const nlohmann::json& v = j.contains(key) ? j[key] : defaults.contains(key) ? defaults[key] : nlohmann::json();
    return !v.is_null();
  }
  // A key the class reads with hasattr / getattr and a default of its own: absent is not unknown.
  int64_t optional(const char* key, int64_t fallback) const {
    const nlohmann::json& v = j.contains(key) ? j[key] : defaults.contains(key) ? defaults[key] : nlohmann::json();
    return v.is_number_integer() ? v.get<int64_t>() : fallback;
  }
  bool set(const char* key) const {  // present and not None
    const auto* v = find(key);
    return v && !v->is_null();
  }
  int64_t integer(const char* key, int64_t fallback) const {
    const auto* v = find(key);
    return v && v->is_number_integer() ? v->get<int64_t>() : fallback;
  }
  bool flag(const char* key) const {
    const auto* v = find(key);
    return v && v->is_boolean() && v->get<bool>();
  }
  std::string text(const char* key) const {
    const auto* v = find(key);
    return v && v->is_string() ? v->get<std::string>() : std::string();
  }
  bool lists(const char* key, int64_t n) const {
    const auto* v = find(key);
    if (!v || !v->is_array()) return false;
    for (const auto& e : *v)
      if (e.is_number_integer() && e.get<int64_t>() == n) return true;
    return false;
  }
};

// The defaults of the config class the engine builds for a model_type, for the keys the parameter
// sets read: vLLM's own DeepseekV3Config for deepseek_v3 / deepseek_v32 (transformers_utils/
// config.py:69-70 _CONFIG_REGISTRY, configs/deepseek_v3.py:14-49), else transformers' class
// (models/<type>/configuration_<type>.py), read at 4.57.1 (vLLM 0.11.0 requires >= 4.55.2) and at
// 5.19.0 (SGLang 0.5.23 pins it): the same defaults for these keys at both. DeepSeek-V2's
// transformers class has no moe_layer_freq, which vLLM reads: absent, it stays unknown.
nlohmann::json configDefaults(const std::string& modelType, const std::string& engine) {
  // SGLang 0.5.23 registers no DeepseekV3Config of its own: transformers 5.19.0's, which has no
  // topk_method nor moe_layer_freq (configuration_deepseek_v3.py:89-112) - absent, they stay unknown.
  // Its DeepseekV32Config (configuration_deepseek_v32.py:90-127) has the same defaults for these keys.
  if (engine == "sglang" && (modelType == "deepseek_v3" || modelType == "deepseek_v32"))
    return {{"n_shared_experts", 1}, {"n_routed_experts", 256}, {"kv_lora_rank", 512}, {"q_lora_rank", 1536}, {"first_k_dense_replace", 3}, {"tie_word_embeddings", false}};
  if (modelType == "deepseek_v3" || modelType == "deepseek_v32")
    return {{"n_shared_experts", 1}, {"n_routed_experts", 256}, {"kv_lora_rank", 512}, {"q_lora_rank", 1536}, {"topk_method", "noaux_tc"},
            {"moe_layer_freq", 1},   {"first_k_dense_replace", 3}, {"num_nextn_predict_layers", 1}, {"tie_word_embeddings", false}};
  if (modelType == "deepseek_v2")  // configuration_deepseek_v2.py:161-179
    return {{"tie_word_embeddings", false}, {"first_k_dense_replace", 0}, {"kv_lora_rank", 512}, {"q_lora_rank", 1536}, {"n_routed_experts", 64}, {"n_shared_experts", 2}, {"topk_method", "greedy"}};
  if (modelType == "qwen3_moe")  // configuration_qwen3_moe.py:183-197, 232
    return {{"tie_word_embeddings", false}, {"attention_bias", false}, {"decoder_sparse_step", 1}, {"mlp_only_layers", nlohmann::json::array()}};
  if (modelType == "qwen2_moe")  // configuration_qwen2_moe.py:183-198
    return {{"tie_word_embeddings", false}, {"decoder_sparse_step", 1}, {"shared_expert_intermediate_size", 5632}, {"mlp_only_layers", nlohmann::json::array()}};
  if (modelType == "mixtral") return {{"tie_word_embeddings", false}};  // configuration_mixtral.py:145
  // Each engine's own Qwen3NextConfig (vLLM transformers_utils/configs/qwen3_next.py:214-227,
  // SGLang configs/qwen3_next.py:209-218). vLLM fills an absent layer_types with full attention
  // every fourth layer (248-253); SGLang reads full_attention_interval, which it never defaults.
  if (modelType == "gpt_oss") return {{"attention_bias", true}};  // transformers 5.19.0 configuration_gpt_oss.py:76
  // Qwen3VLMoeTextConfig at 4.57.1 (configuration_qwen3_vl_moe.py:161-186) and 5.19.0 (:78-116):
  // the same for these keys but tie_word_embeddings (false at 4.57.1, true at 5.19.0; SGLang reads
  // the top level's instead).
  // Llama4TextConfig: the same at 4.57.1 (configuration_llama4.py:310-316) and 5.19.0 (156-161).
  if (modelType == "llama4_text") return {{"tie_word_embeddings", false}, {"interleave_moe_layer_step", 1}};
  if (modelType == "qwen3_vl_moe_text")
    return {{"attention_bias", false}, {"decoder_sparse_step", 1}, {"mlp_only_layers", nlohmann::json::array()},
            {"tie_word_embeddings", engine != "vllm"}};
  if (modelType == "qwen3_next")
    return {{"decoder_sparse_step", 1}, {"mlp_only_layers", nlohmann::json::array()}, {"shared_expert_intermediate_size", 512}};
  if (modelType == "glm4_moe")  // configuration_glm4_moe.py:184-198
    return {{"tie_word_embeddings", false}, {"attention_bias", false}, {"n_shared_experts", 1}, {"n_routed_experts", 128}, {"first_k_dense_replace", 1}, {"use_qk_norm", false}};
  return nlohmann::json::object();
}

// What model.named_parameters() yields for one class and config, in the checkpoint's naming
// (model.layers.L...): the parameters a checkpoint must fill, the modules holding them, and the
// shards of each fused one (a FusedMoE's: every expert's w1 / w3 and w2).
struct Parameters {
  std::set<std::string, std::less<>> names;
  std::set<std::string, std::less<>> modules;
  std::map<std::string, std::vector<std::string>, std::less<>> shards;
  std::set<std::string, std::less<>> expertModules;
  // Modules the class builds with quant_config=None: exactly the parameters listed, whatever the
  // checkpoint's quantization - a scale stored for one has no parameter to go to.
  std::set<std::string, std::less<>> unquantized;
  int64_t experts = 0;
  // Suffixes of checkpoint names the loader's stream consumes before load_weights sees them
  // (DeepSeek-V4's wo_a scales, dequantized into their BF16 weights).
  std::vector<std::string> consumedSuffixes;
  std::string unknown;  // why the class's parameters are not known here ("" when they are)
  std::string refusal;  // why the engine cannot build the class from this config ("" when it can)

  void add(const std::string& name, std::vector<std::string> ids = {}) {
    names.insert(name);
    modules.insert(std::string(moduleOf(name)));
    if (!ids.empty()) shards[name] = std::move(ids);
  }
  void fused(const std::string& module, std::vector<std::string> ids, bool bias = false) {
    if (bias) add(module + ".bias", ids);
    add(module + ".weight", std::move(ids));
  }
  // FusedMoE's w13_weight [E, 2I, H] and w2_weight [E, H, I], no biases unless has_bias, which
  // none of these classes passes (layers/fused_moe/layer.py:362-391, 959).
  void fusedExperts(const std::string& module) {
    add(module + ".w13_weight");
    add(module + ".w2_weight");
    expertModules.insert(module);
  }
  void dense(const std::string& at) {  // a dense MLP: MergedColumnParallelLinear gate_up_proj, down_proj
    fused(at + "gate_up_proj", {"0", "1"});
    add(at + "down_proj.weight");
  }
  // Attention with q, k and v fused into qkv_proj (QKVParallelLinear) and its o_proj.
  void attention(const std::string& at, bool qkvBias) {
    fused(at + "self_attn.qkv_proj", {"q", "k", "v"}, qkvBias);
    add(at + "self_attn.o_proj.weight");
  }
  // A sparse block: its router's gate and the FusedMoE.
  void routed(const std::string& block) {
    add(block + "gate.weight");
    fusedExperts(block + "experts");
  }
  void weightAndBias(const std::string& module) {
    add(module + ".weight");
    add(module + ".bias");
  }
  void norms(const std::string& at) {
    add(at + "input_layernorm.weight");
    add(at + "post_attention_layernorm.weight");
  }
  void ends(bool lmHead) {
    add("model.embed_tokens.weight");
    add("model.norm.weight");
    if (lmHead) add("lm_head.weight");  // a tied head shares the embedding's tensor: named_parameters() yields it once
  }
};

std::string layer(int64_t l) { return "model.layers." + std::to_string(l) + "."; }

// A Qwen MoE layer is sparse where it is not in mlp_only_layers and (L+1) % decoder_sparse_step
// == 0 (vLLM qwen3_moe.py:325-338, qwen2_moe.py:291-299); SGLang builds every layer sparse.
bool sparseQwenLayer(const Config& c, int64_t l, int64_t experts, const WeightLoaderRow& row) {
  if (row.everyLayerSparse) return true;
  return !c.lists("mlp_only_layers", l) && experts > 0 && (l + 1) % std::max<int64_t>(1, c.integer("decoder_sparse_step", 1)) == 0;
}

// Layer L's MLP in Qwen2-MoE and Qwen3-Next: a sparse block (the Qwen rule) with a shared expert
// where shared_expert_intermediate_size > 0 and its shared_expert_gate always (vLLM
// qwen2_moe.py:130-144, qwen3_next.py:111-143), else a dense MLP.
void qwenMlpWithSharedExpert(const Config& c, int64_t l, const WeightLoaderRow& row, const std::string& at, Parameters& p) {
  if (!sparseQwenLayer(c, l, p.experts, row)) return p.dense(at + "mlp.");
  p.routed(at + "mlp.");
  if (c.integer("shared_expert_intermediate_size", 0) > 0) p.dense(at + "mlp.shared_expert.");
  p.add(at + "mlp.shared_expert_gate.weight");
}

// Qwen3MoeModel (vLLM qwen3_moe.py): qkv_proj with attention_bias (233), o_proj (237), q_norm / k_norm
// (265-266), a sparse block where L is not in mlp_only_layers and (L+1) % decoder_sparse_step == 0
// (325-338) with its gate (156), the head tied by tie_word_embeddings (599-600).
Parameters qwen3Moe(const Config& c, int64_t layers, int64_t experts, const WeightLoaderRow& row) {
  Parameters p;
  p.experts = experts;
  for (int64_t l = 0; l < layers; ++l) {
    const std::string at = layer(l);
    p.attention(at, c.flag("attention_bias"));
    if (row.engine == "sglang" && c.flag("attention_bias")) p.add(at + "self_attn.o_proj.bias");  // SGLang qwen3_moe.py:539
    p.add(at + "self_attn.q_norm.weight");
    p.add(at + "self_attn.k_norm.weight");
    p.norms(at);
    if (sparseQwenLayer(c, l, p.experts, row)) {
      p.routed(at + "mlp.");
    } else {
      p.dense(at + "mlp.");
    }
  }
  p.ends(!(row.headTied && c.flag("tie_word_embeddings")));
  return p;
}

// Qwen2MoeModel (qwen2_moe.py): qkv_proj always with a bias (214), the sparse rule of Qwen3
// (291-299), a shared expert where shared_expert_intermediate_size > 0 (130-141) and its
// shared_expert_gate always (142-144), the head tied by tie_word_embeddings (525-526).
Parameters qwen2Moe(const Config& c, int64_t layers, int64_t experts, const WeightLoaderRow& row) {
  Parameters p;
  p.experts = experts;
  for (int64_t l = 0; l < layers; ++l) {
    const std::string at = layer(l);
    // vLLM: always a bias (qwen2_moe.py:214); SGLang: qkv_bias, default true (qwen2_moe.py:1002)
    p.attention(at, row.engine != "sglang" || c.optionalFlag("qkv_bias", true));
    p.norms(at);
    qwenMlpWithSharedExpert(c, l, row, at, p);
  }
  p.ends(!(row.headTied && c.flag("tie_word_embeddings")));
  return p;
}

// MixtralModel (mixtral.py): every layer sparse (244-251), qkv_proj and o_proj without biases
// (176-191), block_sparse_moe.gate (106-111), the head tied by tie_word_embeddings (511-512).
Parameters mixtral(const Config& c, int64_t layers, int64_t experts, const WeightLoaderRow& row) {
  Parameters p;
  p.experts = experts;
  for (int64_t l = 0; l < layers; ++l) {
    const std::string at = layer(l);
    p.attention(at, false);
    p.norms(at);
    p.routed(at + "block_sparse_moe.");
  }
  p.ends(!(row.headTied && c.flag("tie_word_embeddings")));  // lm_head.weight = embed_tokens.weight when tied
  return p;
}

// Whether SGLang 0.5.23 builds no indexer on layer l of a DSA model because it reuses the previous
// layer's top-k (configs/model_config.py:488-523 dsa_layer_skips_topk, deepseek_v2.py:2114-2117):
// indexer_types "shared", else every layer off a multiple of cli_factor, else index_topk_pattern's
// "S", else index_topk_freq from index_skip_topk_offset (absent, from layer 1). For glm_moe_dsa the
// config class of transformers 5.19.0 (SGLang's pin) has already filled indexer_types from the
// pattern or the frequency and offset (configuration_glm_moe_dsa.py:135-147), so cli_factor is
// never reached there.
bool sglangSkipsTopk(const Config& c, int64_t l) {
  const auto& j = c.j;
  const bool glm = j.value("model_type", "") == "glm_moe_dsa";
  if (j.contains("indexer_types") && j["indexer_types"].is_array()) {
    const auto& t = j["indexer_types"];
    return l < int64_t(t.size()) && t[size_t(l)] == "shared";
  }
  if (const int64_t cli = c.optional("cli_factor", 1); !glm && cli > 1) return l % cli != 0;
  if (j.contains("index_topk_pattern") && j["index_topk_pattern"].is_string()) {
    const std::string pattern = j["index_topk_pattern"];
    return l < int64_t(pattern.size()) && pattern[size_t(l)] == 'S';
  }
  const int64_t freq = std::max<int64_t>(1, c.optional("index_topk_freq", 1));
  const int64_t offset = c.optional("index_skip_topk_offset", 2) > 0 ? c.optional("index_skip_topk_offset", 2) : 2;
  return std::max<int64_t>(l - offset + 1, 0) % freq != 0;
}

// DeepseekV2ForCausalLM (deepseek_v2.py) with MLA, vLLM's default for these configs: with a
// q_lora_rank fused_qkv_a_proj, q_a_layernorm and q_b_proj (878-896), else q_proj and
// kv_a_proj_with_mqa (886, 903); kv_a_layernorm, kv_b_proj, o_proj (909-917); a sparse layer
// where L >= first_k_dense_replace and L % moe_layer_freq == 0 (1034-1036) with its gate (158),
// e_score_correction_bias under topk_method noaux_tc (163-167) and shared_experts where
// n_shared_experts is set (210); only num_hidden_layers layers (1135); lm_head never tied (1211).
Parameters deepseekV2(const Config& c, int64_t layers, int64_t experts, const WeightLoaderRow& row) {
  Parameters p;
  // DeepSeek-V3.2's sparse-attention indexer. vLLM 0.11.0 builds one in every layer wherever the
  // config has index_topk (deepseek_v2.py:937-939 hasattr) and reads none of the later variants'
  // keys (indexer_types, cli_factor, index_topk_freq / _pattern, index_kpool, index_k_norm_type,
  // indexer_rope_interleave: not one occurs in its source). SGLang 0.5.23 builds one on the DSA
  // architectures (model_config.py:191-211 is_deepseek_dsa; of this row's, not DeepseekV2) where
  // the layer computes its own top-k (sglangSkipsTopk); its pooled-key variant (index_kpool > 1,
  // IndexerKPool) was not read.
  const bool sglang = row.engine == "sglang";
  const std::string arch = c.j.contains("architectures") && c.j["architectures"].is_array() && !c.j["architectures"].empty() && c.j["architectures"][0].is_string()
                               ? c.j["architectures"][0].get<std::string>() : "";
  const bool indexer = c.j.contains("index_topk") && (!sglang || (arch != "DeepseekV2ForCausalLM" && !c.j["index_topk"].is_null()));
  if (sglang && indexer && c.optional("index_kpool", 1) > 1) p.unknown = "SGLang's pooled indexer keys (index_kpool > 1, IndexerKPool) were not read";
  // SGLang dsa_indexer.py:303-307, 356-386: on CUDA, an indexer with interleaved rope (GLM-5.2's
  // indexer_rope_interleave) holds wk and weights_proj as one BF16 wk_weights_proj, which the two
  // checkpoint tensors fill (deepseek_weight_loader.py:115-170); SGLANG_DISABLE_DSA_INDEXER_FUSION
  // keeps them apart, and either way both are consumed. index_k_norm_type "rms" makes k_norm an
  // RMSNorm, weight only.
  const bool fusedKey = sglang && c.optionalFlag("indexer_rope_interleave", false);
  const bool rmsKeyNorm = sglang && c.j.value("index_k_norm_type", "layer") == "rms";
  if (!c.set("kv_lora_rank")) p.unknown = "a DeepSeek config without kv_lora_rank (not MLA) was not read";
  p.experts = experts;
  const bool qLora = c.set("q_lora_rank");
  for (int64_t l = 0; l < layers; ++l) {
    const std::string at = layer(l);
    if (qLora && row.engine == "sglang") {  // SGLang deepseek_v2.py:2069-2085
      p.fused(at + "self_attn.fused_qkv_a_proj_with_mqa", {"q_a", "kv_a"});
      p.add(at + "self_attn.q_a_layernorm.weight");
      p.add(at + "self_attn.q_b_proj.weight");
    } else if (qLora) {
      p.fused(at + "self_attn.fused_qkv_a_proj", {"0", "1"});
      p.add(at + "self_attn.q_a_layernorm.weight");
      p.add(at + "self_attn.q_b_proj.weight");
    } else {
      p.add(at + "self_attn.q_proj.weight");
      p.add(at + "self_attn.kv_a_proj_with_mqa.weight");
    }
    p.add(at + "self_attn.kv_a_layernorm.weight");
    p.add(at + "self_attn.kv_b_proj.weight");
    p.add(at + "self_attn.o_proj.weight");
    if (indexer && !(sglang && sglangSkipsTopk(c, l))) {
      // vLLM deepseek_v2.py:744-757 Indexer: wq_b and wk without biases, a LayerNorm k_norm (weight
      // and bias, layernorm.py:381-391), and weights_proj a ReplicatedLinear left at its default
      // bias=True (linear.py:317) - a bias no DeepSeek checkpoint stores (vllm#30036, PR #26889).
      // SGLang dsa_indexer.py:344-383: the same modules, every one bias=False.
      const std::string ix = at + "self_attn.indexer.";
      p.add(ix + "wq_b.weight");
      if (fusedKey) {
        p.fused(ix + "wk_weights_proj", {"wk", "weights_proj"});
        p.unquantized.insert(ix + "wk_weights_proj");  // params_dtype BF16, no quant_config
      } else {
        p.add(ix + "wk.weight");
        if (sglang) p.add(ix + "weights_proj.weight");
        else p.weightAndBias(ix + "weights_proj");
        p.unquantized.insert(ix + "weights_proj");  // quant_config=None in both (vLLM :757-760, SGLang dsa_indexer.py:368-373)
      }
      if (rmsKeyNorm) p.add(ix + "k_norm.weight");
      else p.weightAndBias(ix + "k_norm");
    }
    p.norms(at);
    if (c.set("n_routed_experts") && l >= c.integer("first_k_dense_replace", 0) && l % std::max<int64_t>(1, c.integer("moe_layer_freq", 1)) == 0) {
      p.routed(at + "mlp.");
      // The router: vLLM's ReplicatedLinear with quant_config=None (deepseek_v2.py:158-162), SGLang's
      // MoEGate a bare nn.Parameter (deepseek_v2.py:497-517): never a quantized module.
      p.unquantized.insert(at + "mlp.gate");
      if (c.text("topk_method") == "noaux_tc") p.add(at + "mlp.gate.e_score_correction_bias");
      // vLLM: n_shared_experts set (deepseek_v2.py:210); SGLang: above 0 (deepseek_v2.py:864-866)
      if (row.engine == "sglang" ? c.integer("n_shared_experts", 0) > 0 : c.set("n_shared_experts")) p.dense(at + "mlp.shared_experts.");
    } else {
      p.dense(at + "mlp.");
    }
  }
  p.ends(!(row.headTied && c.flag("tie_word_embeddings")));
  return p;
}

// DeepseekV4ForCausalLM (SGLang 0.5.23 models/deepseek_v4.py, on CUDA with its default
// environment: SGLANG_OPT_FUSE_WQA_WKV and SGLANG_OPT_FP8_WO_A_GEMM on, environ.py:1871, 1885).
// Its config is transformers 5.19.0's DeepseekV3Config under SGLang's alias
// (utils/hf_transformers/common.py:204-224), so a key that is no field of it has no default and
// is read as an attribute. Every layer (DeepseekV4DecoderLayerBase, :3107-3213): six hyper-
// connection tensors (hc_attn_/hc_ffn_ fn, base, scale), its two norms; MQALayer (:1008-1200,
// :1370-1515) - attn_sink, wq_a and wkv fused as wqkv_a, q_norm, wq_b, kv_norm, wo_a (quantized
// only where wo_a_fp8: an fp8 config with 128 x 128 blocks, :280-288), wo_b; a compressor (ape,
// wkv_gate, norm: compressor.py:59-78) on ratio-4 and ratio-128 layers, an indexer (wq_b,
// weights_proj, its own compressor: indexer.py:1178-1210) on ratio-4 ones; DeepseekV2MoE on every
// layer (deepseek_v2.py:651-897) - the router's gate, e_score_correction_bias under noaux_tc
// except on the first num_hash_layers, whose HashTopK holds tid2eid instead
// (hash_topk.py:66-70), FusedMoE experts, shared experts. Top level (:3754-3852, 4642-4735):
// embed_tokens, norm, hc_head_fn / _base / _scale, lm_head unless tied. No MTP parameters (the
// draft is DeepseekV4ForCausalLMNextN).
Parameters deepseekV4(const Config& c, int64_t layers, int64_t experts, const QuantConfig& quant) {
  Parameters p;
  p.experts = experts;
  const nlohmann::json ratios = c.j.value("compress_ratios", nlohmann::json());
  auto ratioOf = [&](int64_t l) { return ratios.is_array() && l < int64_t(ratios.size()) && ratios[size_t(l)].is_number_integer() ? ratios[size_t(l)].get<int64_t>() : int64_t(-1); };
  bool compressed = false, indexed = false;
  for (int64_t l = 0; l < layers; ++l) compressed = compressed || ratioOf(l) > 0, indexed = indexed || ratioOf(l) == 4;
  // The attributes construction reads without a default (deepseek_v4.py:1036-1057, 1171-1193,
  // 3178-3188; deepseek_v2.py:519, 775; configs/model_config.py:1425; dsv4/indexer.py:1170-1173).
  std::vector<std::string> lacking;
  for (const char* key : {"sliding_window", "o_groups", "o_lora_rank", "compress_ratios", "hc_mult", "hc_sinkhorn_iters", "hc_eps", "topk_method", "scoring_func"})
    if (!c.j.contains(key)) lacking.push_back(key);
  if (compressed && !c.j.contains("compress_rope_theta")) lacking.push_back("compress_rope_theta");
  if (indexed)
    for (const char* key : {"index_n_heads", "index_head_dim", "index_topk"})
      if (!c.j.contains(key)) lacking.push_back(key);
  if (!lacking.empty()) {
    std::string keys;
    for (const auto& k : lacking) keys += (keys.empty() ? "" : ", ") + k;
    p.refusal = "config.json lacks " + keys + ", which SGLang reads as attributes of its alias of transformers 5.19.0's DeepseekV3Config (no such fields): AttributeError";
    return p;
  }
  if (!ratios.is_array() || int64_t(ratios.size()) < layers) {
    p.unknown = "compress_ratios is not a list of num_hidden_layers entries";
    return p;
  }
  for (int64_t l = 0; l < layers; ++l)
    if (const int64_t r = ratioOf(l); r != 0 && r != 4 && r != 128) {
      p.unknown = "a compress ratio of " + std::to_string(r) + " (DeepSeek-V4.1's compressors, deepseek_v4.py:1482-1497) was not read";
      return p;
    }
  if (c.j.value("num_key_value_heads", int64_t(1)) != 1) {
    p.refusal = "num_key_value_heads must be 1 (assert at deepseek_v4.py:1060)";
    return p;
  }
  // Compressed layers take their YaRN base from the rope's original_max_position_embeddings
  // (:1181-1189): a flat rope_scaling without it is a KeyError; what transformers 5.19.0 makes of
  // a nested rope_parameters for SGLang's get_rope_config was not traced.
  if (compressed) {
    const nlohmann::json rope = c.j.value("rope_scaling", nlohmann::json());
    if (rope.is_object() && !rope.contains("original_max_position_embeddings")) {
      p.refusal = "rope_scaling lacks original_max_position_embeddings, which every compressed layer reads (deepseek_v4.py:1185): KeyError";
      return p;
    }
    if (!rope.is_object()) {
      p.unknown = "which rope SGLang's get_rope_config reads from a config without a flat rope_scaling was not traced";
      return p;
    }
  }
  // wo_a is quantized only under an fp8 config with 128 x 128 blocks (wo_a_fp8_gemm_enabled,
  // :280-288); otherwise the stream dequantizes a stored FP8 wo_a with its scale into BF16 before
  // load_weights sees it (_prepare_deepseek_v4_weights, :5701-5743), the scale consumed.
  const bool woAFp8 = quant.method == "fp8" && quant.blockSize == std::vector<int64_t>{128, 128};
  if (!woAFp8) p.consumedSuffixes.push_back(".wo_a.scale");
  const int64_t hashLayers = c.optional("num_hash_layers", 0);
  const bool noauxTc = c.j.value("topk_method", "") == "noaux_tc";
  for (int64_t l = 0; l < layers; ++l) {
    const std::string at = layer(l);
    for (const char* hc : {"hc_attn_fn", "hc_attn_base", "hc_attn_scale", "hc_ffn_fn", "hc_ffn_base", "hc_ffn_scale"}) p.add(at + hc);
    p.norms(at);
    const std::string a = at + "self_attn.";
    p.add(a + "attn_sink");
    p.fused(a + "wqkv_a", {"wq_a", "wkv"});
    for (const char* n : {"q_norm.weight", "wq_b.weight", "kv_norm.weight", "wo_a.weight", "wo_b.weight"}) p.add(a + n);
    if (!woAFp8) p.unquantized.insert(a + "wo_a");
    auto compressor = [&](const std::string& at) {
      p.add(at + "ape");
      p.fused(at + "wkv_gate", {"wkv", "wgate"});
      p.add(at + "norm.weight");
      p.unquantized.insert(at + "wkv_gate");  // built without the quantization (compressor.py:67-75)
    };
    if (ratioOf(l) == 4 || ratioOf(l) == 128) compressor(a + "compressor.");
    if (ratioOf(l) == 4) {
      p.add(a + "indexer.wq_b.weight");
      p.add(a + "indexer.weights_proj.weight");
      p.unquantized.insert(a + "indexer.weights_proj");  // indexer.py:1186-1198
      compressor(a + "indexer.compressor.");
    }
    p.add(at + "mlp.gate.weight");
    p.unquantized.insert(at + "mlp.gate");
    if (l < hashLayers) p.add(at + "mlp.topk.tid2eid");
    else if (noauxTc) p.add(at + "mlp.gate.e_score_correction_bias");
    p.fusedExperts(at + "mlp.experts");
    if (c.optional("n_shared_experts", 0) > 0) p.dense(at + "mlp.shared_experts.");
  }
  p.add("model.hc_head_fn");
  p.add("model.hc_head_base");
  p.add("model.hc_head_scale");
  p.ends(!c.optionalFlag("tie_word_embeddings", false));
  return p;
}

// Glm4MoeModel (glm4_moe.py): qkv_proj with attention_bias (269-273), q_norm / k_norm under
// use_qk_norm (302-304), a sparse layer where L >= first_k_dense_replace (363-364, no
// moe_layer_freq) with its gate (124), e_score_correction_bias always (130) and shared_experts
// where n_shared_experts is set (149-160); lm_head never tied (633).
Parameters glm4Moe(const Config& c, int64_t layers, int64_t experts, const WeightLoaderRow& row) {
  Parameters p;
  p.experts = experts;
  for (int64_t l = 0; l < layers; ++l) {
    const std::string at = layer(l);
    p.attention(at, c.flag("attention_bias"));
    if (c.flag("use_qk_norm")) {
      p.add(at + "self_attn.q_norm.weight");
      p.add(at + "self_attn.k_norm.weight");
    }
    p.norms(at);
    if (c.set("n_routed_experts") && l >= c.integer("first_k_dense_replace", 0)) {
      p.routed(at + "mlp.");
      p.add(at + "mlp.gate.e_score_correction_bias");
      if (c.set("n_shared_experts")) p.dense(at + "mlp.shared_experts.");
    } else {
      p.dense(at + "mlp.");
    }
  }
  p.ends(!(row.headTied && c.flag("tie_word_embeddings")));
  return p;
}

// GptOssModel. vLLM (gpt_oss.py): embedding (239), per layer qkv and o_proj with their biases
// (QKVParallelLinear / RowParallelLinear default bias=True, 87-101), sinks (78), the router with
// its bias (nn.Linear, 153), a FusedMoE with has_bias (156-167) that takes each fused tensor whole,
// the two norms (202-203); norm (251); lm_head always (674). SGLang (gpt_oss.py): qkv_proj and
// o_proj under self_attn with biases where attention_bias (transformers 5.19.0's default true,
// 413-442), sinks, the router with its bias (257-264), the FusedMoE's w13_weight / w2_weight and
// their w13_weight_bias / w2_weight_bias (with_bias, 240-253), embed_tokens (658-666), norm,
// lm_head never tied (768-774).
Parameters gptOss(const Config& c, int64_t layers, int64_t experts, const WeightLoaderRow& row) {
  Parameters p;
  p.experts = experts;
  const bool sglang = row.engine == "sglang";
  const bool bias = !sglang || c.optionalFlag("attention_bias", true);
  for (int64_t l = 0; l < layers; ++l) {
    const std::string at = layer(l), attn = at + (sglang ? "self_attn." : "attn.");
    p.fused(attn + (sglang ? "qkv_proj" : "qkv"), {"q", "k", "v"}, bias);
    p.add(attn + "o_proj.weight");
    if (bias) p.add(attn + "o_proj.bias");
    p.add(attn + "sinks");
    p.add(at + "mlp.router.weight");
    p.add(at + "mlp.router.bias");
    // Plain parameters, not expertModules: each is filled by one whole tensor, and a scale
    // (w13_weight_scale) fills only itself.
    for (const char* leaf : {".w13_weight", ".w2_weight"}) p.add(at + "mlp.experts" + leaf);
    p.add(at + "mlp.experts" + (sglang ? ".w13_weight_bias" : ".w13_bias"));
    p.add(at + "mlp.experts" + (sglang ? ".w2_weight_bias" : ".w2_bias"));
    p.norms(at);
  }
  p.add(sglang ? "model.embed_tokens.weight" : "model.embedding.weight");
  p.add("model.norm.weight");
  p.add("lm_head.weight");
  return p;
}

// Qwen3NextModel. vLLM (qwen3_next.py): layer_types[L] (its config fills an absent list with full
// attention every fourth layer) picks the GatedDeltaNet - conv1d, in_proj_qkvz, in_proj_ba, dt_bias,
// A_log, norm, out_proj (236-308) - or full attention - qkv_proj with a bias under qkv_bias, o_proj,
// q_norm / k_norm (646-692); the Qwen sparse rule (768-776), a sparse block with a shared expert
// where shared_expert_intermediate_size > 0 and its gate always (111-143), else a dense MLP;
// attn_layer_scale / ffn_layer_scale under layer_scale (790-805); lm_head never tied (1059-1067).
// SGLang (qwen3_next.py): full attention where (L+1) % full_attention_interval == 0
// (configs/qwen3_next.py:259-269; layer_types is dropped), its qkv_proj (no bias), o_proj, q_norm
// and k_norm on the decoder layer itself (665-732); in_proj_qkvz merged of four shards and
// in_proj_ba of two (168-184), either loaded whole; every layer sparse (543-559).
Parameters qwen3Next(const Config& c, int64_t layers, int64_t experts, const WeightLoaderRow& row) {
  Parameters p;
  p.experts = experts;
  const bool sglang = row.engine == "sglang";
  int64_t interval = 4;
  const nlohmann::json* types = nullptr;
  if (sglang) {
    if (!c.present("full_attention_interval")) {
      p.refusal = "config.json has no full_attention_interval, which SGLang's Qwen3NextConfig.layers_block_type reads with no default "
                  "(configs/qwen3_next.py:264): building the model raises AttributeError";
      return p;
    }
    interval = c.optional("full_attention_interval", 0);
  } else if (c.present("layer_types")) {
    types = c.find("layer_types");
    if (!types->is_array() || int64_t(types->size()) < layers) p.unknown = "layer_types is not a list of num_hidden_layers entries";
  }
  if (interval < 1) p.unknown = "full_attention_interval is not a positive integer";
  if (!p.unknown.empty()) return p;
  for (int64_t l = 0; l < layers; ++l) {
    const std::string at = layer(l);
    const bool full = types ? (*types)[size_t(l)] == "full_attention" : (l + 1) % interval == 0;
    if (full && sglang) {
      p.fused(at + "qkv_proj", {"q", "k", "v"});
      for (const char* leaf : {"o_proj.weight", "q_norm.weight", "k_norm.weight"}) p.add(at + leaf);
    } else if (full) {
      p.attention(at, c.optionalFlag("qkv_bias", false));
      p.add(at + "self_attn.q_norm.weight");
      p.add(at + "self_attn.k_norm.weight");
    } else {
      const std::string gdn = at + "linear_attn.";
      p.add(gdn + "in_proj_qkvz.weight", sglang ? std::vector<std::string>{"0,1,2", "3"} : std::vector<std::string>{});
      p.add(gdn + "in_proj_ba.weight", sglang ? std::vector<std::string>{"0", "1"} : std::vector<std::string>{});
      for (const char* leaf : {"conv1d.weight", "dt_bias", "A_log", "norm.weight", "out_proj.weight"}) p.add(gdn + leaf);
    }
    p.norms(at);
    if (!sglang && c.optionalFlag("layer_scale", false)) {
      p.add(at + "attn_layer_scale");
      p.add(at + "ffn_layer_scale");
    }
    qwenMlpWithSharedExpert(c, l, row, at, p);
  }
  p.ends(true);
  return p;
}

// Qwen3-VL's vision tower (vLLM qwen3_vl.py Qwen3_VisionTransformer; SGLang qwen3_vl.py): the
// patch embedding (a Conv3d with a bias, 109-113) and pos_embed (293); per block norm1 / norm2
// (LayerNorm), attn.qkv (one fused parameter with a bias - SGLang's VisionAttention names it
// qkv_proj) and attn.proj, mlp.linear_fc1 / linear_fc2 (134-147; qwen2_5_vl.py:290-303); the
// merger and one deepstack merger per deepstack_visual_indexes entry, each norm, linear_fc1,
// linear_fc2 (300-321); every one with a bias. vision_config's depth and deepstack_visual_indexes
// default as transformers 4.57.1's Qwen3VLMoeVisionConfig (27; [8, 16, 24]).
void qwen3VisionTower(const nlohmann::json& vision, bool sglang, Parameters& p) {
  const nlohmann::json v = vision.is_object() ? vision : nlohmann::json::object();
  const int64_t depth = v.value("depth", int64_t(27));
  const size_t deepstack = v.contains("deepstack_visual_indexes") && v["deepstack_visual_indexes"].is_array() ? v["deepstack_visual_indexes"].size() : 3;
  p.weightAndBias("visual.patch_embed.proj");
  p.add("visual.pos_embed.weight");
  for (int64_t b = 0; b < depth; ++b) {
    const std::string at = "visual.blocks." + std::to_string(b) + ".";
    for (const char* m : {"norm1", "norm2", "attn.proj", "mlp.linear_fc1", "mlp.linear_fc2"}) p.weightAndBias(at + m);
    p.fused(at + (sglang ? "attn.qkv_proj" : "attn.qkv"), {"q", "k", "v"}, true);
  }
  for (const char* m : {"norm", "linear_fc1", "linear_fc2"}) p.weightAndBias(std::string("visual.merger.") + m);
  for (size_t k = 0; k < deepstack; ++k)
    for (const char* m : {"norm", "linear_fc1", "linear_fc2"}) p.weightAndBias("visual.deepstack_merger_list." + std::to_string(k) + "." + m);
}

// Llama 4's vision tower and projector (vLLM mllama4.py): the patch embedding's linear (no bias),
// class_embedding, positional_embedding_vlm, layernorm_pre / _post; per layer of
// vision_config.num_hidden_layers (transformers' default 34) q / k / v fused into qkv_proj, o_proj,
// mlp.fc1 / fc2 and the two norms, all with biases (95-523); the vision adapter's fc1 / fc2 with
// biases only under multi_modal_projector_bias (default false, 200-204); the projector's linear_1
// (146-153).
void llama4VisionTower(const nlohmann::json& vision, Parameters& p) {
  const nlohmann::json v = vision.is_object() ? vision : nlohmann::json::object();
  for (const char* n : {"patch_embedding.linear.weight", "class_embedding", "positional_embedding_vlm"}) p.add(std::string("vision_model.") + n);
  p.weightAndBias("vision_model.layernorm_pre");
  p.weightAndBias("vision_model.layernorm_post");
  for (int64_t l = 0; l < v.value("num_hidden_layers", int64_t(34)); ++l) {
    const std::string at = "vision_model.model.layers." + std::to_string(l) + ".";
    p.fused(at + "self_attn.qkv_proj", {"q", "k", "v"}, true);
    for (const char* m : {"self_attn.o_proj", "mlp.fc1", "mlp.fc2", "input_layernorm", "post_attention_layernorm"}) p.weightAndBias(at + m);
  }
  const bool adapterBias = v.value("multi_modal_projector_bias", false);
  for (const char* m : {"vision_model.vision_adapter.mlp.fc1", "vision_model.vision_adapter.mlp.fc2"}) adapterBias ? p.weightAndBias(m) : p.add(std::string(m) + ".weight");
  p.add("multi_modal_projector.linear_1.weight");
}

// Llama4ForConditionalGeneration's language model (vLLM llama4.py Llama4Model, SGLang llama4.py):
// qkv_proj and o_proj without biases whatever attention_bias says (vLLM 300-301, SGLang 398-399);
// a MoE layer where (L+1) % interleave_moe_layer_step == 0 - moe_layers is read by neither (vLLM
// 305-306; SGLang 438-441, where a step of 0 makes every layer MoE and vLLM's none) - with its
// router, FusedMoE and shared expert (gate_up_proj and down_proj), else a dense gate_up_proj /
// down_proj; the two norms; embed_tokens, norm, and lm_head unless text_config ties it. vLLM
// builds the vision tower too; SGLang, without --enable-multimodal, none.
Parameters llama4(const Config& c, const Config& text, int64_t layers, int64_t experts, const WeightLoaderRow& row) {
  Parameters p;
  p.experts = experts;
  const bool sglang = row.engine == "sglang";
  const int64_t step = text.integer("interleave_moe_layer_step", 1);
  for (int64_t l = 0; l < layers; ++l) {
    const std::string at = "language_model.model.layers." + std::to_string(l) + ".";
    p.fused(at + "self_attn.qkv_proj", {"q", "k", "v"});
    p.add(at + "self_attn.o_proj.weight");
    p.norms(at);
    const bool moe = step > 0 ? (l + 1) % step == 0 : sglang && experts > 0;
    if (moe) {
      p.add(at + "feed_forward.router.weight");
      p.fusedExperts(at + "feed_forward.experts");
      p.dense(at + "feed_forward.shared_expert.");
    } else {
      p.dense(at + "feed_forward.");
    }
  }
  p.add("language_model.model.embed_tokens.weight");
  p.add("language_model.model.norm.weight");
  if (!text.flag("tie_word_embeddings")) p.add("language_model.lm_head.weight");
  if (!sglang) llama4VisionTower(c.j.contains("vision_config") ? c.j["vision_config"] : nlohmann::json(), p);
  return p;
}

// `p` with every name under `prefix`.
Parameters prefixed(const Parameters& p, const std::string& prefix) {
  Parameters out;
  out.experts = p.experts, out.unknown = p.unknown, out.refusal = p.refusal;
  for (const auto& name : p.names) {
    const auto ids = p.shards.find(name);
    out.add(prefix + name, ids == p.shards.end() ? std::vector<std::string>{} : ids->second);
  }
  for (const auto& m : p.expertModules) out.expertModules.insert(prefix + m);
  return out;
}

// Qwen3VLMoeForConditionalGeneration: the Qwen3-MoE language model of text_config (vLLM
// qwen3_vl_moe.py Qwen3MoeLLMModel on Qwen3MoeModel's layers; SGLang's every layer sparse) beside
// the vision tower. vLLM nests it under language_model. (model. and lm_head.) and ties the head by
// text_config.tie_word_embeddings (qwen3_vl_moe.py:293-301); SGLang keeps model. and lm_head. and
// ties it by the top level's tie_word_embeddings, which it copies over text_config's (qwen3_vl.py
// 1349-1368).
Parameters qwen3VlMoe(const Config& c, const Config& text, int64_t layers, int64_t experts, const WeightLoaderRow& row) {
  const bool sglang = row.engine == "sglang";
  Parameters lm = qwen3Moe(text, layers, experts, row);
  lm.names.erase("lm_head.weight");
  lm.modules.erase("lm_head");
  const bool tied = sglang ? c.optionalFlag("tie_word_embeddings", false) : text.flag("tie_word_embeddings");
  if (!tied) lm.add("lm_head.weight");
  Parameters p = sglang ? lm : prefixed(lm, "language_model.");
  qwen3VisionTower(c.j.contains("vision_config") ? c.j["vision_config"] : nlohmann::json(), sglang, p);
  return p;
}

// The expert count is the model description's (num_experts, num_local_experts or n_routed_experts,
// as the family's config names it). `text` is the language model's config: text_config in a
// multimodal one, else `c` itself; `quant` the quantization it declares (DeepSeek-V4's wo_a).
Parameters parametersOf(const WeightLoaderRow& row, const Config& c, const Config& text, int64_t layers, int64_t experts, const QuantConfig& quant) {
  Parameters p;
  switch (row.family) {
    case LoaderFamily::Qwen3Moe: p = qwen3Moe(c, layers, experts, row); break;
    case LoaderFamily::Qwen2Moe: p = qwen2Moe(c, layers, experts, row); break;
    case LoaderFamily::Mixtral: p = mixtral(c, layers, experts, row); break;
    case LoaderFamily::DeepseekV2: p = deepseekV2(c, layers, experts, row); break;
    case LoaderFamily::Glm4Moe: p = glm4Moe(c, layers, experts, row); break;
    case LoaderFamily::GptOss: p = gptOss(c, layers, experts, row); break;
    case LoaderFamily::Qwen3Next: p = qwen3Next(c, layers, experts, row); break;
    case LoaderFamily::Qwen3VlMoe: p = qwen3VlMoe(c, text, layers, experts, row); break;
    case LoaderFamily::Llama4: p = llama4(c, text, layers, experts, row); break;
    case LoaderFamily::DeepseekV4: p = deepseekV4(c, layers, experts, quant); break;
  }
  for (const auto& key : c.missing) p.unknown += (p.unknown.empty() ? "config.json lacks " : ", ") + key;
  if (&text != &c)
    for (const auto& key : text.missing) p.unknown += std::string(p.unknown.empty() ? "config.json lacks " : ", ") + "text_config." + key;
  return p;
}

// Where load_weights puts one checkpoint tensor.
struct Placement {
  // Dropped: a skip the loader means (rotary caches, MTP layers, a quantizer's extra bias);
  // Ignored: a name it cannot place and skips all the same, with a warning or without a word.
  // Paired: one half of SGLang's q_a / kv_a pair, loaded only with its partner.
  enum Kind { Loaded, Dropped, Unknown, Raises, Ignored, Paired } kind = Unknown;
  std::string parameter;  // Loaded: the name it lands in; Raises, Ignored: the name looked up
  std::string shard;      // the shard id, "" for a whole parameter
  int64_t expert = -1;
  std::string exception;  // Raises: "KeyError: ...", "ValueError: ...", "TypeError: ..."; Ignored: how

  static Placement loaded(std::string parameter, std::string shard = {}, int64_t expert = -1) {
    Placement out;
    out.kind = Loaded, out.parameter = std::move(parameter), out.shard = std::move(shard), out.expert = expert;
    return out;
  }
  static Placement dropped() {
    Placement out;
    out.kind = Dropped;
    return out;
  }
};

// The checkpoint name "experts.E.<proj>." the expert mapping's first matching row names (rows in
// order E = 0.., gate, down, up: make_expert_params_mapping), if any.
struct ExpertMatch {
  std::string pattern, parameter, shard;
  int64_t expert;
};

class EmulatedLoader {
 public:
  EmulatedLoader(const WeightLoaderRow& row, const Parameters& p, const Config& c, const QuantConfig* quant, std::string cls)
      : row_(row),
        p_(p),
        quant_(quant),
        cls_(std::move(cls)),
        hiddenLayers_(c.optional("num_hidden_layers", 0)),
        nextn_(c.optional("num_nextn_predict_layers", 0)),
        config_(c) {
    for (const auto& n : p.names)
      if (const size_t at = n.rfind(".indexer."); at != std::string::npos) indexerBuilt_.insert(n.substr(0, at));
  }

  Placement place(std::string name) const {
    for (const auto& suffix : p_.consumedSuffixes)
      if (name.ends_with(suffix)) return Placement::dropped();
    if (name.ends_with(".k_scale") || name.ends_with(".v_scale") || name.ends_with(".kv_scale") || name.ends_with(".q_scale")) return {};  // the KV cache's quantization decides
    for (const auto& [from, to] : row_.mapperSubstrings)
      if (const size_t at = name.find(from); at != std::string::npos) name.replace(at, from.size(), to);
    for (const auto& [from, to] : row_.mapperPrefixes)
      if (name.starts_with(from)) name.replace(0, from.size(), to);
    for (const auto& [from, to] : row_.mapperSuffixes)
      if (name.ends_with(from)) name.replace(name.size() - from.size(), from.size(), to);
    for (auto prefix : row_.skipPrefixes)  // utils.py:291-292, on the full name
      if (name.starts_with(prefix)) return Placement::dropped();
    const bool tower = std::any_of(row_.towerMarkers.begin(), row_.towerMarkers.end(),
                                   [&](std::string_view m) { return row_.towerMarkerAnywhere ? contains(name, m) : name.starts_with(m); });
    if (tower && row_.towerSkipped) return Placement::dropped();
    if (row_.autoWeightsLoader) {
      // utils.py: ROTARY_EMBEDS_UNUSED_WEIGHTS skipped (102-106, 291-292); names grouped by their
      // first component (129-139): "model" to the model's load_weights, lm_head to its one
      // parameter (both under language_model. in a multimodal class, the tower beside them),
      // anything else "There is no module or parameter named" (278-280).
      for (const char* unused : {"rotary_emb.inv_freq", "rotary_emb.cos_cached", "rotary_emb.sin_cached"})
        if (contains(name, unused)) return Placement::dropped();
      if (tower) return placeInTower(std::move(name));
      const std::string_view head = row_.headName, headModule = head.substr(0, head.rfind('.'));
      if (name.starts_with(std::string(headModule) + ".")) {
        if (name == head && row_.headSkippedWhenTied && !p_.names.count(name)) {  // skip_prefixes: the tied head's own tensor
          Placement skipped = Placement::dropped();
          skipped.parameter = name;
          return skipped;
        }
        if (name == head) return Placement::loaded(name);
        if (name.starts_with(std::string(head) + ".")) return raises("ValueError", name, "Attempted to load nested weight '" + name + "' into a single parameter '" + std::string(head) + "'");
        return raises("ValueError", name, "There is no module or parameter named '" + name + "' in " + cls_);
      }
      if (!name.starts_with(row_.modelPrefix)) {
        // The first component the class has no child for; under a container the prefix names
        // (language_model.), the container's child.
        const size_t dot = row_.modelPrefix.find('.');
        const bool nested = dot + 1 < row_.modelPrefix.size() && name.starts_with(row_.modelPrefix.substr(0, dot + 1));
        return raises("ValueError", name, "There is no module or parameter named '" + name.substr(0, std::min(name.find('.', nested ? dot + 1 : 0), name.size())) + "' in " + cls_);
      }
    } else if (contains(name, "rotary_emb.inv_freq")) {
      return Placement::dropped();
    } else if (tower) {
      return placeInTower(std::move(name));
    }
    if (specLayer(name)) return Placement::dropped();
    if (row_.mtpNames && contains(name, "mtp")) return Placement::dropped();
    if (row_.layerRange && pastTheLayers(name)) return Placement::dropped();
    if (row_.indexerWhereBuilt && contains(name, ".indexer.")) {
      const std::string layerAttention = name.substr(0, name.rfind(".indexer."));
      if (!indexerBuilt_.count(layerAttention)) return Placement::dropped();
      // The fused key: wk and weights_proj, weights or their scales, fill their rows of it.
      const std::string fusedKey = layerAttention + ".indexer.wk_weights_proj.weight";
      const bool wk = contains(name, ".indexer.wk."), weights = contains(name, ".indexer.weights_proj.");
      if ((wk || weights) && p_.names.count(fusedKey)) return Placement::loaded(fusedKey, wk ? "wk" : "weights_proj");
    }
    for (auto direct : row_.directNames)
      if (contains(name, direct)) return has(name) ? Placement::loaded(name) : raises("KeyError", name);

    for (const auto& s : row_.stacked) {
      if (!contains(name, s.shardName)) continue;
      if (!row_.expertGuard.empty() && contains(name, row_.expertGuard) && (!row_.expertGuardOnlyIfNotParameter || !has(name))) continue;
      std::string mapped = replaceAll(name, s.shardName, s.parameter);
      if (s.parameter == row_.optionalStacked && !has(mapped)) continue;
      if (row_.renameOnlyWhenPlaced) {
        if (dropped(mapped) || !has(mapped)) continue;
        return Placement::loaded(mapped, std::string(s.shardId));
      }
      name = std::move(mapped);
      if (dropped(name)) continue;
      if (!has(name)) {
        if (row_.stackedMissingContinues) continue;
        return raises("KeyError", name);
      }
      return Placement::loaded(name, std::string(s.shardId));
    }
    for (const auto& [from, to] : row_.fusedExperts)  // all experts in one tensor, filling the parameter whole
      if (contains(name, from)) {
        std::string mapped = replaceAll(name, from, to);
        fusedSeen_ = true;
        if (!has(mapped)) return unplaced(row_.fusedUnplaced, std::move(mapped));
        return Placement::loaded(std::move(mapped), std::string(kAllExperts));
      }
    if (auto e = row_.fusedSticky && fusedSeen_ ? std::nullopt : expertMatch(name)) {
      const std::string mapped = replaceAll(name, e->pattern, e->parameter);
      if (row_.expertPathDrops && dropped(mapped)) return Placement::dropped();
      if (!has(mapped)) return unplaced(row_.expertUnplaced, mapped);
      return Placement::loaded(mapped, e->shard, e->expert);
    }
    if (dropped(name)) return Placement::dropped();
    for (const PairRule& rule : row_.pairs)
      if (auto at = pairHalf(rule, name)) return *at;
    if (!has(name)) return unplaced(row_.unplaced, name);
    // FusedMoE.weight_loader needs weight_name, shard_id and expert_id (fused_moe/layer.py:1388-1394)
    if (p_.expertModules.count(moduleOf(name))) return raises("TypeError", name, "FusedMoE.weight_loader() missing its weight_name, shard_id and expert_id arguments");
    return Placement::loaded(name);
  }

  // The parameter a placed name fills: itself, or for a quantization's own parameter (a scale,
  // packed codes) the weight it quantizes.
  std::string filledParameter(const std::string& placed) const {
    if (p_.names.count(placed)) return placed;
    const std::string module(moduleOf(placed));
    const std::string_view leaf = leafOf(placed);
    if (p_.expertModules.count(module)) return module + (leaf.starts_with("w13_") ? ".w13_weight" : leaf.starts_with("w2_") ? ".w2_weight" : "");
    return module + ".weight";
  }

 private:
  // The exception and its text as Python prints it: a KeyError names the key as the raising
  // loader holds it - the model's own load_weights sees names without "model." where
  // AutoWeightsLoader handed them on.
  Placement raises(const char* exception, std::string name, std::string message = {}) const {
    Placement out;
    out.kind = Placement::Raises, out.parameter = std::move(name);
    const bool stripped = row_.autoWeightsLoader && out.parameter.starts_with(row_.modelPrefix);
    if (message.empty()) message = "'" + out.parameter.substr(stripped ? row_.modelPrefix.size() : 0) + "'";
    out.exception = std::string(exception) + ": " + message;
    return out;
  }

  // A vision tower's name: its renames, its stacked rows (a renamed name looked up at once), else
  // the name as it is.
  Placement placeInTower(std::string name) const {
    for (const auto& [from, to] : row_.towerRenames) name = replaceAll(name, from, to);
    for (const auto& s : row_.towerStacked)
      if (contains(name, s.shardName)) {
        std::string mapped = replaceAll(name, s.shardName, s.parameter);
        return has(mapped) ? Placement::loaded(std::move(mapped), std::string(s.shardId)) : unplaced(row_.towerUnplaced, std::move(mapped));
      }
    return has(name) ? Placement::loaded(name) : unplaced(row_.towerUnplaced, std::move(name));
  }

  // `name` as one half of `rule`'s pair, or nullopt where the rule does not take it.
  std::optional<Placement> pairHalf(const PairRule& rule, const std::string& name) const {
    if (!rule.requiresKey.empty() && !config_.present(std::string(rule.requiresKey).c_str())) return std::nullopt;
    if (!rule.skipIf.empty() && contains(name, rule.skipIf)) return std::nullopt;
    const bool first = contains(name, rule.first);
    if (!first && !contains(name, rule.second)) return std::nullopt;
    std::string fused = replaceAll(name, first ? rule.first : rule.second, rule.into);
    if (rule.onlyWhereFused && !p_.names.count(fused.substr(0, fused.rfind(rule.into) + rule.into.size()) + "weight")) return std::nullopt;
    if (!rule.suffixes.empty() && std::none_of(rule.suffixes.begin(), rule.suffixes.end(), [&](std::string_view s) { return name.ends_with(s); })) {
      if (rule.otherSuffixRaises.empty()) return std::nullopt;
      return raises("AssertionError", name, std::string(rule.otherSuffixRaises));
    }
    if (!has(fused)) return unplaced(rule.fusedMissing, std::move(fused));
    Placement out = Placement::loaded(std::move(fused), std::string(first ? rule.firstShard : rule.secondShard));
    out.kind = Placement::Paired;
    return out;
  }

  Placement unplaced(Unplaced how, std::string name) const {
    if (how == Unplaced::KeyError) return raises("KeyError", std::move(name));
    Placement out;
    out.kind = Placement::Ignored, out.parameter = std::move(name);
    std::string words(row_.unplacedWarning);
    if (const size_t at = words.find("%s"); at != std::string::npos) words.replace(at, 2, out.parameter);
    out.exception = how == Unplaced::Warns ? "skips them with a warning ('" + words + "')" : "skips them without a word";
    return out;
  }

  // SGLang's get_layer_id (layers/utils/common.py:12-17): the first "layers.N." anywhere in the
  // name; the model holds layers [0, num_hidden_layers) without pipeline parallelism.
  bool pastTheLayers(std::string_view name) const {
    for (size_t at = name.find("layers."); at != std::string_view::npos; at = name.find("layers.", at + 1)) {
      const size_t digits = at + 7, dot = name.find('.', digits);
      if (dot == std::string_view::npos || dot == digits || name.substr(digits, dot - digits).find_first_not_of("0123456789") != std::string_view::npos) continue;
      return dot - digits > 9 || std::stoll(std::string(name.substr(digits, dot - digits))) >= hiddenLayers_;
    }
    return false;
  }

  // Is `name` in params_dict? Exact for an unquantized model. A quantized one's own parameters
  // (weight_scale_inv, qweight, weight_packed ...) sit on the modules built with the quantization
  // config: those its method's create_weights register (quant_params.h); where that table does
  // not settle a name, any such name is taken as present.
  bool has(std::string_view name) const {
    if (p_.names.count(name)) return true;
    if (!quant_) return false;
    static const std::set<std::string_view> base = {"weight", "bias", "e_score_correction_bias", "w13_weight", "w2_weight", "w13_bias", "w2_bias"};
    if (base.count(leafOf(name)) || !p_.modules.count(moduleOf(name)) || p_.unquantized.count(moduleOf(name))) return false;
    const auto registered = row_.engine == "vllm" ? vllmRegistersQuantParam(*quant_, leafOf(name)) : sglangRegistersQuantParam(*quant_, leafOf(name));
    return registered.value_or(true);
  }
  bool dropped(std::string_view name) const {
    for (auto s : row_.droppedSuffixes)
      if (name.ends_with(s) && !has(name)) return true;
    return false;
  }
  bool specLayer(std::string_view name) const {
    // SGLang glm4_moe.py:1150-1156: with nextn layers, every model.layers.K. past them
    if (row_.specLayers == "past" && nextn_ > 0 && name.starts_with("model.layers.")) {
      const size_t end = name.find('.', 13);
      const std::string_view k = name.substr(13, end == std::string_view::npos ? 0 : end - 13);
      return !k.empty() && k.size() <= 9 && k.find_first_not_of("0123456789") == std::string_view::npos && std::stoll(std::string(k)) >= hiddenLayers_;
    }
    for (int64_t i = 0; i < nextn_; ++i) {
      const std::string l = "layers." + std::to_string(hiddenLayers_ + i) + ".";
      if (row_.specLayers == "prefix" && name.starts_with("model." + l)) return true;
      if (row_.specLayers == "substring" && contains(name, l)) return true;
    }
    return false;
  }
  std::optional<ExpertMatch> expertMatch(std::string_view name) const {
    std::optional<ExpertMatch> best;
    auto rank = [](const ExpertMatch& m) { return m.expert * 3 + (m.shard == "w1" ? 0 : m.shard == "w2" ? 1 : 2); };
    for (size_t at = name.find("experts."); at != std::string_view::npos; at = name.find("experts.", at + 1)) {
      const size_t digits = at + 8, dot = name.find('.', digits);
      if (dot == std::string_view::npos || dot == digits) continue;
      const std::string_view id = name.substr(digits, dot - digits);
      if (id.find_first_not_of("0123456789") != std::string_view::npos || (id.size() > 1 && id[0] == '0') || id.size() > 9) continue;
      const int64_t e = std::stoll(std::string(id));
      if (e >= p_.experts) continue;
      const size_t end = name.find('.', dot + 1);
      if (end == std::string_view::npos) continue;
      const std::string_view proj = name.substr(dot + 1, end - dot - 1);
      const char* shard = proj == row_.expertGate ? "w1" : proj == row_.expertDown ? "w2" : proj == row_.expertUp ? "w3" : nullptr;
      if (!shard) continue;
      ExpertMatch m{std::string(name.substr(at, end + 1 - at)), shard == std::string_view("w2") ? "experts.w2_" : "experts.w13_", shard, e};
      if (!best || rank(m) < rank(*best)) best = std::move(m);
    }
    return best;
  }

  const WeightLoaderRow& row_;
  const Parameters& p_;
  const QuantConfig* quant_;  // null: an unquantized model
  std::string cls_;
  int64_t hiddenLayers_, nextn_;
  const Config& config_;
  mutable bool fusedSeen_ = false;  // a fused expert name has been placed (fusedSticky)
  std::set<std::string, std::less<>> indexerBuilt_;  // "model.layers.N.self_attn" of each layer the class built an indexer for
};

// The class the engine builds: the first of config.json's architectures its registry holds
// (vLLM ModelRegistry.inspect_model_cls, SGLang get_model_architecture), and the loader row for it.
const WeightLoaderRow* loaderFor(const ModelDescription& m, const std::string& engine, std::string& cls) {
  const auto& registered = (engine == "vllm" ? vllmArchitectures() : sglangArchitectures()).supported;
  for (const auto& a : m.architectures) {
    if (std::find(registered.begin(), registered.end(), a) == registered.end()) continue;
    cls = a;
    for (const auto& row : weightLoaderTable())
      if (row.engine == engine && std::find(row.architectures.begin(), row.architectures.end(), a) != row.architectures.end()) return &row;
    return nullptr;
  }
  return nullptr;
}

// Where the stored bytes of two tensors first differ (shapes apart, byte 0), read in chunks through
// their files; nullopt when they are equal, or where either cannot be read here (a remote or cut
// file: unknown, not judged).
std::optional<uint64_t> firstDifference(const Checkpoint& c, const std::string& a, const std::string& b) {
  const TensorRecord *ta = nullptr, *tb = nullptr;
  for (const auto& t : c.tensors) {
    if (t.name == a) ta = &t;
    if (t.name == b) tb = &t;
  }
  if (!ta || !tb || ta->cut || tb->cut || !c.files[ta->file].map || !c.files[tb->file].map) return std::nullopt;
  if (ta->shape != tb->shape || ta->dtype != tb->dtype || ta->bytes != tb->bytes) return 0;
  constexpr uint64_t kChunk = uint64_t(4) << 20;
  std::vector<uint8_t> x(kChunk), y(kChunk);
  try {
    for (uint64_t at = 0; at < ta->bytes; at += kChunk) {
      const uint64_t n = std::min(kChunk, ta->bytes - at);
      c.files[ta->file].map->readAt(ta->offset + at, x.data(), n);
      c.files[tb->file].map->readAt(tb->offset + at, y.data(), n);
      if (std::memcmp(x.data(), y.data(), n) != 0)
        for (uint64_t i = 0; i < n; ++i)
          if (x[i] != y[i]) return at + i;
    }
  } catch (const std::exception&) {
    return std::nullopt;  // the read failed: the integrity rules say why
  }
  return std::nullopt;
}

std::string shardName(const WeightLoaderRow& row, const std::string& parameter, const std::string& shard) {
  auto bare = [](std::string_view n) {  // gpt-oss's rows hold ".qkv", SGLang's Qwen3-Next "in_proj_qkvz."
    if (n.starts_with('.')) n.remove_prefix(1);
    if (n.ends_with('.')) n.remove_suffix(1);
    return std::string(n);
  };
  for (const auto& s : row.stacked)
    if (s.shardId == shard && contains(parameter, "." + bare(s.parameter) + ".")) return bare(s.shardName);
  return shard;
}

}  // namespace

// An engine loads a checkpoint by handing every tensor to its model class's load_weights, which
// renames it by substring into a parameter of the class, raises, or skips it; then vLLM's
// DefaultModelLoader.load_weights (model_loader/default_loader.py:261-277) refuses an unquantized
// model any of whose parameters no tensor filled, and SGLang's (model_loader/loader.py
// load_weights_and_postprocess) checks nothing. Safetensors checkpoints whose config.json names a
// class of the loader table; a bitsandbytes or MLX quantization goes through other loaders and
// is left out.
void weightNameRules(const Checkpoint& c, const std::string& engine, Sink& sink) {
  const ModelDescription& m = c.model;
  if (c.format != "safetensors" || c.adapter || m.source != "config.json" || m.quant.method == "bitsandbytes" || m.quant.method == "mlx") return;
  std::string cls;
  const WeightLoaderRow* row = loaderFor(m, engine, cls);
  if (!row) {
    // A class the engine registers whose loader was not read (SGLang's Kimi-K3, say): whether its
    // names load is unknown, said as such rather than passed as loading.
    if (!cls.empty())
      sink.add("WS-E008", "which tensor names " + std::string(engine == "vllm" ? "vLLM " : "SGLang ") + std::string(engine == "vllm" ? kVllmRelease : kSglangRelease) + "'s " + cls +
                              " consumes was not read here (no row of the weight-loader table): whether its names load is unknown");
    return;
  }
  Config cfg;
  try {
    cfg.j = nlohmann::json::parse(readTextFile((std::filesystem::path(sideFolder(c)) / "config.json").string()));
  } catch (const std::exception&) {
    return;
  }
  if (!cfg.j.is_object()) return;
  cfg.defaults = configDefaults(cfg.j.value("model_type", ""), engine);
  // The language model's config: text_config in a multimodal one.
  const bool nested = cfg.j.contains("text_config") && cfg.j["text_config"].is_object();
  Config textConfig;
  if (nested) {
    textConfig.j = cfg.j["text_config"];
    textConfig.defaults = configDefaults(textConfig.j.value("model_type", ""), engine);
  }
  const Config& text = nested ? textConfig : cfg;
  const Parameters p = parametersOf(*row, cfg, text, text.integer("num_hidden_layers", 0), m.numExperts, m.quant);
  const bool vllm = engine == "vllm";
  const std::string title = vllm ? "vLLM" : "SGLang";
  const std::string who = title + " " + std::string(vllm ? kVllmRelease : kSglangRelease) + "'s " + cls + " (" + std::string(row->source) + ")";
  if (!p.unknown.empty()) {
    sink.add("WS-E008", "which tensor names " + who + " consumes is unknown here: " + p.unknown);
    return;
  }
  if (!p.refusal.empty()) {
    sink.add("WS-E009", who + " cannot be built: " + p.refusal, "config.json");
    return;
  }
  const bool quantized = !m.quant.method.empty();
  const EmulatedLoader loader(*row, p, text, quantized ? &m.quant : nullptr, cls);

  std::vector<std::string> names;
  if (row->fusedSticky) {
    // In load order, where a name's outcome depends on the names before it: each file's names
    // sorted (safetensors' keys()), files in path order - whether the engine sorts its files is
    // not settled by its source.
    std::vector<std::pair<std::string, std::string>> byFile;
    for (const auto& t : c.tensors) byFile.push_back({c.files[t.file].path, t.name});
    std::sort(byFile.begin(), byFile.end());
    for (auto& [file, name] : byFile) names.push_back(std::move(name));
  } else {
    for (const auto& t : c.tensors) names.push_back(t.name);
  }
  names.insert(names.end(), c.unreadable.begin(), c.unreadable.end());
  std::map<std::string, std::vector<std::string>> unplaced;  // by exception
  std::map<std::string, std::string> firstOf;
  std::map<std::string, std::vector<std::string>> ignored;  // skipped though no rule means them to be, by how
  std::map<std::string, std::map<std::string, std::string>> pairs;  // fused name -> half -> the checkpoint's name
  std::set<std::string> filled;  // "parameter|shard|expert"
  std::string headTensor, embedTensor;  // the checkpoint's, where the loader puts them into the head / the embedding
  std::string skippedHead;              // the checkpoint's head tensor, skipped because the config ties the head
  const std::string headParam(row->autoWeightsLoader ? row->headName : "lm_head.weight");
  for (const auto& name : names) {
    const Placement at = loader.place(name);
    if (at.kind == Placement::Loaded && at.parameter == headParam) headTensor = name;
    if (at.kind == Placement::Dropped && at.parameter == headParam) skippedHead = name;
    if (at.kind == Placement::Loaded && at.parameter.ends_with("embed_tokens.weight")) embedTensor = name;
    if (at.kind == Placement::Raises) {
      const std::string kind = at.exception.substr(0, at.exception.find(':'));
      if (!firstOf.count(kind)) firstOf[kind] = at.exception;
      unplaced[kind].push_back(at.parameter == name ? name : name + " (looked up as " + at.parameter + ")");
    }
    if (at.kind == Placement::Paired) pairs[at.parameter][at.shard] = name;
    if (at.kind == Placement::Ignored) {
      ignored[at.exception].push_back(at.parameter == name ? name : name + " (looked up as " + at.parameter + ")");
    }
    if (at.kind != Placement::Loaded) continue;
    const std::string param = loader.filledParameter(at.parameter);
    const auto ids = p.shards.find(param);
    if (at.shard == kAllExperts) {
      for (int64_t e = 0; e < p.experts; ++e)
        for (const char* s : param.ends_with(".w13_weight") ? std::vector<const char*>{"w1", "w3"} : std::vector<const char*>{"w2"}) filled.insert(param + "|" + s + "|" + std::to_string(e));
    } else if (at.shard.empty() && ids != p.shards.end())
      for (const auto& id : ids->second) filled.insert(param + "|" + id + "|");
    else
      filled.insert(param + "|" + at.shard + "|" + (at.expert >= 0 ? std::to_string(at.expert) : ""));
  }
  for (const auto& [kind, list] : unplaced)
    sink.add("WS-E009", std::to_string(list.size()) + " checkpoint tensors " + who + " cannot place: the load stops at the first it reaches, " + firstOf[kind] + ": " + listed(list),
             list.front().substr(0, list.front().find(' ')));
  // A pair loads once both halves are in; a half alone waits in the cache for good - without a
  // word, or failing the loader's check at the end.
  std::map<const PairRule*, std::vector<std::string>> orphans;
  for (const auto& [fused, halves] : pairs) {
    if (halves.size() < 2) {
      const std::string& name = halves.begin()->second;
      for (const PairRule& rule : row->pairs)
        if (contains(fused, rule.into)) {
          orphans[&rule].push_back(name);
          break;
        }
      continue;
    }
    for (const auto& [half, name] : halves) filled.insert(loader.filledParameter(fused) + "|" + half + "|");
  }
  for (const auto& [rule, names] : orphans) {
    const std::string cache = std::string(rule->firstShard) + " / " + std::string(rule->secondShard);
    if (rule->orphanRaises.empty())
      sink.add("WS-E009", std::to_string(names.size()) + " checkpoint tensors " + who + " " + std::string(kNeverLoads) + ": each waits in its " + cache +
                              " cache for a partner that never comes, without a word: " + listed(names),
               names.front());
    else
      sink.add("WS-E009", std::to_string(names.size()) + " checkpoint tensors " + who + " cannot place: each waits in its " + cache +
                              " cache for a partner that never comes, and the load stops at the end, " + std::string(rule->orphanRaises) + ": " + listed(names),
               names.front());
  }
  for (const auto& [how, names] : ignored)
    sink.add("WS-E009", std::to_string(names.size()) + " checkpoint tensors " + who + " " + std::string(kNeverLoads) + ": no parameter takes them and it " + how + ": " + listed(names),
             names.front().substr(0, names.front().find(' ')));
  // A head the class ties to the embedding (no parameter of its own) while the loader still copies
  // the checkpoint's own head tensor into it: both load into the one shared tensor, so unless their
  // bytes agree the model runs with one of them in the other's place.
  if (!headTensor.empty() && !embedTensor.empty() && !p.names.count(headParam))
    if (auto at = firstDifference(c, headTensor, embedTensor))
      sink.add("WS-E009", who + " ties " + headParam + " to the embedding (" + (nested ? "text_config." : "") + "tie_word_embeddings is true) and still loads the checkpoint's " +
                              headTensor + " into it, which differs from " + embedTensor + " (from byte " + std::to_string(*at) + "): both fill the one shared tensor and " +
                              std::string(kOverwrites) + ", so either the logits or the embeddings use the other's matrix",
               headTensor);
  if (!skippedHead.empty() && !embedTensor.empty())
    if (auto at = firstDifference(c, skippedHead, embedTensor))
      sink.add("WS-E009", who + " ties " + headParam + " to the embedding (" + (nested ? "text_config." : "") + "tie_word_embeddings is true) and so " +
                              std::string(kNeverLoads) + " the checkpoint's own " + skippedHead + " (AutoWeightsLoader's skip_prefixes), which differs from " + embedTensor +
                              " (from byte " + std::to_string(*at) + "): the logits come from the embedding, not the trained head",
               skippedHead);
  if (c.incomplete && c.unreadable.empty()) return;  // the names of what could not be read are not known

  std::vector<std::string> whole, partial;
  for (const auto& param : p.names) {
    std::vector<std::string> missing;
    size_t expected = 0;
    if (p.expertModules.count(moduleOf(param))) {
      const bool w13 = param.ends_with(".w13_weight");
      for (int64_t e = 0; e < p.experts; ++e)
        for (const char* s : w13 ? std::vector<const char*>{"w1", "w3"} : std::vector<const char*>{"w2"}) {
          ++expected;
          if (!filled.count(param + "|" + s + "|" + std::to_string(e)))
            missing.push_back("expert " + std::to_string(e) + "'s " + std::string(s == std::string_view("w1") ? row->expertGate : s == std::string_view("w3") ? row->expertUp : row->expertDown));
        }
    } else if (auto ids = p.shards.find(param); ids != p.shards.end()) {
      for (const auto& id : ids->second) {
        ++expected;
        if (!filled.count(param + "|" + id + "|")) missing.push_back(shardName(*row, param, id));
      }
    } else {
      ++expected;
      if (!filled.count(param + "||")) missing.push_back("");
    }
    if (missing.empty()) continue;
    if (missing.size() == expected && !quantized && vllm) whole.push_back(param);
    else partial.push_back(param + (missing.front().empty() ? "" : " (" + std::to_string(missing.size()) + " of " + std::to_string(expected) + " shards unfilled: " + listed(missing) + ")"));
  }
  if (!whole.empty())
    sink.add("WS-E009", std::to_string(whole.size()) + " parameters of " + who + " that no checkpoint tensor fills: vLLM refuses, 'Following weights were not initialized from checkpoint' " +
                            "(model_loader/default_loader.py:273-277): " + listed(whole),
             whole.front());
  const std::string why = vllm ? "its check (model_loader/default_loader.py:273) runs only for unquantized models and counts a fused or expert parameter as loaded once any shard is"
                         : !row->unfilledWarning.empty() ? "it only warns ('" + std::string(row->unfilledWarning) + "')"
                                                          : "its loader checks nothing after load_weights (model_loader/loader.py DefaultModelLoader.load_weights_and_postprocess)";
  if (!partial.empty())
    sink.add("WS-E009", std::to_string(partial.size()) + " parameters of " + who + " left wholly or partly unfilled, which " + title + " " + std::string(kLoadsUninitialised) + ": " + why + ": " + listed(partial),
             partial.front().substr(0, partial.front().find(' ')));
}

bool loadsBroken(const Finding& f) {
  if (f.code == "WS-E010") return contains(f.message, kLoadsUninitialisedScales) || contains(f.message, kLoadsDefaultScales);
  return f.code == "WS-E009" && (contains(f.message, kNeverLoads) || contains(f.message, kLoadsUninitialised) || contains(f.message, kOverwrites));
}

}  // namespace ws::val::engines
