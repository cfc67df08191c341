#include "core/plan/residency_rules.h"

#include <stdexcept>
#include <string>

namespace ws::plan {

const std::vector<ResidencyRules>& residencyRulesTable() {
  static const std::vector<ResidencyRules> table = {
      {"vllm", Remainder::First, false, false, false, false,
       "vLLM determine_expert_map: remainder experts to the first ranks; FusedMoE weight_loader narrows fused expert tensors to the rank's experts; "
       "the MTP draft model loads its own layers"},
      {"sglang", Remainder::First, false, false, false, false, "SGLang follows vLLM's expert map and fused-MoE loading"},
      {"seed", Remainder::Last, true, true, true, true,
       "the Rust weight store seed: should_skip_tensor shards only names with .experts.E. (remainder to the last rank; a fused tensor has "
       "no index and stays whole; an MTP head under layers.N is sharded, only mtp.* replicated); f16_to_bf16_bytes at load; skip_mtp and "
       "skip_activation_scales by name (mtp.*, *.input_scale), tried before the defer hook"},
  };
  return table;
}

const ResidencyRules& defaultResidencyRules() { return residencyRulesTable().front(); }

const ResidencyRules* findResidencyRules(std::string_view name) {
  for (const auto& r : residencyRulesTable())
    if (r.name == name) return &r;
  return nullptr;
}

const ResidencyRules& residencyRules(std::string_view name) {
  if (const ResidencyRules* r = findResidencyRules(name)) return *r;
  std::string known;
  for (const auto& r : residencyRulesTable()) known += (known.empty() ? "" : ", ") + std::string(r.name);
  throw std::invalid_argument("--runtime '" + std::string(name) + "' is not one of " + known);
}

}  // namespace ws::plan
