#include "core/validate/chat_template_rule.h"

#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/formats/tokenizer_info.h"
#include "core/io/text_file.h"

namespace ws::val {

namespace fs = std::filesystem;

namespace {

std::map<std::string, std::string> fromJsonValue(const nlohmann::json& v) {
  std::map<std::string, std::string> out;
  if (v.is_string()) out["default"] = v.get<std::string>();
  if (v.is_array())
    for (const auto& x : v)
      if (x.is_object() && x.contains("name") && x["name"].is_string() && x.contains("template") && x["template"].is_string())
        out[x["name"].get<std::string>()] = x["template"].get<std::string>();
  return out;
}

std::string readOrEmpty(const fs::path& p) {
  try {
    return readTextFile(p.string());
  } catch (const CoreError&) {
    return {};
  }
}

// The first line the two texts differ on, 1-based, with each side's line.
std::string firstDifference(const std::string& a, const std::string& b, const std::string& aName, const std::string& bName) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = bool(std::getline(sa, la)), gb = bool(std::getline(sb, lb));
    if (!ga && !gb) return "they differ in their line ends";
    if (ga != gb || la != lb) {
      auto cut = [](std::string s) { return s.size() > 80 ? s.substr(0, 77) + "..." : s; };
      return "from line " + std::to_string(line) + ": " + aName + " '" + (ga ? cut(la) : "(ends)") + "', " + bName + " '" + (gb ? cut(lb) : "(ends)") + "'";
    }
  }
}

}  // namespace

std::map<std::string, std::string> hfChatTemplates(const std::string& folder, std::string& from) {
  const fs::path dir(folder);
  from.clear();
  try {
    const auto cfg = nlohmann::json::parse(readTextFile((dir / "tokenizer_config.json").string()));
    if (cfg.is_object() && cfg.contains("chat_template") && !cfg["chat_template"].is_null()) {
      from = "tokenizer_config.json";
      return fromJsonValue(cfg["chat_template"]);
    }
  } catch (const std::exception&) {
    // absent or not JSON: the integrity family says which; the files below may still give one
  }
  if (fs::is_regular_file(dir / "chat_template.jinja")) {
    from = "chat_template.jinja";
    std::map<std::string, std::string> out{{"default", readOrEmpty(dir / "chat_template.jinja")}};
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir / "additional_chat_templates", ec))
      if (e.path().extension() == ".jinja") out[e.path().stem().string()] = readOrEmpty(e.path());
    return out;
  }
  try {
    const auto j = nlohmann::json::parse(readTextFile((dir / "chat_template.json").string()));
    if (j.is_object() && j.contains("chat_template")) {
      from = "chat_template.json";
      return fromJsonValue(j["chat_template"]);
    }
  } catch (const std::exception&) {
  }
  return {};
}

// Only where the HF folder has a template source: a GGUF alone has nothing to disagree with.
void chatTemplateRule(const Checkpoint& c, Sink& sink) {
  if (c.format != "gguf" || c.files.empty()) return;
  std::string from;
  const auto hf = hfChatTemplates(sideFolder(c), from);
  if (from.empty()) return;
  std::map<std::string, std::string> stored;
  for (const MetaEntry& e : c.meta) {
    const std::string_view k = e.key;
    if (k != "tokenizer.chat_template" && !k.starts_with("tokenizer.chat_template.")) continue;
    if (const auto* s = std::get_if<std::string>(&e.value)) stored[k == "tokenizer.chat_template" ? std::string("default") : std::string(k.substr(24))] = *s;
  }
  const std::map<std::string, std::string>& gguf = stored;
  const std::string file = c.files.front().path, ggufName = fs::path(file).filename().string();
  std::set<std::string> names;
  for (const auto* m : {&hf, &gguf})
    for (const auto& [n, t] : *m) names.insert(n);
  for (const std::string& n : names) {
    auto h = hf.find(n), g = gguf.find(n);
    const std::string which = "chat template '" + n + "': ";
    if (g == gguf.end())
      sink.add("WS-M008", which + from + " gives one, " + ggufName + " has none - llama.cpp applies none (or its built-in guess), the HF tokenizer " + from + "'s", {}, file);
    else if (h == hf.end())
      sink.add("WS-M008", which + ggufName + " has one, " + from + " none - an engine serving the GGUF with the HF tokenizer applies another", {}, file);
    else if (h->second != g->second)
      sink.add("WS-M008", which + ggufName + "'s is not " + from + "'s, " + firstDifference(g->second, h->second, ggufName, from), {}, file);
  }
}

}  // namespace ws::val
