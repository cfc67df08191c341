#include "core/formats/tokenizer_info.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/formats/gguf.h"
#include "core/io/text_file.h"
#include "core/util/error.h"

namespace ws {

namespace fs = std::filesystem;

namespace {

int64_t intOf(const MetaScalar& v) {
  if (auto* u = std::get_if<uint64_t>(&v)) return int64_t(*u);
  if (auto* i = std::get_if<int64_t>(&v)) return *i;
  return -1;
}

void fromGguf(const Checkpoint& c, TokenizerInfo& t, const std::set<int64_t>& textsOf) {
  const MetaEntry* model = c.findMeta("tokenizer.ggml.model");
  const MetaEntry* tokens = c.findMeta("tokenizer.ggml.tokens");
  if (!model && !tokens) return;
  t.present = true;
  t.source = "gguf";
  if (model)
    if (auto* s = std::get_if<std::string>(&model->value)) t.model = *s;
  if (tokens) t.vocabSize = tokens->length;
  if (const MetaEntry* m = c.findMeta("tokenizer.ggml.merges")) t.merges = m->length;
  std::optional<GgufArray> texts;
  if (tokens && tokens->file >= 0 && size_t(tokens->file) < c.files.size() && c.files[size_t(tokens->file)].map) {
    auto a = GgufArray::open(c.files[size_t(tokens->file)].map->bytes(), c.files[size_t(tokens->file)].path, *tokens);
    if (a) texts = std::move(a.value());
    else t.problems.push_back(a.error().describe());
  }
  // llama.cpp's key names (LLM_KV_TOKENIZER_*_ID): padding_token_id, unknown_token_id.
  for (auto [role, key] : {std::pair{"bos", "bos_token_id"}, std::pair{"eos", "eos_token_id"}, std::pair{"eot", "eot_token_id"},
                           std::pair{"pad", "padding_token_id"}, std::pair{"unk", "unknown_token_id"}}) {
    const MetaEntry* id = c.findMeta(std::string("tokenizer.ggml.") + key);
    if (!id) continue;
    SpecialToken s{role, intOf(id->value), {}};
    if (texts && s.id >= 0 && uint64_t(s.id) < texts->size()) {
      const MetaScalar v = texts->at(uint64_t(s.id));
      if (auto* str = std::get_if<std::string>(&v)) s.text = *str;
    }
    t.special.push_back(std::move(s));
  }
  for (int64_t id : textsOf) {
    if (!texts || id < 0 || uint64_t(id) >= texts->size()) continue;
    const MetaScalar v = texts->at(uint64_t(id));
    if (auto* str = std::get_if<std::string>(&v)) t.texts[id] = *str;
  }
  if (c.findMeta("tokenizer.chat_template")) t.chatTemplates.push_back("default");
  for (const auto& e : c.meta)
    if (e.key.rfind("tokenizer.chat_template.", 0) == 0) t.chatTemplates.push_back(e.key.substr(24));
}

// A special token as tokenizer_config.json writes it: "<s>" or {"content": "<s>", ...}.
std::string tokenText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return {};
}

void fromHfFolder(const fs::path& dir, TokenizerInfo& t, const std::set<int64_t>& textsOf) {
  nlohmann::json tok, cfg;
  auto load = [&](const char* name, nlohmann::json& into) {
    const fs::path p = dir / name;
    std::error_code ec;
    if (!fs::exists(p, ec)) return false;
    try {
      into = nlohmann::json::parse(readTextFile(p.string()));
      return true;
    } catch (const std::exception& e) {
      t.problems.push_back(p.string() + ": " + e.what());
      return false;
    }
  };
  const bool haveTok = load("tokenizer.json", tok), haveCfg = load("tokenizer_config.json", cfg);
  if (!haveTok && !haveCfg) return;
  t.present = true;
  t.source = haveTok ? "tokenizer.json" : "tokenizer_config.json";
  std::map<std::string, int64_t> ids;  // token text -> id, for the special tokens
  if (haveTok && tok.is_object()) {
    const auto& m = tok.value("model", nlohmann::json::object());
    if (m.is_object()) {
      if (m.contains("type") && m["type"].is_string()) t.model = m["type"].get<std::string>();
      if (m.contains("vocab")) {
        const auto& v = m["vocab"];
        if (v.is_object()) {
          t.vocabSize = v.size();
          for (auto it = v.begin(); it != v.end(); ++it)
            if (it.value().is_number_integer()) ids[it.key()] = it.value().get<int64_t>();
        } else if (v.is_array()) {
          t.vocabSize = v.size();  // Unigram: [[piece, score], ...], the id is the position
          for (size_t i = 0; i < v.size(); ++i)
            if (v[i].is_array() && !v[i].empty() && v[i][0].is_string()) ids[v[i][0].get<std::string>()] = int64_t(i);
        }
      }
      if (m.contains("merges") && m["merges"].is_array()) t.merges = m["merges"].size();
    }
    if (tok.contains("added_tokens") && tok["added_tokens"].is_array()) {
      t.addedTokens = tok["added_tokens"].size();
      uint64_t highest = t.vocabSize;
      for (const auto& a : tok["added_tokens"])
        if (a.is_object() && a.contains("id") && a["id"].is_number_integer()) {
          const int64_t id = a["id"].get<int64_t>();
          if (a.contains("content") && a["content"].is_string()) ids[a["content"].get<std::string>()] = id;
          if (id >= 0) highest = std::max(highest, uint64_t(id) + 1);
        }
      t.vocabSize = highest;
    }
  }
  if (haveCfg && cfg.is_object()) {
    for (const char* role : {"bos", "eos", "pad", "unk"}) {
      const std::string key = std::string(role) + "_token";
      if (!cfg.contains(key)) continue;
      const std::string text = tokenText(cfg[key]);
      if (text.empty()) continue;
      auto it = ids.find(text);
      t.special.push_back({role, it == ids.end() ? -1 : it->second, text});
    }
    if (cfg.contains("chat_template")) {
      const auto& ct = cfg["chat_template"];
      if (ct.is_string()) t.chatTemplates.push_back("default");
      else if (ct.is_array())
        for (const auto& x : ct)
          if (x.is_object() && x.contains("name") && x["name"].is_string()) t.chatTemplates.push_back(x["name"].get<std::string>());
    }
  }
  for (const auto& [text, id] : ids)
    if (textsOf.count(id)) t.texts[id] = text;
  // transformers 4.43+ may keep the template in its own file.
  std::error_code ec;
  if (t.chatTemplates.empty() && (fs::exists(dir / "chat_template.jinja", ec) || fs::exists(dir / "chat_template.json", ec))) t.chatTemplates.push_back("default");
}

// The special tokens' own texts are among the texts too.
void addSpecialTexts(TokenizerInfo& t) {
  for (const auto& s : t.special)
    if (s.id >= 0 && !s.text.empty()) t.texts.try_emplace(s.id, s.text);
}

}  // namespace

std::string sideFolder(const Checkpoint& c) {
  if (c.remote) return c.remote->mirror();  // the side files were fetched whole into it
  std::error_code ec;
  const fs::path root(c.root);
  if (fs::is_directory(root, ec)) return root.string();
  return root.parent_path().empty() ? std::string(".") : root.parent_path().string();
}

TokenizerInfo tokenizerInfo(const Checkpoint& c, const std::set<int64_t>& textsOf) {
  if (c.format != "gguf") return hfTokenizerInfo(sideFolder(c), textsOf);
  TokenizerInfo t;
  fromGguf(c, t, textsOf);
  addSpecialTexts(t);
  return t;
}

TokenizerInfo hfTokenizerInfo(const std::string& folder, const std::set<int64_t>& textsOf) {
  TokenizerInfo t;
  fromHfFolder(folder, t, textsOf);
  addSpecialTexts(t);
  return t;
}

}  // namespace ws
