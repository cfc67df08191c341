#include "core/diff/metadata_diff.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

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

}  // namespace

std::vector<MetadataDifference> diffMetadata(const Checkpoint& a, const Checkpoint& b) {
  std::vector<MetadataDifference> out;
  if ((a.format == "gguf") != (b.format == "gguf")) return out;
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
