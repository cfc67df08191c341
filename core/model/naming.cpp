#include "core/model/naming.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <vector>

namespace ws {

namespace {

bool isDigits(std::string_view s) {
  return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int toInt(std::string_view s) {
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

struct SuffixRule {
  std::string_view suffix;
  Component component;
};

// Longest match first: ".weight_scale_2" before ".weight_scale" before ".weight".
constexpr std::array kSuffixes = {
    SuffixRule{".weight_scale_inv", Component::Scale},      // DeepSeek / FineGrainedFP8 block scales
    SuffixRule{".weight_scale_2", Component::GlobalScale},  // ModelOpt NVFP4 per-tensor scale
    SuffixRule{".weight_global_scale", Component::GlobalScale},
    SuffixRule{".weight_zero_point", Component::ZeroPoint},
    SuffixRule{".zero_point", Component::ZeroPoint},         // bare: a companion, never a weight (KTransformers checks both)
    SuffixRule{".input_global_scale", Component::InputScale},
    SuffixRule{".weight_scale", Component::Scale},
    SuffixRule{".weight_g_idx", Component::GIdx},
    SuffixRule{".weight_shape", Component::Shape},
    SuffixRule{".weight_packed", Component::Weight},        // compressed-tensors, RAWINT4
    // bitsandbytes 4-bit: the packed codes stay ".weight"; their quant state is serialized beside
    // them (bitsandbytes QuantState.as_dict(packed=True)).
    SuffixRule{".weight.nested_quant_map", Component::QuantState},
    SuffixRule{".weight.nested_absmax", Component::QuantState},
    SuffixRule{".weight.quant_map", Component::QuantState},
    SuffixRule{".weight.absmax", Component::Scale},
    SuffixRule{".weight.quant_state.bitsandbytes__nf4", Component::QuantState},
    SuffixRule{".weight.quant_state.bitsandbytes__fp4", Component::QuantState},
    SuffixRule{".weight_format", Component::QuantState},    // bitsandbytes int8: the layout of .weight
    SuffixRule{".SCB", Component::Scale},                   // bitsandbytes int8: each row's absmax
    // GPTQ (AutoGPTQ, GPTQModel, optimum) and AWQ (AutoAWQ): int32 words of packed codes.
    SuffixRule{".qweight", Component::Weight},
    SuffixRule{".qzeros", Component::ZeroPoint},
    SuffixRule{".g_idx", Component::GIdx},
    SuffixRule{".input_scale", Component::InputScale},
    // The attention's KV-cache quantization scales (vLLM BaseKVCacheMethod, compressed-tensors
    // kv_cache_scheme, ModelOpt kv_cache_quant_algo), on the attention module or on k_proj/v_proj.
    SuffixRule{".k_scale", Component::KvScale},
    SuffixRule{".v_scale", Component::KvScale},
    SuffixRule{".q_scale", Component::KvScale},
    SuffixRule{".prob_scale", Component::KvScale},
    SuffixRule{".kv_scale", Component::KvScale},
    SuffixRule{"_weight.blocks", Component::Weight},        // gpt-oss original: block.N.mlp.mlp1_weight.blocks
    SuffixRule{"_weight.scales", Component::Scale},
    SuffixRule{".lora_A.weight", Component::LoraA},          // PEFT LoRA factors, named after the module
    SuffixRule{".lora_B.weight", Component::LoraB},
    SuffixRule{".lora_embedding_A", Component::LoraA},       // PEFT LoRA of an embedding
    SuffixRule{".lora_embedding_B", Component::LoraB},
    SuffixRule{".lora_a", Component::LoraA},                 // MLX (mlx-lm) LoRA factors
    SuffixRule{".lora_b", Component::LoraB},
    SuffixRule{".weight", Component::Weight},
    SuffixRule{".biases", Component::ZeroPoint},            // MLX affine offset
    SuffixRule{".scales", Component::Scale},                // MLX
    SuffixRule{".bias", Component::Bias},
    SuffixRule{".scale", Component::Scale},                 // KTransformers NUMA scale
    SuffixRule{"_scale_inv", Component::Scale},             // transformers 5 fused FP8 (gate_up_proj_scale_inv)
    SuffixRule{"_blocks", Component::Weight},               // gpt-oss MXFP4
    SuffixRule{"_scales", Component::Scale},                // gpt-oss MXFP4 (E8M0)
    SuffixRule{"_bias", Component::Bias},                   // gpt-oss expert biases
};

Projection projectionOf(std::string_view tok) {
  if (tok == "gate_proj" || tok == "w1" || tok == "ffn_gate" || tok == "ffn_gate_exps" || tok == "ffn_gate_shexp" ||
      tok == "ffn_gate_bwd_exps")
    return Projection::Gate;
  if (tok == "up_proj" || tok == "w3" || tok == "ffn_up" || tok == "ffn_up_exps" || tok == "ffn_up_shexp" || tok == "ffn_up_bwd_exps")
    return Projection::Up;
  if (tok == "down_proj" || tok == "w2" || tok == "ffn_down" || tok == "ffn_down_exps" || tok == "ffn_down_shexp" ||
      tok == "ffn_down_bwd_exps" || tok == "mlp2_weight" || tok == "mlp2")
    return Projection::Down;
  if (tok == "gate_up_proj" || tok == "ffn_gate_up_exps" || tok == "mlp1_weight" || tok == "mlp1" || tok == "gate_up")
    return Projection::GateUp;
  return Projection::None;
}

bool isVisionToken(std::string_view t) {
  return t == "visual" || t == "vision_tower" || t == "vision_model" || t == "multi_modal_projector" || t == "mm_projector" ||
         t == "vision_encoder" || t == "vision" || t == "audio_tower" || t == "v" /* GGUF mmproj */;
}

// Where the layers are numbered: "layers.N", "h.N", "blocks.N" (HF) or "blk.N" (GGUF,
// KTransformers); t.size() when the name has no layer.
size_t layerTokenOf(const std::vector<std::string_view>& t) {
  for (size_t i = 0; i + 1 < t.size(); ++i)
    if ((t[i] == "layers" || t[i] == "blk" || t[i] == "h" || t[i] == "blocks" || t[i] == "block" || t[i] == "layer") && isDigits(t[i + 1])) return i;
  return t.size();
}

// The wrappers a model's own tensors sit under (transformers' model., a multimodal model's
// language_model., Qwen-Omni's thinker.): what prefix detection strips before a top-level name.
bool isContainerToken(std::string_view t) {
  return t == "base_model" /* PEFT's PeftModel wrapper */ || t == "model" || t == "language_model" || t == "transformer" || t == "thinker" || t == "talker" || t == "text_model" || t == "backbone";
}

bool isNormToken(std::string_view t) {
  return contains(t, "norm") || t == "ln_f" || t == "ln_1" || t == "ln_2" || t == "enorm" || t == "hnorm";
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    out.push_back(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return out;
}

// Role of the part of a name that follows "layers.N." / "blk.N." (HF and GGUF spellings).
void classifyLayerPart(const std::vector<std::string_view>& t, size_t from, NameParts& p) {
  for (size_t i = from; i < t.size(); ++i) {
    std::string_view tok = t[i];
    // GGUF: one token says it all.
    if (endsWith(tok, "_exps")) {
      p.role = Role::RoutedExpert;
      p.projection = projectionOf(tok);
      if (i + 1 < t.size() && isDigits(t[i + 1])) {  // KTransformers: blk.L.ffn_up_exps.E.numa.N
        p.expert = toInt(t[i + 1]);
        if (i + 3 < t.size() && t[i + 2] == "numa" && isDigits(t[i + 3])) p.numaNode = toInt(t[i + 3]);
      } else {
        p.stacked = true;
      }
      return;
    }
    if (endsWith(tok, "_shexp")) {
      p.role = Role::SharedExpert;
      p.projection = projectionOf(tok);
      return;
    }
    if (tok == "ffn_gate_inp" || tok == "exp_probs_b") { p.role = Role::Router; return; }
    if (tok == "nextn") { p.role = Role::Mtp; return; }
    if (tok == "ffn_gate" || tok == "ffn_up" || tok == "ffn_down") {
      p.role = Role::DenseMlp;
      p.projection = projectionOf(tok);
      return;
    }
    if (tok.substr(0, 5) == "attn_") { p.role = isNormToken(tok) ? Role::Norm : Role::Attention; return; }

    // HF spellings.
    if (tok == "shared_experts" || tok == "shared_expert" || tok == "shared_mlp" || tok == "shared_expert_gate") {
      p.role = Role::SharedExpert;
      if (i + 1 < t.size()) p.projection = projectionOf(t[i + 1]);
      return;
    }
    if (tok == "experts" || tok == "switch_mlp") {
      p.role = Role::RoutedExpert;
      if (i + 1 < t.size() && isDigits(t[i + 1])) {
        p.expert = toInt(t[i + 1]);
        if (i + 2 < t.size()) p.projection = projectionOf(t[i + 2]);
      } else if (i + 1 < t.size()) {
        p.fused = true;
        p.alwaysOutIn = tok == "switch_mlp";
        p.projection = projectionOf(t[i + 1]);
      }
      return;
    }
    if (tok == "router" || tok == "gate" || tok == "e_score_correction") {
      // "mlp.gate" (no _proj) is the MoE router - "ffn.gate" in DeepSeek's own naming (the V4
      // release); a trailing "gate" elsewhere is not ours to guess.
      if (tok != "gate" || (i > from && (t[i - 1] == "mlp" || t[i - 1] == "block_sparse_moe" || t[i - 1] == "feed_forward" ||
                                         t[i - 1] == "moe" || t[i - 1] == "ffn"))) {
        p.role = Role::Router;
        return;
      }
    }
    if (isNormToken(tok)) { p.role = Role::Norm; return; }
    if (tok == "self_attn" || tok == "attention" || tok == "attn" || tok == "self_attention" || tok == "linear_attn") {
      p.role = Role::Attention;
      // Per-head norms live under the attention module but are norms.
      for (size_t k = i + 1; k < t.size(); ++k)
        if (isNormToken(t[k])) p.role = Role::Norm;
      return;
    }
    if (tok == "mlp" || tok == "feed_forward" || tok == "ffn" || tok == "block_sparse_moe") {
      if (i + 1 < t.size() && (t[i + 1] == "mlp1" || t[i + 1] == "mlp2")) {  // gpt-oss original fused experts
        p.role = Role::RoutedExpert;
        p.fused = true;
        p.projection = projectionOf(t[i + 1]);
        return;
      }
      if (i + 1 < t.size()) {
        Projection pr = projectionOf(t[i + 1]);
        if (pr != Projection::None || t[i + 1] == "fc1" || t[i + 1] == "fc2" || t[i + 1] == "c_fc" || t[i + 1] == "c_proj") {
          p.role = Role::DenseMlp;
          p.projection = pr;
          return;
        }
      }
      continue;  // look at the next token (experts, gate, shared_experts, ...)
    }
    // DeepSeek MTP layer pieces.
    if (tok == "eh_proj" || tok == "shared_head" || tok == "embed_tokens") { p.role = Role::Mtp; return; }
  }
}

void classifyTopLevel(std::string_view tok, NameParts& p) {
  // embed / head: DeepSeek's own inference naming, which the V4 checkpoints ship in (llama.cpp's
  // converter, conversion/deepseek.py DeepseekV4Model: embed.weight, head.weight).
  if (tok == "embed_tokens" || tok == "wte" || tok == "tok_embeddings" || tok == "word_embeddings" || tok == "token_embd" ||
      tok == "embeddings" || tok == "embedding" || tok == "embed")
    p.role = Role::Embedding;
  else if (tok == "lm_head" || tok == "output" || tok == "embed_out" || tok == "unembedding" || tok == "head")
    p.role = Role::LmHead;
  else if (isNormToken(tok))
    p.role = Role::Norm;
}

}  // namespace

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Digit runs starting at i in a and j in b: by value (length without leading zeros, then the
// digits), then fewer leading zeros first; 0 when equal. *ie / *je receive the run ends.
int compareNumbers(std::string_view a, size_t i, std::string_view b, size_t j, size_t* ie, size_t* je) {
  size_t i2 = i, j2 = j;
  while (i2 < a.size() && a[i2] == '0') ++i2;
  while (j2 < b.size() && b[j2] == '0') ++j2;
  size_t ia = i2, jb = j2;
  while (ia < a.size() && isDigit(a[ia])) ++ia;
  while (jb < b.size() && isDigit(b[jb])) ++jb;
  *ie = ia;
  *je = jb;
  if (ia - i2 != jb - j2) return ia - i2 < jb - j2 ? -1 : 1;
  if (int c = a.substr(i2, ia - i2).compare(b.substr(j2, jb - j2))) return c;
  if (ia - i != jb - j) return ia - i < jb - j ? -1 : 1;
  return 0;
}

}  // namespace

// Equal prefixes compare equal in natural order too, so skip them at memcmp speed; only a
// difference inside (or right after) a digit run needs the numeric comparison, which starts
// where that run starts - the same place on both sides, since the bytes before are equal.
// First index where a and b differ within [0, n), eight bytes at a time: sorting 200k names that
// share 40-byte prefixes spends its time here.
size_t firstDifference(const char* a, const char* b, size_t n) {
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + k, 8);
    std::memcpy(&y, b + k, 8);
    if (x != y) return k + size_t(__builtin_ctzll(x ^ y) / 8);  // little-endian: lowest byte first
  }
  while (k < n && a[k] == b[k]) ++k;
  return k;
}

bool naturalLess(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t k = firstDifference(a.data(), b.data(), n);
  size_t s = k;
  while (s > 0 && isDigit(a[s - 1])) --s;
  const bool digitA = k < a.size() && isDigit(a[k]), digitB = k < b.size() && isDigit(b[k]);
  if (s < k ? (digitA || digitB) : (digitA && digitB)) {
    // Compare this run numerically; if equal (same value, same zeros), go on after it.
    for (size_t i = s, j = s;;) {
      size_t ie, je;
      if (int c = compareNumbers(a, i, b, j, &ie, &je)) return c < 0;
      i = ie;
      j = je;
      // Rest: the general loop (rare: runs equal in value but split differently).
      while (i < a.size() && j < b.size()) {
        if (isDigit(a[i]) && isDigit(b[j])) break;
        if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
        ++i;
        ++j;
      }
      if (i >= a.size() || j >= b.size()) return a.size() - i < b.size() - j;
    }
  }
  if (k == n) return a.size() < b.size();
  return static_cast<unsigned char>(a[k]) < static_cast<unsigned char>(b[k]);
}

std::string naturalKey(std::string_view s) {
  std::string k;
  k.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    if (!isDigit(s[i])) {
      k += s[i++];
      continue;
    }
    size_t z = i;
    while (z < s.size() && s[z] == '0') ++z;
    size_t e = z;
    while (e < s.size() && isDigit(s[e])) ++e;
    const size_t sig = e - z, zeros = z - i;
    k += '0';
    k += char(sig >> 8), k += char(sig & 0xFF);
    k.append(s.substr(z, sig));
    k += char(zeros >> 8), k += char(zeros & 0xFF);
    i = e;
  }
  return k;
}

std::string namePrefix(std::string_view name) {
  auto t = split(name);
  size_t end = 0;
  const auto vision = std::find_if(t.begin(), t.end(), [](std::string_view x) { return isVisionToken(x); });
  if (vision != t.end() && vision + 1 != t.end()) end = size_t(vision - t.begin()) + 1;  // the tower is its own prefix
  else if (const size_t layer = layerTokenOf(t); layer < t.size()) end = layer;
  else
    while (end + 1 < t.size() && isContainerToken(t[end])) ++end;
  std::string p;
  for (size_t i = 0; i < end; ++i) p += std::string(t[i]) + ".";
  return p;
}

// A state dict saved from a PEFT-wrapped model (PeftModel.state_dict() before merging) names a
// LoRA-wrapped module's own weight "X.base_layer.weight" and its factors "X.lora_A.<adapter>.weight":
// the module is still X, as the seed's extract_moe_weights reads it (a LoraLayer's .weight is its
// base layer's). Spelled here as an unwrapped model and a saved adapter name them; "" when the
// name has no such wrapper (peft 0.21 tuners/lora/layer.py: base_layer, lora_A/lora_B ModuleDicts
// keyed by adapter name, lora_embedding_A/B ParameterDicts).
namespace {

std::string withoutPeftWrapper(std::string_view name) {
  for (std::string_view wrapped : {".base_layer.weight", ".base_layer.bias"})
    if (endsWith(name, wrapped) && name.size() > wrapped.size())
      return std::string(name.substr(0, name.size() - wrapped.size())) + std::string(wrapped.substr(std::string_view(".base_layer").size()));
  // ".lora_A.<adapter>.weight" / ".lora_embedding_A.<adapter>": the adapter's key dropped.
  const size_t lastDot = name.rfind('.');
  if (lastDot == std::string_view::npos) return {};
  const bool endsWeight = name.substr(lastDot) == ".weight";
  const std::string_view head = endsWeight ? name.substr(0, lastDot) : name;  // ...lora_A.<adapter>
  const size_t adapterDot = head.rfind('.');
  if (adapterDot == std::string_view::npos || adapterDot + 1 == head.size()) return {};
  const std::string_view factor = head.substr(0, adapterDot);
  using std::string_view_literals::operator""sv;
  const auto factors = endsWeight ? std::array{".lora_A"sv, ".lora_B"sv} : std::array{".lora_embedding_A"sv, ".lora_embedding_B"sv};
  for (std::string_view f : factors)
    if (endsWith(factor, f)) return std::string(factor) + (endsWeight ? ".weight" : "");
  return {};
}

}  // namespace

NameParts parseTensorName(std::string_view name, const ModelDescription& model) {
  const std::string unwrapped = withoutPeftWrapper(name);
  if (!unwrapped.empty()) name = unwrapped;
  NameParts p;
  std::string_view base = name;
  p.component = Component::Weight;
  for (const auto& rule : kSuffixes) {
    if (endsWith(name, rule.suffix) && name.size() > rule.suffix.size()) {
      base = name.substr(0, name.size() - rule.suffix.size());
      p.component = rule.component;
      break;
    }
  }
  auto t = split(base);

  const size_t layerTok = layerTokenOf(t);
  bool vision = std::any_of(t.begin(), t.end(), [](std::string_view x) { return isVisionToken(x); });
  bool mtpPrefix = std::find(t.begin(), t.end(), std::string_view("mtp")) != t.end();

  if (layerTok < t.size()) {
    p.layer = toInt(t[layerTok + 1]);
    classifyLayerPart(t, layerTok + 2, p);
  } else if (!t.empty()) {
    // Top level: the first token after the model's prefix (namePrefix's container tokens:
    // model., language_model., Qwen-Omni's thinker. ...), so a prefixed lm_head is still one.
    size_t i = 0;
    while (i + 1 < t.size() && isContainerToken(t[i])) ++i;
    classifyTopLevel(t[i], p);
  }

  // A norm's own parameter is sometimes called "scale" (gpt-oss original): it is the weight.
  if (p.role == Role::Norm && p.component == Component::Scale) p.component = Component::Weight;
  if (vision) p.role = Role::Vision;
  else if (mtpPrefix) p.role = Role::Mtp;
  else if (p.layer >= 0 && model.numLayers > 0 && model.mtpUnderLayers && p.layer >= model.numLayers) p.role = Role::Mtp;
  if (p.role == Role::Vision) p.layer = -1;

  // The logical name: base without the KTransformers NUMA shard.
  if (p.numaNode >= 0) {
    size_t at = base.rfind(".numa.");
    p.logical = std::string(base.substr(0, at));
  } else {
    p.logical = std::string(base);
  }
  return p;
}

}  // namespace ws
