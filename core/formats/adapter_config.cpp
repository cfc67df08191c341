#include "core/formats/adapter_config.h"

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/io/text_file.h"
#include "core/util/error.h"

namespace ws {

namespace {

std::vector<std::string> stringsOf(const nlohmann::json& j) {
  std::vector<std::string> out;
  if (j.is_string()) out.push_back(j.get<std::string>());  // PEFT accepts one regex as a string
  if (j.is_array())
    for (const auto& x : j)
      if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}

}  // namespace

std::optional<AdapterInfo> parseAdapterConfigText(const std::string& text, const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw CoreError(Error{ErrorCode::InvalidHeaderJson, std::string("adapter_config.json is not valid JSON: ") + e.what(), path, std::nullopt, {}});
  }
  if (!j.is_object()) return std::nullopt;
  AdapterInfo a;
  a.file = path;
  auto number = [&](const nlohmann::json& o, const char* key, double fallback) { return o.contains(key) && o[key].is_number() ? o[key].get<double>() : fallback; };
  if (j.contains("peft_type")) {
    if (j.value("peft_type", "") != "LORA") return std::nullopt;
    a.library = "peft";
    a.method = j.value("use_dora", false) ? "dora" : "lora";
    a.baseModel = j.value("base_model_name_or_path", "");
    a.rank = int64_t(number(j, "r", 8));
    a.alpha = number(j, "lora_alpha", 8);
    a.rslora = j.value("use_rslora", false);
    a.scale = a.rank > 0 ? (a.rslora ? a.alpha / std::sqrt(double(a.rank)) : a.alpha / double(a.rank)) : 0;
    if (j.contains("rank_pattern") && j["rank_pattern"].is_object())
      for (const auto& [k, v] : j["rank_pattern"].items())
        if (v.is_number_integer()) a.rankPattern.push_back({k, v.get<int64_t>()});
    if (j.contains("target_modules")) a.targetModules = stringsOf(j["target_modules"]);
    if (j.contains("target_parameters")) a.targetParameters = stringsOf(j["target_parameters"]);
    return a;
  }
  if (j.contains("lora_parameters") && j["lora_parameters"].is_object()) {
    const std::string type = j.value("fine_tune_type", "lora");
    if (type != "lora" && type != "dora") return std::nullopt;
    const auto& p = j["lora_parameters"];
    a.library = "mlx-lm";
    a.method = type;
    a.baseModel = j.value("model", "");
    a.rank = int64_t(number(p, "rank", 8));
    a.scale = number(p, "scale", 20);
    if (p.contains("keys")) a.targetModules = stringsOf(p["keys"]);
    a.numLayers = int64_t(number(j, "num_layers", -1));
    return a;
  }
  return std::nullopt;
}

std::optional<AdapterInfo> readAdapterConfig(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "adapter_config.json").string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  return parseAdapterConfigText(readTextFile(path), path);
}

}  // namespace ws
