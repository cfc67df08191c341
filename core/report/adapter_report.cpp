#include "core/report/adapter_report.h"

#include <nlohmann/json.hpp>

#include "core/model/lora_modules.h"

namespace ws {

nlohmann::json adapterJson(const Checkpoint& c) {
  const auto modules = loraModules(c);
  if (modules.empty() && !c.adapter) return nullptr;
  nlohmann::json mods = nlohmann::json::array();
  for (const auto& m : modules)
    mods.push_back({{"module", m.module},
                    {"logical", c.logical[m.logical].name},
                    {"lora_A", m.a >= 0 ? nlohmann::json(c.tensors[uint32_t(m.a)].name) : nlohmann::json(nullptr)},
                    {"lora_B", m.b >= 0 ? nlohmann::json(c.tensors[uint32_t(m.b)].name) : nlohmann::json(nullptr)},
                    {"rank", m.rank},
                    {"in_features", m.in},
                    {"out_features", m.out},
                    {"experts", m.experts},
                    {"parameter", m.parameter},
                    {"layer", c.tensors[uint32_t(m.a >= 0 ? m.a : m.b)].layer < 0 ? nlohmann::json(nullptr) : nlohmann::json(c.tensors[uint32_t(m.a >= 0 ? m.a : m.b)].layer)}});
  nlohmann::json j = {{"summary", adapterSummary(c, modules)}, {"modules", mods}, {"config", nullptr}};
  if (c.adapter) {
    const AdapterInfo& a = *c.adapter;
    nlohmann::json pattern = nlohmann::json::object();
    for (const auto& [k, r] : a.rankPattern) pattern[k] = r;
    j["config"] = {{"file", a.file},           {"library", a.library},       {"method", a.method},
                   {"base_model", a.baseModel}, {"rank", a.rank},             {"alpha", a.alpha},
                   {"scale", a.scale},          {"rslora", a.rslora},         {"rank_pattern", pattern},
                   {"target_modules", a.targetModules}, {"target_parameters", a.targetParameters},
                   {"num_layers", a.numLayers}};
  }
  return j;
}

std::string adapterText(const Checkpoint& c) {
  const std::string s = adapterSummary(c, loraModules(c));
  return s.empty() ? s : "adapter      " + s + "\n";
}

}  // namespace ws
