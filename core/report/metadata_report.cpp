#include "core/report/metadata_report.h"

#include <filesystem>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/formats/gguf.h"
#include "core/io/text_file.h"
#include "core/util/glob.h"

namespace ws {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json scalarJson(const MetaScalar& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else return x;
      },
      v);
}

std::string scalarText(const MetaScalar& v, size_t cut) {
  if (auto* s = std::get_if<std::string>(&v)) {
    std::string t = *s;
    for (auto& ch : t)
      if (ch == '\n' || ch == '\r' || ch == '\t') ch = ' ';
    if (cut && t.size() > cut) return "\"" + t.substr(0, cut) + "...\" (" + std::to_string(s->size()) + " bytes)";
    return "\"" + t + "\"";
  }
  if (auto* d = std::get_if<double>(&v)) {
    std::ostringstream o;
    o.precision(9);
    o << *d;
    return o.str();
  }
  return scalarJson(v).dump(-1, ' ', false, json::error_handler_t::replace);
}

// The array's elements from its file, or only the kept preview when the file cannot be read.
std::optional<GgufArray> arrayOf(const Checkpoint& c, const MetaEntry& e) {
  if (e.file < 0 || size_t(e.file) >= c.files.size() || !c.files[size_t(e.file)].map) return std::nullopt;
  auto a = GgufArray::open(c.files[size_t(e.file)].map->bytes(), c.files[size_t(e.file)].path, e);
  if (!a) return std::nullopt;
  return std::move(a.value());
}

json entryJson(const Checkpoint& c, const MetaEntry& e, bool wholeArrays) {
  json j = {{"key", e.key}, {"type", e.type}};
  if (e.type == "ARRAY") {
    j["element_type"] = e.elementType;
    j["length"] = e.length;
    json v = json::array();
    std::optional<GgufArray> a;
    if (wholeArrays) a = arrayOf(c, e);
    if (a)
      for (uint64_t i = 0; i < a->size(); ++i) v.push_back(scalarJson(a->at(i)));
    else
      for (const auto& x : e.first) v.push_back(scalarJson(x));
    j["value"] = std::move(v);
  } else {
    j["value"] = scalarJson(e.value);
  }
  // Which file: always for safetensors shards, for GGUF when a split set has several.
  if ((c.format != "gguf" || c.files.size() > 1) && e.file >= 0 && size_t(e.file) < c.files.size()) j["file"] = c.files[size_t(e.file)].path;
  return j;
}

}  // namespace

json metadataJson(const Checkpoint& c) {
  json out = json::array();
  for (const auto& e : c.meta) out.push_back(entryJson(c, e, false));
  return out;
}

json tokenizerJson(const TokenizerInfo& t) {
  if (!t.present) return nullptr;
  json special = json::array();
  for (const auto& s : t.special) special.push_back({{"role", s.role}, {"id", s.id < 0 ? json(nullptr) : json(s.id)}, {"text", s.text}});
  return {{"source", t.source}, {"model", t.model},         {"vocab_size", t.vocabSize},          {"merges", t.merges},
          {"added_tokens", t.addedTokens}, {"special", special}, {"chat_templates", t.chatTemplates}, {"problems", t.problems}};
}

json configFilesJson(const Checkpoint& c) {
  if (c.format == "gguf") return nullptr;
  const fs::path dir = sideFolder(c);
  json out = json::object();
  for (const char* name : {"config.json", "generation_config.json", "tokenizer_config.json"}) {
    std::error_code ec;
    if (!fs::exists(dir / name, ec)) continue;
    try {
      out[name] = json::parse(readTextFile((dir / name).string()));
    } catch (const std::exception& e) {
      out[name] = {{"error", e.what()}};
    }
  }
  return out;
}

std::string metadataText(const Checkpoint& c, const TokenizerInfo& t) {
  std::ostringstream o;
  if (t.present) {
    o << "tokenizer    " << (t.model.empty() ? "?" : t.model) << ", " << t.vocabSize << " tokens";
    if (t.merges) o << ", " << t.merges << " merges";
    for (const auto& s : t.special) o << ", " << s.role << " " << (s.id < 0 ? std::string("?") : std::to_string(s.id)) << (s.text.empty() ? "" : " " + scalarText(s.text, 24));
    if (!t.chatTemplates.empty()) {
      o << ", chat template" << (t.chatTemplates.size() > 1 ? "s" : "");
      for (const auto& n : t.chatTemplates) o << " " << n;
    }
    o << "  (" << t.source << ")\n";
    for (const auto& p : t.problems) o << "  cannot read: " << p << "\n";
  }
  if (c.meta.empty()) return o.str();
  // One line per distinct entry: a key every shard repeats with the same value ("format": "pt")
  // is shown once, with how many files carry it.
  std::vector<std::pair<std::string, std::vector<int32_t>>> lines;
  std::map<std::string, size_t> seen;
  for (const auto& e : c.meta) {
    std::string line = "  " + e.key + "  " + e.type;
    if (e.type == "ARRAY") {
      line += " of " + std::to_string(e.length) + " " + e.elementType + ":";
      for (size_t i = 0; i < e.first.size() && i < 6; ++i) line += (i ? ", " : " ") + scalarText(e.first[i], 24);
      if (e.length > 6) line += ", ...";
    } else {
      line += "  " + scalarText(e.value, 80);
    }
    auto [it, fresh] = seen.try_emplace(line, lines.size());
    if (fresh) lines.push_back({line, {}});
    lines[it->second].second.push_back(e.file);
  }
  o << "metadata     " << lines.size() << (lines.size() == 1 ? " entry" : " entries") << "\n";
  for (const auto& [line, files] : lines) {
    o << line;
    if (c.files.size() > 1 && files.size() == 1 && files[0] >= 0 && size_t(files[0]) < c.files.size())
      o << "  (" << fs::path(c.files[size_t(files[0])].path).filename().string() << ")";
    else if (c.files.size() > 1)
      o << "  (" << files.size() << " files)";
    o << "\n";
  }
  return o.str();
}

std::string metaText(const Checkpoint& c, const std::string& glob) {
  std::ostringstream o;
  for (const auto& e : c.meta) {
    if (!glob.empty() && !globMatch(glob, e.key)) continue;
    if (e.type != "ARRAY") {
      if (auto* s = std::get_if<std::string>(&e.value)) o << *s << "\n";  // the whole string, as stored (a chat template)
      else o << scalarText(e.value, 0) << "\n";
      continue;
    }
    std::optional<GgufArray> a = arrayOf(c, e);
    if (!a) {
      for (const auto& x : e.first) o << scalarText(x, 0) << "\n";
      continue;
    }
    for (uint64_t i = 0; i < a->size(); ++i) {
      const MetaScalar v = a->at(i);
      if (auto* s = std::get_if<std::string>(&v)) o << *s << "\n";
      else o << scalarText(v, 0) << "\n";
    }
  }
  return o.str();
}

json metaJson(const Checkpoint& c, const std::string& glob) {
  json out = json::array();
  for (const auto& e : c.meta)
    if (glob.empty() || globMatch(glob, e.key)) out.push_back(entryJson(c, e, true));
  return out;
}

}  // namespace ws
