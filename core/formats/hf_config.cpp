#include "core/formats/hf_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "core/io/text_file.h"
#include "core/util/error.h"

namespace ws {

namespace {

using nlohmann::json;

// First integer among `keys` in object j, or -1.
int64_t intKey(const json& j, std::initializer_list<const char*> keys, int64_t fallback = -1) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it != j.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return fallback;
}

// Gemma 4's full-attention layers have their own head width and KV heads. transformers 5.25.0
// (models/gemma4/configuration_gemma4.py __post_init__) writes them as per_layer_config {layer:
// {head_dim, num_key_value_heads}}; a config without it gives the full layers global_head_dim
// (default 512 for gemma4_text) and, where attention_k_eq_v is true, num_global_key_value_heads.
void perLayerHeads(const json& t, int64_t layers, AttentionConfig& a) {
  if (layers <= 0 || layers > kMaxPlausibleCount) return;
  std::vector<int64_t> dims(size_t(layers), a.headDim), heads(size_t(layers), a.numKvHeads);
  bool any = false;
  if (auto plc = t.find("per_layer_config"); plc != t.end() && plc->is_object()) {
    for (const auto& [key, over] : plc->items()) {
      char* end = nullptr;
      const long long il = std::strtoll(key.c_str(), &end, 10);
      if (*end || il < 0 || il >= layers || !over.is_object()) continue;
      if (int64_t d = intKey(over, {"head_dim"}); d > 0) dims[size_t(il)] = d, any = true;
      if (int64_t h = intKey(over, {"num_key_value_heads"}); h > 0) heads[size_t(il)] = h, any = true;
    }
  } else if (auto mt = t.find("model_type"); t.contains("global_head_dim") || (mt != t.end() && *mt == "gemma4_text")) {
    const int64_t d = intKey(t, {"global_head_dim"}, 512);
    const auto kEqV = t.find("attention_k_eq_v");
    const int64_t h = kEqV != t.end() && kEqV->is_boolean() && kEqV->get<bool>() ? intKey(t, {"num_global_key_value_heads"}) : -1;
    for (size_t il = 0; il < a.layerTypes.size() && il < dims.size(); ++il)
      if (a.layerTypes[il] == "full_attention") {
        dims[il] = d, any = true;
        if (h > 0) heads[il] = h;
      }
  }
  if (!any) return;
  a.headDimPerLayer = std::move(dims);
  a.kvHeadsPerLayer = std::move(heads);
}

// intKey for a count that code will loop over: above kMaxPlausibleCount is an error naming the key.
int64_t countKey(const json& j, std::initializer_list<const char*> keys, const std::string& path, int64_t fallback = -1) {
  int64_t v = intKey(j, keys, fallback);
  if (v > kMaxPlausibleCount)
    for (const char* k : keys)
      if (auto it = j.find(k); it != j.end() && it->is_number_integer())
        fail(ErrorCode::InvalidHeaderJson, std::string(k) + " = " + std::to_string(v) + " is not a plausible count (at most " + std::to_string(kMaxPlausibleCount) + ")", path);
  return v;
}

std::vector<int> intList(const json& j, const char* key) {
  std::vector<int> v;
  auto it = j.find(key);
  if (it != j.end() && it->is_array())
    for (const auto& e : *it)
      if (e.is_number_integer()) v.push_back(e.get<int>());
  return v;
}

// DeepSeek-V4's per-layer compression: the published config's compress_ratios, else transformers
// 5.25.0's layer_types with compress_rates (configuration_deepseek_v4.py: sliding_attention 0,
// compressed_sparse_attention 4, heavily_compressed_attention 128 unless compress_rates says).
void compressRatios(const json& t, AttentionConfig& a) {
  for (int r : intList(t, "compress_ratios")) a.compressRatios.push_back(r);
  if (!a.compressRatios.empty()) return;
  std::map<std::string, int64_t> rate = {{"sliding_attention", 0}, {"compressed_sparse_attention", 4}, {"heavily_compressed_attention", 128}};
  if (auto cr = t.find("compress_rates"); cr != t.end() && cr->is_object())
    for (const auto& [type, r] : cr->items())
      if (r.is_number_integer()) rate[type] = r.get<int64_t>();
  const bool compressed = std::any_of(a.layerTypes.begin(), a.layerTypes.end(), [](const std::string& lt) { return lt.find("compressed") != std::string::npos; });
  if (!compressed) return;
  for (const auto& lt : a.layerTypes) a.compressRatios.push_back(rate.count(lt) ? rate[lt] : -1);
}

std::string strKey(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

// ModelOpt's FP8 and NVFP4 checkpoints store a static input_scale for every quantized linear
// layer; kv_cache_quant_algo (FP8, or null) declares the KV cache's. vLLM modelopt.py (commit
// c9a5990): quant_algo upper-cased; ModelOptFp8LinearMethod ("static FP8") and the NVFP4 method
// (input_scale_inv = 1 / input_scale) always read input_scale; FP8_PER_CHANNEL_PER_TOKEN and
// FP8_PB_WO quantize activations per token, with none stored.
void readModelOptScales(const json& q, QuantConfig& out, const std::string& source) {
  std::string algo = out.algo;
  std::transform(algo.begin(), algo.end(), algo.begin(), [](unsigned char ch) { return char(std::toupper(ch)); });
  if (algo == "FP8" || algo == "NVFP4") out.activations = "static", out.activationsKey = source + ": quant_algo " + out.algo;
  else if (algo == "FP8_PER_CHANNEL_PER_TOKEN" || algo == "FP8_PB_WO") out.activations = "dynamic", out.activationsKey = source + ": quant_algo " + out.algo;
  if (const std::string kv = strKey(q, "kv_cache_quant_algo"); !kv.empty()) out.kvCacheQuantized = true, out.kvCacheKey = source + ": kv_cache_quant_algo " + kv;
}

void readQuantConfig(const json& q, QuantConfig& out, const std::string& source) {
  out.source = source;
  out.method = strKey(q, "quant_method");
  out.algo = strKey(q, "quant_algo");
  out.format = strKey(q, "format");
  if (auto it = q.find("weight_block_size"); it != q.end() && it->is_array())
    for (const auto& e : *it)
      if (e.is_number_integer()) out.blockSize.push_back(e.get<int64_t>());
  // AutoAWQ's own quant_config spells them w_bit and q_group_size.
  out.groupSize = intKey(q, {"group_size", "q_group_size"});
  out.bits = intKey(q, {"bits", "num_bits", "w_bit"});
  if (auto s = q.find("sym"); s != q.end() && s->is_boolean()) out.symmetric = s->get<bool>();  // GPTQ
  out.checkpointFormat = strKey(q, "checkpoint_format");
  if (out.method == "awq") out.awqVersion = strKey(q, "version");
  // AWQ: zero points unless zero_point is false (AutoAWQ's default is true).
  if (auto z = q.find("zero_point"); out.method == "awq" && z != q.end() && z->is_boolean()) out.symmetric = !z->get<bool>();
  for (const auto& [key, value] : q.items()) out.declaredKeys.push_back(key);
  // transformers' BitsAndBytesConfig (to_dict writes load_in_4bit / load_in_8bit and the type).
  if (out.method == "bitsandbytes") {
    auto flag = [&](const char* k) { auto it = q.find(k); return it != q.end() && it->is_boolean() && it->get<bool>(); };
    if (flag("load_in_4bit")) out.bits = 4, out.bnbQuantType = strKey(q, "bnb_4bit_quant_type");
    else if (flag("load_in_8bit")) out.bits = 8;
  }
  // compressed-tensors: every config group's weight arguments; the first one's also as the
  // checkpoint-wide defaults the decoders use.
  if (auto g = q.find("config_groups"); g != q.end() && g->is_object()) {
    for (const auto& [name, grp] : g->items()) {
      if (!grp.is_object()) continue;
      auto w = grp.find("weights");
      if (w == grp.end() || !w->is_object()) continue;
      QuantGroup qg;
      // input_activations: null for weight-only schemes; "dynamic" false means scales computed
      // at calibration and stored (input_scale), true means computed per token at run time, and
      // "local" (NVFP4) a stored global scale (input_global_scale) with local scales at run time.
      if (auto a = grp.find("input_activations"); a != grp.end() && a->is_object()) {
        const auto d = a->find("dynamic");
        qg.activations = d == a->end() || (d->is_boolean() && !d->get<bool>()) || (d->is_string() && d->get<std::string>() == "local") ? "static" : "dynamic";
      }
      if (auto t = grp.find("targets"); t != grp.end() && t->is_array())
        for (const auto& e : *t)
          if (e.is_string()) qg.targets.push_back(e.get<std::string>());
      qg.bits = intKey(*w, {"num_bits"});
      qg.type = strKey(*w, "type");
      qg.strategy = strKey(*w, "strategy");
      qg.groupSize = intKey(*w, {"group_size"});
      if (auto s = w->find("symmetric"); s != w->end() && s->is_boolean()) qg.symmetric = s->get<bool>();
      if (auto b = w->find("block_structure"); b != w->end() && b->is_array())
        for (const auto& e : *b)
          if (e.is_number_integer()) qg.blockStructure.push_back(e.get<int64_t>());
      if (out.groups.empty()) {
        out.bits = qg.bits > 0 ? qg.bits : out.bits;
        out.groupSize = qg.groupSize > 0 ? qg.groupSize : out.groupSize;
        out.symmetric = qg.symmetric;
        out.strategy = qg.strategy;
        if (out.format.empty()) out.format = strKey(grp, "format");
      }
      // An FP8 block strategy's block is the FP8 block size the decoders use.
      if (qg.strategy == "block" && out.blockSize.empty() && qg.blockStructure.size() == 2) out.blockSize = qg.blockStructure;
      out.groups.push_back(std::move(qg));
    }
  }
  // Activations: the config groups' kind when they agree (groups that quantize weights only do
  // not count); groups that disagree leave it unsaid, since which group covers a tensor is the
  // targets' business. FP8: activation_scheme, "static" or "dynamic" (vLLM fp8.py Fp8Config at
  // commit 0071b24, ACTIVATION_SCHEMES; transformers' FineGrainedFP8 writes "dynamic").
  for (const auto& g : out.groups) {
    if (g.activations.empty()) continue;
    if (out.activationsKey.empty()) out.activations = g.activations, out.activationsKey = source + ": config_groups input_activations";
    else if (out.activations != g.activations) out.activations.clear();
  }
  if (const std::string a = strKey(q, "activation_scheme"); a == "static" || a == "dynamic") out.activations = a, out.activationsKey = source + ": activation_scheme";
  if (auto kv = q.find("kv_cache_scheme"); out.method == "compressed-tensors" && kv != q.end() && kv->is_object()) out.kvCacheQuantized = true, out.kvCacheKey = source + ": kv_cache_scheme";
  if (out.method == "modelopt") readModelOptScales(q, out, source);
  if (auto ig = q.find("ignore"); ig != q.end() && ig->is_array())
    for (const auto& e : *ig)
      if (e.is_string()) out.ignore.push_back(e.get<std::string>());
  // The other writers' lists of what they left unquantized (ignore_list_rules.h matches them).
  auto strings = [&](const json& v, std::vector<std::string>& into) {
    if (v.is_string()) into.push_back(v.get<std::string>());
    if (v.is_array())
      for (const auto& e : v) {
        if (e.is_string()) into.push_back(e.get<std::string>());
        else if (e.is_array())  // GPTQ's modules_in_block_to_quantize: a list of lists
          for (const auto& ee : e)
            if (ee.is_string()) into.push_back(ee.get<std::string>());
      }
  };
  auto list = [&](const char* key, std::vector<std::string>& into) {
    if (auto it = q.find(key); it != q.end() && !it->is_null()) {
      strings(*it, into);
      if (!into.empty()) out.listKey = source + ": " + key;
    }
  };
  if (out.method == "fp8") {
    list("ignored_layers", out.excluded);
    if (out.excluded.empty()) list("modules_to_not_convert", out.excluded);  // vLLM fp8.py Fp8Config.from_config
  } else if (out.method == "awq") {
    list("modules_to_not_convert", out.excluded);
  } else if (out.method == "bitsandbytes") {
    list("llm_int8_skip_modules", out.excluded);
  } else if (out.method == "modelopt") {
    list("exclude_modules", out.excluded);
  } else if (out.method == "gptq") {
    list("modules_in_block_to_quantize", out.gptqIncluded);
    if (auto d = q.find("dynamic"); d != q.end() && d->is_object())
      for (const auto& [pattern, v] : d->items())
        if (pattern.rfind("-:", 0) == 0) out.gptqDynamicSkips.push_back(pattern.substr(2));
  }
  // MLX keeps {"group_size": 64, "bits": 4} under "quantization"
  if (out.method.empty() && out.bits > 0 && q.contains("group_size")) out.method = "mlx";
}

}  // namespace

void applyLayerPattern(ModelDescription& m, int64_t firstKDense, int64_t sparseStep, const std::vector<int>& mlpOnly,
                       int64_t moeLayerFreq, int64_t interleaveStep, const std::vector<int>& explicitMoe) {
  m.moeLayers.clear();
  m.denseLayers.clear();
  for (int n = 0; n < m.numLayers; ++n) {
    bool moe = m.numExperts > 0;
    if (!explicitMoe.empty()) moe = std::find(explicitMoe.begin(), explicitMoe.end(), n) != explicitMoe.end();
    if (firstKDense >= 0 && n < firstKDense) moe = false;
    if (moeLayerFreq > 1 && n % moeLayerFreq != 0) moe = false;
    if (sparseStep > 1 && (n + 1) % sparseStep != 0) moe = false;
    if (interleaveStep > 1 && explicitMoe.empty() && (n + 1) % interleaveStep != 0) moe = false;
    if (std::find(mlpOnly.begin(), mlpOnly.end(), n) != mlpOnly.end()) moe = false;
    (moe ? m.moeLayers : m.denseLayers).push_back(n);
  }
}

ModelDescription parseHfConfigText(const std::string& text, const std::string& path) {
  json root = json::parse(text, nullptr, false);
  if (root.is_discarded() || !root.is_object()) fail(ErrorCode::InvalidHeaderJson, "not a JSON object", path);
  ModelDescription m;
  m.source = "config.json";
  m.architecture = strKey(root, "model_type");
  m.transformersVersion = strKey(root, "transformers_version");
  if (root.contains("architectures") && root["architectures"].is_array())
    for (const auto& a : root["architectures"])
      if (a.is_string()) m.architectures.push_back(a.get<std::string>());
  // Multimodal configs keep the language model under text_config (Qwen3-VL-MoE, Llama 4, Kimi-VL).
  const json& t = root.contains("text_config") && root["text_config"].is_object() ? root["text_config"] : root;
  if (m.architecture.empty()) m.architecture = strKey(t, "model_type");
  m.visionTower = root.contains("vision_config") && root["vision_config"].is_object();

  m.numLayers = countKey(t, {"num_hidden_layers", "n_layer", "num_layers", "n_layers"}, path);
  m.hiddenSize = intKey(t, {"hidden_size", "n_embd", "d_model", "dim"});
  m.vocabSize = intKey(t, {"vocab_size"});
  m.numExperts = std::max<int64_t>(0, countKey(t, {"num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts"}, path, 0));
  m.numSharedExperts = std::max<int64_t>(0, countKey(t, {"n_shared_experts", "num_shared_experts", "shared_expert_count"}, path, 0));
  if (m.numSharedExperts == 0 && intKey(t, {"shared_expert_intermediate_size"}, 0) > 0) m.numSharedExperts = 1;
  m.expertsPerToken = countKey(t, {"num_experts_per_tok", "experts_per_token", "moe_top_k", "num_experts_per_token"}, path);
  m.expertGroups = std::max<int64_t>(1, countKey(t, {"n_group"}, path, 1));
  m.expertGroupsUsed = std::max<int64_t>(1, countKey(t, {"topk_group"}, path, 1));
  m.intermediateSize = intKey(t, {"intermediate_size", "ffn_hidden_size"});
  m.expertIntermediateSize = intKey(t, {"moe_intermediate_size", "expert_intermediate_size"});
  // Mixtral, gpt-oss and Llama 4 size their experts with intermediate_size itself.
  if (m.expertIntermediateSize < 0 && m.numExperts > 0) {
    m.expertIntermediateSize = m.intermediateSize;
    int64_t dense = intKey(t, {"intermediate_size_mlp"});
    if (dense > 0) m.intermediateSize = dense;
  }

  std::vector<int> explicitMoe = intList(t, "moe_layers");
  m.firstKDenseReplace = intKey(t, {"first_k_dense_replace"});
  m.moeLayerFreq = intKey(t, {"moe_layer_freq"});
  if (auto freq = t.find("moe_layer_freq"); freq != t.end() && freq->is_array()) {  // MiMo-V2-Flash: [0, 1, 1, ...]
    int64_t first = 0;
    for (size_t i = 0; i < freq->size(); ++i)
      if ((*freq)[i].is_number() && (*freq)[i].get<double>() != 0) {
        first = int64_t(i);
        break;
      }
    m.firstKDenseReplace = std::max<int64_t>(m.firstKDenseReplace, first);
    m.moeLayerFreq = 1;
  }
  applyLayerPattern(m, intKey(t, {"first_k_dense_replace"}), intKey(t, {"decoder_sparse_step"}), intList(t, "mlp_only_layers"),
                    intKey(t, {"moe_layer_freq"}), intKey(t, {"interleave_moe_layer_step"}), explicitMoe);

  int64_t nextn = countKey(t, {"num_nextn_predict_layers"}, path, 0);
  int64_t mtpHidden = countKey(t, {"mtp_num_hidden_layers", "num_mtp_layers"}, path, 0);
  if (nextn > 0 && m.numLayers >= 0)
    for (int64_t i = 0; i < nextn; ++i) m.mtpLayers.push_back(int(m.numLayers + i));
  else if (mtpHidden > 0) {
    m.mtpUnderLayers = false;
    for (int64_t i = 0; i < mtpHidden; ++i) m.mtpLayers.push_back(int(i));
  }

  AttentionConfig& a = m.attention;
  a.numHeads = intKey(t, {"num_attention_heads", "n_head", "num_heads"});
  a.numKvHeads = intKey(t, {"num_key_value_heads", "num_kv_heads", "n_head_kv"}, a.numHeads);
  a.headDim = intKey(t, {"head_dim"});
  if (a.headDim <= 0 && a.numHeads > 0 && m.hiddenSize > 0) a.headDim = m.hiddenSize / a.numHeads;
  a.vHeadDim = intKey(t, {"v_head_dim"}, a.headDim);
  a.kvLoraRank = intKey(t, {"kv_lora_rank"});
  a.qkRopeHeadDim = intKey(t, {"qk_rope_head_dim"});
  a.indexTopk = intKey(t, {"index_topk"});
  a.kvSharedLayers = std::max<int64_t>(0, countKey(t, {"num_kv_shared_layers"}, path, 0));
  a.indexHeadDim = intKey(t, {"index_head_dim"});
  // Qwen2/3 carry sliding_window with use_sliding_window false: then no layer slides.
  if (!(t.contains("use_sliding_window") && t["use_sliding_window"].is_boolean() && !t["use_sliding_window"].get<bool>()))
    a.slidingWindow = intKey(t, {"sliding_window"});
  a.slidingWindowPattern = intKey(t, {"sliding_window_pattern"});
  a.fullAttentionInterval = intKey(t, {"full_attention_interval"});
  if (auto lt = t.find("layer_types"); lt != t.end() && lt->is_array())
    for (const auto& e : *lt) a.layerTypes.push_back(e.is_string() ? e.get<std::string>() : std::string{});
  compressRatios(t, a);
  perLayerHeads(t, m.numLayers, a);
  a.linearKeyHeads = intKey(t, {"linear_num_key_heads"});
  a.linearValueHeads = intKey(t, {"linear_num_value_heads"});
  a.linearKeyHeadDim = intKey(t, {"linear_key_head_dim"});
  a.linearValueHeadDim = intKey(t, {"linear_value_head_dim"});
  a.linearConvKernel = intKey(t, {"linear_conv_kernel_dim"});
  a.mambaSsmDtype = strKey(t, "mamba_ssm_dtype");
  a.hybridSwaFlag = t.contains("is_hybrid_swa") && t["is_hybrid_swa"].is_boolean() && t["is_hybrid_swa"].get<bool>();
  // SGLang 0.5.23 model_config.py uses_kda_attention, on the config and its text config.
  for (const json* c : std::initializer_list<const json*>{&root, &t}) {
    const auto kda = c->find("linear_attn_config");
    const auto types = c->find("layer_types");
    a.kdaAttention |= kda != c->end() && kda->is_object() && kda->contains("kda_layers") && (*kda)["kda_layers"].is_array() && !(*kda)["kda_layers"].empty();
    a.kdaAttention |= types != c->end() && types->is_array() && std::find(types->begin(), types->end(), json("linear_attention")) != types->end() &&
                      c->contains("linear_num_heads") && !(*c)["linear_num_heads"].is_null() && c->contains("linear_head_dim") && !(*c)["linear_head_dim"].is_null();
  }
  // Kimi Linear's KDA layers (linear_attn_config.kda_layers, 1-based: SGLang 0.5.23
  // configs/kimi_linear.py is_kda_layer tests layer_idx + 1) keep a state, not a cache; the rest
  // are its MLA layers. A KDA layer's conv runs over q, k and v of num_heads x head_dim each, and
  // its recurrent state is num_heads x head_dim x head_dim (KimiLinearStateShape.create): the same
  // shapes as Gated DeltaNet's with key and value heads alike.
  if (const auto lac = t.find("linear_attn_config"); lac != t.end() && lac->is_object() && a.layerTypes.empty() && m.numLayers > 0) {
    if (const auto kda = lac->find("kda_layers"); kda != lac->end() && kda->is_array() && !kda->empty()) {
      a.layerTypes.assign(size_t(m.numLayers), "full_attention");
      for (const auto& id : *kda)
        if (id.is_number_integer() && id.get<int64_t>() >= 1 && id.get<int64_t>() <= m.numLayers) a.layerTypes[size_t(id.get<int64_t>() - 1)] = "linear_attention";
      const int64_t heads = intKey(*lac, {"num_heads"}), dim = intKey(*lac, {"head_dim"});
      if (a.linearKeyHeads <= 0) a.linearKeyHeads = a.linearValueHeads = heads;
      if (a.linearKeyHeadDim <= 0) a.linearKeyHeadDim = a.linearValueHeadDim = dim;
      if (a.linearConvKernel <= 0) a.linearConvKernel = intKey(*lac, {"short_conv_kernel_size"});
    }
  }
  a.dtype = strKey(t, "torch_dtype");
  if (a.dtype.empty()) a.dtype = strKey(t, "dtype");
  if (a.dtype.empty()) a.dtype = strKey(root, "torch_dtype");
  if (a.dtype.empty()) a.dtype = strKey(root, "dtype");
  a.maxPositions = intKey(t, {"max_position_embeddings"});

  if (auto ep = root.find("base_model_ep_plan"); ep != root.end()) m.baseModelEpPlan = ep->dump();
  else if (auto ep2 = t.find("base_model_ep_plan"); ep2 != t.end()) m.baseModelEpPlan = ep2->dump();

  const json* q = nullptr;
  if (root.contains("quantization_config")) q = &root["quantization_config"];
  else if (t.contains("quantization_config")) q = &t["quantization_config"];
  else if (root.contains("quantization")) q = &root["quantization"];
  if (q && q->is_object()) readQuantConfig(*q, m.quant, path);
  return m;
}

void applyHfQuantConfigText(const std::string& text, const std::string& path, ModelDescription& out) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) fail(ErrorCode::InvalidHeaderJson, "not valid JSON", path);
  if (j.is_object() && j.contains("quantization") && j["quantization"].is_object()) {
    const json& qq = j["quantization"];
    out.quant.source = path;
    out.quant.method = "modelopt";
    out.quant.algo = strKey(qq, "quant_algo");
    out.quant.groupSize = intKey(qq, {"group_size"}, out.quant.groupSize);
    readModelOptScales(qq, out.quant, path);
    if (auto ex = qq.find("exclude_modules"); ex != qq.end() && ex->is_array()) {
      out.quant.excluded.clear();
      for (const auto& e : *ex)
        if (e.is_string()) out.quant.excluded.push_back(e.get<std::string>());
      out.quant.listKey = path + ": quantization.exclude_modules";
    }
  }
}

bool readHfConfig(const std::string& dir, ModelDescription& out) {
  namespace fs = std::filesystem;
  fs::path cfg = fs::path(dir) / "config.json";
  if (!fs::exists(cfg)) return false;
  out = parseHfConfigText(readTextFile(cfg.string()), cfg.string());
  fs::path hq = fs::path(dir) / "hf_quant_config.json";
  if (fs::exists(hq)) applyHfQuantConfigText(readTextFile(hq.string()), hq.string(), out);
  return true;
}

}  // namespace ws
