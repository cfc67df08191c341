#include "core/model/lora_modules.h"

#include <cstdio>
#include <set>

namespace ws {

namespace {

// PEFT wraps each target parameter around the module it has already wrapped: the first of
// target_parameters is innermost, one ".base_layer" deeper per later one.
std::string parameterModule(std::string name, const std::vector<std::string>& params, bool& parameter) {
  int depth = 0;
  for (size_t at; (at = name.find(".base_layer")) != std::string::npos; ++depth) name.erase(at, 11);
  parameter = false;
  if (params.empty() || !name.ends_with(".experts")) return name;
  const int index = int(params.size()) - 1 - depth;
  if (index < 0) return name;
  parameter = true;
  std::string p = params[size_t(index)];
  if (const size_t dot = p.rfind('.'); dot != std::string::npos) p = p.substr(dot + 1);
  return name + "." + p;
}

}  // namespace

std::vector<LoraModule> loraModules(const Checkpoint& c) {
  std::vector<LoraModule> out;
  const std::vector<std::string> noParams;
  const auto& params = c.adapter ? c.adapter->targetParameters : noParams;
  for (uint32_t li = 0; li < c.logical.size(); ++li) {
    const LogicalTensor& l = c.logical[li];
    LoraModule m;
    m.logical = li;
    for (uint32_t i : l.members) {
      if (c.tensors[i].component == Component::LoraA) m.a = int32_t(i);
      if (c.tensors[i].component == Component::LoraB) m.b = int32_t(i);
    }
    if (m.a < 0 && m.b < 0) continue;
    std::string name = l.name;
    if (name.rfind("base_model.model.", 0) == 0) name = name.substr(17);
    m.module = parameterModule(name, params, m.parameter);
    if (m.a >= 0 && m.b >= 0) {
      const auto& A = c.tensors[uint32_t(m.a)].shape;
      const auto& B = c.tensors[uint32_t(m.b)].shape;
      // PEFT names its factors lora_A.weight (nn.Linear rows are outputs); mlx-lm lora_a (x @ a).
      const bool peft = c.tensors[uint32_t(m.a)].name.ends_with(".weight") || c.tensors[uint32_t(m.a)].name.ends_with("_A");
      if (A.size() == 2 && B.size() == 2) {
        if (peft && A[0] == B[1]) m.rank = int64_t(A[0]), m.in = A[1], m.out = B[0];
        if (!peft && A[1] == B[0]) m.rank = int64_t(A[1]), m.in = A[0], m.out = B[1];
      } else if (A.size() == 3 && B.size() == 3 && !peft && A[0] == B[0] && A[1] == B[2]) {
        m.stacked = true;
        m.experts = int64_t(A[0]);
        m.rank = int64_t(A[1]), m.in = A[2], m.out = B[1];
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::string adapterSummary(const Checkpoint& c, const std::vector<LoraModule>& modules) {
  if (modules.empty() && !c.adapter) return {};
  auto number = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return std::string(b);
  };
  std::string s = "LoRA";
  if (c.adapter) {
    const AdapterInfo& a = *c.adapter;
    s += " (" + a.library + (a.method == "lora" ? "" : ", " + a.method) + ")" + (a.baseModel.empty() ? "" : " of " + a.baseModel) + ": rank " + std::to_string(a.rank);
    for (size_t i = 0; i < a.rankPattern.size(); ++i) s += (i ? ", " : " (") + std::to_string(a.rankPattern[i].second) + " for " + a.rankPattern[i].first + (i + 1 == a.rankPattern.size() ? ")" : "");
    s += a.library == "peft" ? ", alpha " + number(a.alpha) + " (scale " + number(a.scale) + (a.rslora ? ", rsLoRA" : "") + ")" : ", scale " + number(a.scale);
  } else {
    s += " factors, no adapter_config.json";
  }
  std::set<int32_t> layers;
  for (const auto& m : modules) layers.insert(c.tensors[uint32_t(m.a >= 0 ? m.a : m.b)].layer);
  layers.erase(-1);
  s += ", " + std::to_string(modules.size()) + (modules.size() == 1 ? " module" : " modules") + " in " + std::to_string(layers.size()) + (layers.size() == 1 ? " layer" : " layers");
  if (c.adapter && !(c.adapter->targetModules.empty() && c.adapter->targetParameters.empty())) {
    s += "; targets";
    size_t k = 0;
    for (const auto* list : {&c.adapter->targetModules, &c.adapter->targetParameters})
      for (const auto& t : *list) s += (k++ ? ", " : " ") + t;
  }
  return s;
}

}  // namespace ws
