#include "core/diff/metadata_diff.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "core/formats/tokenizer_info.h"
#include "core/io/text_file.h"

namespace ws::diff {

namespace {

namespace fs = std::filesystem;
using Flat = std::map<std::string, std::string>;

// A side file's JSON; nothing when it is absent or unreadable (the integrity family reports it).
std::optional<nlohmann::json> readJson(const std::string& path) {
  try {
    return nlohmann::json::parse(readTextFile(path));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A JSON file's leaves by path (arrays whole: a list of layer types differs as one value).
Flat flatJson(const std::string& path) {
  Flat out;
  const auto j = readJson(path);
  if (!j) return out;
  std::function<void(const nlohmann::json&, const std::string&)> walk = [&](const nlohmann::json& v, const std::string& at) {
    if (v.is_object() && !v.empty()) {
      for (const auto& [k, x] : v.items()) walk(x, at + "/" + k);
      return;
    }
    out[at.empty() ? "/" : at] = v.dump();
  };
  walk(*j, "");
  return out;
}

// tokenizer.json as what decides the token ids: the model's type, its vocabulary and merges by
// count and by a hash of their text (a vocabulary of the same size with one token renamed differs),
// and each added token's id and special flag by its text. Megabytes of vocabulary are not listed
// key by key.
Flat tokenizerJson(const std::string& path) {
  Flat out;
  const auto file = readJson(path);
  if (!file || !file->is_object()) return out;
  const nlohmann::json& j = *file;
  if (const auto m = j.find("model"); m != j.end() && m->is_object()) {
    if (m->contains("type")) out["/model/type"] = (*m)["type"].dump();
    for (const char* part : {"vocab", "merges"})
      if (const auto v = m->find(part); v != m->end() && !v->is_null()) {
        out["/model/" + std::string(part) + " (entries)"] = std::to_string(v->size());
        out["/model/" + std::string(part) + " (hash of the text)"] = std::to_string(std::hash<std::string>{}(v->dump()));
      }
  }
  if (const auto a = j.find("added_tokens"); a != j.end() && a->is_array())
    for (const auto& t : *a)
      if (t.is_object() && t.contains("content") && t["content"].is_string())
        out["/added_tokens/" + t["content"].get<std::string>()] = nlohmann::json{{"id", t.value("id", nlohmann::json())}, {"special", t.value("special", false)}}.dump();
  return out;
}

std::string metaValue(const MetaEntry& e) {
  auto scalar = [](const MetaScalar& s) -> nlohmann::json {
    if (const auto* u = std::get_if<uint64_t>(&s)) return *u;
    if (const auto* i = std::get_if<int64_t>(&s)) return *i;
    if (const auto* d = std::get_if<double>(&s)) return *d;
    if (const auto* b = std::get_if<bool>(&s)) return *b;
    if (const auto* t = std::get_if<std::string>(&s)) return *t;
    return nullptr;
  };
  if (e.type != "ARRAY") return scalar(e.value).dump();
  nlohmann::json first = nlohmann::json::array();
  for (const auto& x : e.first) first.push_back(scalar(x));
  return "[" + e.elementType + " x " + std::to_string(e.length) + "] " + first.dump() + (e.length > e.first.size() ? " ..." : "");
}

void compare(const std::string& source, const Flat& a, const Flat& b, std::vector<MetadataDifference>& out) {
  const size_t first = out.size();
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end()) out.push_back({source, k, v, std::nullopt});
    else if (it->second != v) out.push_back({source, k, v, it->second});
  }
  for (const auto& [k, v] : b)
    if (!a.count(k)) out.push_back({source, k, std::nullopt, v});
  std::sort(out.begin() + long(first), out.end(), [](const auto& x, const auto& y) { return x.key < y.key; });
}

// The GGUF keys llama.cpp's converter writes from config.json for every text model
// (conversion/base.py TextModel.set_gguf_parameters:1434-1545 at 0c1e57098, llama-cpp-python
// 0.3.36's sdist; key names gguf-py/gguf/constants.py), each from the first HF key present
// (find_hparam), text_config's keys over the top level's (base.py:1352-1354). A model class may
// write a key its own way after these: DeepSeek's MLA keys are followed (convertedAgainstGguf);
// another class's would be listed as a difference, config.json's value on the HF side.
struct ConvertedKey {
  const char* gguf;                // after "{arch}."
  std::vector<const char*> hf;     // find_hparam's candidates, in order
};
const std::vector<ConvertedKey>& convertedKeys() {
  static const std::vector<ConvertedKey> rows = {
      {"block_count", {"n_layers", "num_hidden_layers", "n_layer", "num_layers"}},  // base.py:1356
      {"context_length", {"max_position_embeddings", "n_ctx", "n_positions", "max_length", "max_sequence_length", "model_max_length"}},
      {"embedding_length", {"hidden_size", "n_embd", "dim"}},
      {"feed_forward_length", {"prefix_dense_intermediate_size", "dense_intermediate_size", "intermediate_size", "n_inner", "hidden_dim"}},
      {"attention.head_count", {"num_attention_heads", "n_head", "n_heads"}},
      {"attention.head_count_kv", {"num_key_value_heads", "n_kv_heads"}},
      {"attention.layer_norm_rms_epsilon", {"rms_norm_eps", "norm_eps"}},
      {"attention.layer_norm_epsilon", {"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}},
      {"expert_count", {"num_local_experts", "num_experts", "n_routed_experts"}},
      {"expert_used_count", {"num_experts_per_tok", "num_experts_per_token", "top_k_experts"}},
      {"expert_group_count", {"n_group"}},
      {"expert_group_used_count", {"topk_group"}},
      {"attention.key_length", {"head_dim"}},
      {"attention.value_length", {"head_dim"}},
  };
  return rows;
}

// rope.freq_base as the converter finds it (base.py:1359-1371, 1462, 1505-1506): rope_parameters
// (else rope_scaling; null counts as empty), its full_attention's rope_theta where it splits by
// attention kind, else its own; a theta it lacks is mirrored from the global keys only where it
// does not split.
const nlohmann::json* ropeTheta(const nlohmann::json& h) {
  const nlohmann::json* r = h.contains("rope_parameters") ? &h["rope_parameters"] : h.contains("rope_scaling") ? &h["rope_scaling"] : nullptr;
  const bool object = r && r->is_object();
  if (object && (r->contains("full_attention") || r->contains("sliding_attention"))) {
    const auto f = r->find("full_attention");
    const nlohmann::json& params = f != r->end() && f->is_object() ? *f : *r;
    return params.contains("rope_theta") ? &params["rope_theta"] : nullptr;
  }
  if (object && r->contains("rope_theta")) return &(*r)["rope_theta"];
  for (const char* k : {"global_rope_theta", "rope_global_theta", "rope_theta_global", "rope_theta", "rotary_emb_base"})
    if (h.contains(k)) return &h[k];
  return nullptr;
}

// A number as the GGUF holds it: integers exactly, floats at float32 (the converter writes F32).
bool sameNumber(const nlohmann::json& hf, const MetaScalar& g) {
  if (const auto* d = std::get_if<double>(&g)) return hf.is_number() && float(hf.get<double>()) == float(*d);
  if (!hf.is_number_integer()) return false;
  if (const auto* u = std::get_if<uint64_t>(&g)) return hf.get<int64_t>() >= 0 && uint64_t(hf.get<int64_t>()) == *u;
  if (const auto* i = std::get_if<int64_t>(&g)) return hf.get<int64_t>() == *i;
  return false;
}

// An HF folder against a GGUF: each key the converter derives, config.json's value against the
// GGUF's. Keys config.json does not hold are not compared (the converter writes none).
void convertedAgainstGguf(const Checkpoint& hf, const Checkpoint& gguf, bool hfIsA, std::vector<MetadataDifference>& out) {
  const auto file = readJson((fs::path(sideFolder(hf)) / "config.json").string());
  if (!file || !file->is_object()) return;
  nlohmann::json h = *file;
  if (h.contains("text_config") && h["text_config"].is_object()) h.update(h["text_config"]);
  std::map<std::string, const MetaEntry*> meta;
  for (const MetaEntry& e : gguf.meta) meta.emplace(e.key, &e);
  const auto archKey = meta.find("general.architecture");
  if (archKey == meta.end() || !std::holds_alternative<std::string>(archKey->second->value)) return;
  const std::string arch = std::get<std::string>(archKey->second->value);
  const size_t first = out.size();
  auto one = [&](const std::string& hfKey, const nlohmann::json& v, const std::string& suffix) {
    const std::string key = arch + "." + suffix;
    const auto g = meta.find(key);
    if (g != meta.end() && g->second->type != "ARRAY" && sameNumber(v, g->second->value)) return;
    std::optional<std::string> hv = v.dump(), gv;
    if (g != meta.end()) gv = metaValue(*g->second);
    out.push_back({"config.json -> gguf", hfKey + " -> " + key, hfIsA ? hv : gv, hfIsA ? gv : hv});
  };
  // DeepSeek's MLA (conversion/deepseek.py DeepseekV2Model.set_gguf_parameters:319-353): one KV
  // head (MQA), keys of kv_lora_rank + qk_rope_head_dim, values of kv_lora_rank (512 unless given),
  // rms_norm_eps 1e-6 unless given.
  std::set<std::string> derived;
  if (arch == "deepseek2") {
    const nlohmann::json kv = h.value("kv_lora_rank", nlohmann::json(512));
    const int64_t rank = kv.is_number_integer() ? kv.get<int64_t>() : 512;
    one("num_key_value_heads (MLA: the converter writes 1)", 1, "attention.head_count_kv");
    if (h.contains("qk_rope_head_dim") && h["qk_rope_head_dim"].is_number_integer())
      one("kv_lora_rank + qk_rope_head_dim", rank + h["qk_rope_head_dim"].get<int64_t>(), "attention.key_length");
    one("kv_lora_rank", rank, "attention.value_length");
    if (!h.contains("rms_norm_eps")) h["rms_norm_eps"] = 1e-6;
    derived = {"attention.head_count_kv", "attention.key_length", "attention.value_length"};
  }
  for (const auto& row : convertedKeys())
    for (const char* k : row.hf)
      if (!derived.count(row.gguf) && h.contains(k) && !h[k].is_null()) {
        one(k, h[k], row.gguf);
        break;
      }
  if (const nlohmann::json* theta = ropeTheta(h)) one("rope_theta", *theta, "rope.freq_base");
  std::sort(out.begin() + long(first), out.end(), [](const auto& x, const auto& y) { return x.key < y.key; });
}

}  // namespace

std::vector<MetadataDifference> diffMetadata(const Checkpoint& a, const Checkpoint& b) {
  std::vector<MetadataDifference> out;
  if ((a.format == "gguf") != (b.format == "gguf")) {
    if (a.format == "gguf" ? b.format == "safetensors" : a.format == "safetensors") convertedAgainstGguf(a.format == "gguf" ? b : a, a.format == "gguf" ? a : b, a.format != "gguf", out);
    return out;
  }
  if (a.format == "gguf") {
    // The file's own layout keys (GGUF.*, split.*) say how it is stored, not what it holds.
    auto keys = [](const Checkpoint& c) {
      Flat f;
      for (const MetaEntry& e : c.meta)
        if (!e.key.starts_with("split.") && !f.count(e.key)) f[e.key] = metaValue(e);
      return f;
    };
    compare("gguf", keys(a), keys(b), out);
    return out;
  }
  const fs::path da(sideFolder(a)), db(sideFolder(b));
  for (const char* file : {"config.json", "generation_config.json", "tokenizer_config.json"}) compare(file, flatJson((da / file).string()), flatJson((db / file).string()), out);
  compare("tokenizer.json", tokenizerJson((da / "tokenizer.json").string()), tokenizerJson((db / "tokenizer.json").string()), out);
  return out;
}

}  // namespace ws::diff
