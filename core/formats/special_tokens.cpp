#include "core/formats/special_tokens.h"

#include <array>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/text_file.h"

namespace ws {

namespace fs = std::filesystem;

namespace {

// The ids a config file names, as (key, id) in file order.
std::vector<std::pair<std::string, int64_t>> configTokenIds(const std::string& file) {
  std::vector<std::pair<std::string, int64_t>> out;
  std::error_code ec;
  if (!fs::exists(file, ec)) return out;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(readTextFile(file));
  } catch (const std::exception&) {
    return out;  // an unreadable config is the integrity family's (WS-I025)
  }
  if (!j.is_object()) return out;
  const nlohmann::json& t = j.contains("text_config") && j["text_config"].is_object() ? j["text_config"] : j;
  for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
    for (const nlohmann::json* src : std::array<const nlohmann::json*, 2>{&t, &j}) {
      if (!src->contains(key)) continue;
      const auto& v = (*src)[key];
      if (v.is_number_integer()) out.push_back({key, v.get<int64_t>()});
      else if (v.is_array())
        for (const auto& x : v)
          if (x.is_number_integer()) out.push_back({key, x.get<int64_t>()});
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<SpecialTokenSource> configTokenSources(const std::string& folder) {
  std::vector<SpecialTokenSource> out;
  for (const char* name : {"generation_config.json", "config.json"}) {
    SpecialTokenSource s{(fs::path(folder) / name).string(), name, false, {}};
    for (const auto& [key, id] : configTokenIds(s.file)) s.ids[key.substr(0, key.find('_'))].insert(id);
    if (!s.ids.empty()) out.push_back(std::move(s));
  }
  return out;
}

SpecialTokenSource tokenizerTokenSource(const TokenizerInfo& t, std::string file, std::string name, bool gguf) {
  SpecialTokenSource s{std::move(file), std::move(name), gguf, {}};
  for (const auto& tok : t.special) {
    if (tok.id < 0) continue;  // a text the vocabulary does not hold: no id to compare
    const std::string role = tok.role == "eot" ? "eos" : tok.role;
    if (role == "bos" || role == "eos" || role == "pad") s.ids[role].insert(tok.id);
  }
  return s;
}

}  // namespace ws
