#include "core/validate/attention_rules.h"

#include <array>
#include <string_view>

#include "core/numerics/dequant.h"
#include "core/util/format_bytes.h"

namespace ws::val {

namespace {

enum class Part { Q, K, V, O };

// The attention projections by their logical names' endings: transformers' and llama.cpp's.
constexpr std::array<std::pair<std::string_view, Part>, 8> kProjections = {{
    {".self_attn.q_proj", Part::Q}, {".self_attn.k_proj", Part::K}, {".self_attn.v_proj", Part::V}, {".self_attn.o_proj", Part::O},
    {".attn_q", Part::Q}, {".attn_k", Part::K}, {".attn_v", Part::V}, {".attn_output", Part::O},
}};

// Architectures whose q_proj also holds a per-head output gate (Qwen3-Next's gated attention):
// twice the query rows.
bool gatedQuery(std::string_view arch) { return arch == "qwen3_next" || arch == "qwen3next"; }

}  // namespace

void attentionRules(const Checkpoint& c, Sink& sink) {
  const ModelDescription& m = c.model;
  const AttentionConfig& a = m.attention;
  // MLA (DeepSeek, Kimi) projects through low-rank latents: its shapes are not heads x head_dim.
  if (a.kvLoraRank > 0 || a.numHeads <= 0 || a.headDim <= 0 || m.hiddenSize <= 0) return;
  const bool gguf = c.format == "gguf";
  const uint64_t H = uint64_t(m.hiddenSize), heads = uint64_t(a.numHeads);
  const std::string headsKey = gguf ? "head_count" : "num_attention_heads", kvKey = gguf ? "head_count_kv" : "num_key_value_heads";
  const std::string kKey = gguf ? "key_length" : "head_dim", vKey = gguf ? "value_length" : "head_dim";
  FindingGroup group;
  std::string first;
  for (uint32_t li = 0; li < c.logical.size(); ++li) {
    const LogicalTensor& l = c.logical[li];
    if (l.weight < 0 || c.isCut(l)) continue;
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    if (w.role == Role::Vision || w.layer < 0) continue;  // a vision tower has heads of its own
    const Part* part = nullptr;
    for (const auto& [ending, p] : kProjections)
      if (l.name.ends_with(ending)) part = &p;
    if (!part) continue;
    auto decoded = num::decodedShape(c, li);
    if (!decoded) continue;  // a shape the decoder refuses is WS-S004's or an integrity finding
    const std::vector<uint64_t> shape = decoded.value();
    // Per layer where layers differ (Gemma 4: per-layer KV heads, wider full-attention heads).
    const int64_t layerKv = a.kvHeadsAt(w.layer), layerK = a.headDimAt(w.layer), layerV = a.vHeadDimAt(w.layer);
    const uint64_t kvHeads = uint64_t(layerKv > 0 ? layerKv : a.numHeads);
    const uint64_t kDim = uint64_t(layerK > 0 ? layerK : a.headDim), vDim = uint64_t(layerV > 0 ? layerV : kDim);
    std::vector<uint64_t> want;
    std::string why;
    switch (*part) {
      case Part::Q:
        want = {heads * kDim, H};
        why = headsKey + " " + std::to_string(heads) + " x " + kKey + " " + std::to_string(kDim);
        if (gatedQuery(m.architecture) && shape == std::vector<uint64_t>{2 * heads * kDim, H}) continue;
        break;
      case Part::K:
        want = {kvHeads * kDim, H};
        why = kvKey + " " + std::to_string(kvHeads) + " x " + kKey + " " + std::to_string(kDim);
        break;
      case Part::V:
        want = {kvHeads * vDim, H};
        why = kvKey + " " + std::to_string(kvHeads) + " x " + vKey + " " + std::to_string(vDim);
        break;
      case Part::O:
        want = {H, heads * vDim};
        why = headsKey + " " + std::to_string(heads) + " x " + vKey + " " + std::to_string(vDim);
        break;
    }
    if (shape == want) continue;
    if (first.empty()) first = w.name + " is " + formatShape(shape) + ", " + why + " make " + formatShape(want);
    group.add(w.name);
  }
  group.report(sink, "WS-S008", "attention projections disagree with the head counts (first: " + first + ")");
}

}  // namespace ws::val
