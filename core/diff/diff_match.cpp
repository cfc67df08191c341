#include "core/diff/diff_match.h"

#include "core/model/gguf_conversion.h"

#include <map>
#include <string_view>
#include <unordered_map>

namespace ws::diff {

namespace {

// HF leaf paths (after "layers.N.") and top-level names in llama.cpp's spelling, as
// convert_hf_to_gguf.py writes them. Anything not listed keeps its own name, so two checkpoints
// of one family still match tensor for tensor.
const std::unordered_map<std::string_view, std::string_view>& layerLeaves() {
  static const std::unordered_map<std::string_view, std::string_view> m = {
      {"self_attn.q_proj", "attn_q"},
      {"self_attn.k_proj", "attn_k"},
      {"self_attn.v_proj", "attn_v"},
      {"self_attn.o_proj", "attn_output"},
      {"self_attn.q_norm", "attn_q_norm"},
      {"self_attn.k_norm", "attn_k_norm"},
      {"self_attn.q_a_proj", "attn_q_a"},
      {"self_attn.q_a_layernorm", "attn_q_a_norm"},
      {"self_attn.q_b_proj", "attn_q_b"},
      {"self_attn.kv_a_proj_with_mqa", "attn_kv_a_mqa"},
      {"self_attn.kv_a_layernorm", "attn_kv_a_norm"},
      {"self_attn.kv_b_proj", "attn_kv_b"},
      {"self_attn.sinks", "attn_sinks"},
      {"input_layernorm", "attn_norm"},
      {"mlp.shared_expert_gate", "ffn_gate_inp_shexp"},
  };
  return m;
}

const std::unordered_map<std::string_view, std::string_view>& topLevel() {
  static const std::unordered_map<std::string_view, std::string_view> m = {
      {"embed_tokens", "token_embd"}, {"norm", "output_norm"}, {"lm_head", "output"},
      {"token_embd", "token_embd"},   {"output_norm", "output_norm"}, {"output", "output"},
  };
  return m;
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    size_t dot = s.find('.', at);
    out.push_back(s.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at));
    if (dot == std::string_view::npos) return out;
    at = dot + 1;
  }
}

// The part of a logical name after its layer index ("self_attn.q_proj" of
// "model.layers.3.self_attn.q_proj", "attn_q" of "blk.3.attn_q"); the whole name when no layer.
std::string leafAfterLayer(const std::string& name, int32_t layer) {
  auto t = split(name);
  const std::string idx = std::to_string(layer);
  for (size_t i = 1; i + 1 < t.size(); ++i)
    if (t[i] == idx && (t[i - 1] == "layers" || t[i - 1] == "blk" || t[i - 1] == "h" || t[i - 1] == "blocks" || t[i - 1] == "layer")) {
      std::string leaf;
      for (size_t k = i + 1; k < t.size(); ++k) leaf += (k > i + 1 ? "." : "") + std::string(t[k]);
      return leaf;
    }
  return name;
}

std::string canonicalName(const Checkpoint& c, const TensorRecord& w, const LogicalTensor& l) {
  // DeepSeek's routing bias is a buffer beside the router; llama.cpp calls it exp_probs_b.
  if (l.name.ends_with(".e_score_correction") || l.name.ends_with(".exp_probs_b")) return "blk." + std::to_string(w.layer) + ".exp_probs_b";
  // A vision tower's tensors keep their own names: its norms are not the model's final norm.
  if (w.role == Role::Vision) return l.name;
  if (w.layer < 0) {
    auto t = split(l.name);
    auto it = topLevel().find(t.back());
    return it != topLevel().end() ? std::string(it->second) : l.name;
  }
  const std::string blk = "blk." + std::to_string(w.layer) + ".";
  const std::string p(projectionName(w.projection));
  switch (w.role) {
    case Role::Router: return blk + "ffn_gate_inp";
    case Role::DenseMlp:
      if (!p.empty()) return blk + "ffn_" + p;
      break;
    case Role::SharedExpert:
      if (!p.empty()) return blk + "ffn_" + p + "_shexp";
      break;
    default: break;
  }
  std::string leaf = leafAfterLayer(l.name, w.layer);
  if (leaf == "post_attention_layernorm") return blk + std::string(ggufConversionFor(c.format, c.model.architecture).postAttentionNorm);
  auto it = layerLeaves().find(leaf);
  return blk + (it != layerLeaves().end() ? std::string(it->second) : leaf);
}

// The converter's transformation of one attention tensor, undone on this unit (and its bias):
// Q/K rows back from ggml's RoPE order; attn_k_b's per-head matrices transposed back.
void undoConversion(const Checkpoint& c, const TensorRecord& w, const std::string& key, Unit& u) {
  const GgufConversion& conv = ggufConversionFor(c.format, c.model.architecture);
  if (c.format != "gguf") return;
  const AttentionConfig& a = c.model.attention;
  if (conv.permutesQK && (key.ends_with(".attn_q") || key.ends_with(".attn_k"))) {
    u.ropeHeads = key.ends_with(".attn_q") ? a.numHeads : (a.numKvHeads > 0 ? a.numKvHeads : a.numHeads);
    if (u.ropeHeads > 0) u.undone = "RoPE row permutation over " + std::to_string(u.ropeHeads) + " heads (" + std::string(conv.source.substr(0, conv.source.find(':'))) + ")";
    else u.ropeHeads = 0;
  }
  if (conv.splitsKvB && key.ends_with(".attn_k_b") && w.shape.size() == 3) {
    u.transposeEach = int64_t(w.shape[0]);
    u.undone = "attn_k_b's per-head transpose (deepseek.py: kv_b_proj split)";
  }
}

// An MLA kv_b_proj [heads x (nope + v), kv_lora] cut as llama.cpp cuts it: the K rows of each head
// (key attn_k_b) and the V rows (attn_v_b), so it meets a GGUF's two tensors - and a whole kv_b
// on the other side, cut the same way.
bool splitKvB(const Checkpoint& c, const TensorRecord& w, const std::string& key, Unit u, int32_t layer, std::vector<UnitKey>& out) {
  const AttentionConfig& a = c.model.attention;
  if (!key.ends_with(".attn_kv_b") || w.shape.size() != 2 || a.numHeads <= 0 || a.vHeadDim <= 0) return false;
  const uint64_t perHead = w.shape[0] / uint64_t(a.numHeads);
  if (perHead * uint64_t(a.numHeads) != w.shape[0] || perHead <= uint64_t(a.vHeadDim)) return false;
  const uint64_t nope = perHead - uint64_t(a.vHeadDim);
  const std::string base = key.substr(0, key.size() - std::string("kv_b").size());
  for (int part = 0; part < 2; ++part) {
    UnitKey k;
    k.key = base + (part == 0 ? "k_b" : "v_b");
    k.layer = layer;
    k.unit = u;
    k.unit.slicePeriod = perHead;
    k.unit.sliceOffset = part == 0 ? 0 : nope;
    k.unit.sliceCount = part == 0 ? nope : uint64_t(a.vHeadDim);
    k.unit.undone = std::string(part == 0 ? "K" : "V") + " rows of each of " + std::to_string(a.numHeads) + " heads of kv_b (deepseek.py: kv_b_proj split)";
    out.push_back(std::move(k));
  }
  return true;
}

void addExpertUnits(const TensorRecord& w, uint32_t li, int64_t bias, std::vector<UnitKey>& out) {
  const std::string blk = "blk." + std::to_string(w.layer) + ".ffn_";
  const bool stackedOrFused = w.expert < 0 && w.shape.size() >= 3;  // MXFP4 blocks: [E, rows, in/32, 16]
  const int64_t experts = stackedOrFused ? int64_t(w.shape[0]) : 1;
  for (int64_t e = 0; e < experts; ++e) {
    const int32_t expertIndex = stackedOrFused ? int32_t(e) : w.expert;
    Unit u;
    u.logical = li;
    u.expert = stackedOrFused ? e : -1;
    u.transposed = w.layout == Layout::FusedInOut;
    u.interleaved = w.interleaved;
    auto push = [&](const char* proj, int half) {
      UnitKey k;
      k.key = blk + proj + "_exps." + std::to_string(expertIndex);
      k.layer = w.layer;
      k.expert = expertIndex;
      k.projection = proj;
      k.unit = u;
      k.unit.half = half;
      out.push_back(k);
      if (bias >= 0) {
        k.key += ".bias";
        k.unit.member = bias;
        out.push_back(std::move(k));
      }
    };
    if (w.projection == Projection::GateUp) {
      push("gate", 0);
      push("up", 1);
    } else {
      push(std::string(projectionName(w.projection)).c_str(), -1);
    }
  }
}

}  // namespace

std::vector<UnitKey> unitsOf(const Checkpoint& c) {
  std::vector<UnitKey> out;
  for (uint32_t li = 0; li < c.logical.size(); ++li) {
    const LogicalTensor& l = c.logical[li];
    int64_t bias = -1;
    for (uint32_t m : l.members)
      if (c.tensors[m].component == Component::Bias) bias = m;
    if (l.weight < 0) {  // a lone bias or buffer
      if (bias < 0) continue;
      const TensorRecord& b = c.tensors[uint32_t(bias)];
      UnitKey k;
      k.key = canonicalName(c, b, l) + ".bias";
      k.layer = b.layer;
      k.unit.logical = li;
      k.unit.member = bias;
      out.push_back(std::move(k));
      continue;
    }
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    if (w.component != Component::Weight) continue;
    if (w.role == Role::RoutedExpert && w.projection != Projection::None && w.layer >= 0) {
      addExpertUnits(w, li, bias, out);
      continue;
    }
    const std::string name = canonicalName(c, w, l);
    Unit whole;
    whole.logical = li;
    whole.transposed = w.layout == Layout::FusedInOut;
    whole.interleaved = w.interleaved;
    if (bias < 0 && splitKvB(c, w, name, whole, w.layer, out)) continue;
    undoConversion(c, w, name, whole);
    auto push = [&](const std::string& key, int half) {
      UnitKey k;
      k.key = key;
      k.layer = w.layer;
      k.unit = whole;
      k.unit.half = half;
      out.push_back(k);
      if (bias >= 0) {
        k.key += ".bias";
        k.unit.member = bias;
        out.push_back(std::move(k));
      }
    };
    if (w.projection == Projection::GateUp) {  // a fused dense or shared gate_up: two units
      const std::string base = name.substr(0, name.find("gate_up"));
      const std::string tail = name.substr(name.find("gate_up") + 7);
      const size_t first = out.size();
      push(base + "gate" + tail, 0);
      const size_t second = out.size();
      push(base + "up" + tail, 1);
      for (size_t i = first; i < out.size(); ++i) out[i].projection = i < second ? "gate" : "up";
    } else {
      const size_t first = out.size();
      push(name, -1);
      if (w.role == Role::SharedExpert || w.role == Role::DenseMlp)
        for (size_t i = first; i < out.size(); ++i) out[i].projection = std::string(projectionName(w.projection));
    }
  }
  return out;
}

Matching matchCheckpoints(const Checkpoint& a, const Checkpoint& b) {
  Matching m;
  std::vector<UnitKey> ua = unitsOf(a), ub = unitsOf(b);
  std::map<std::string, size_t> inB;
  for (size_t i = 0; i < ub.size(); ++i) inB.emplace(ub[i].key, i);
  std::vector<bool> usedB(ub.size(), false);
  for (const auto& k : ua) {
    auto it = inB.find(k.key);
    if (it == inB.end() || usedB[it->second]) {
      m.onlyA.push_back(k);
      continue;
    }
    usedB[it->second] = true;
    m.pairs.push_back(Pair{k.key, k.layer, k.expert, k.projection, k.unit, ub[it->second].unit});
  }
  for (size_t i = 0; i < ub.size(); ++i)
    if (!usedB[i]) m.onlyB.push_back(ub[i]);
  return m;
}

}  // namespace ws::diff
