// What a LoRA adapter says of itself (core/formats/adapter_config reads it): its rank, scale,
// targets and base model. The tensors are the checkpoint's LoraA / LoraB components.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ws {

struct AdapterInfo {
  std::string library;    // "peft" or "mlx-lm"
  std::string method;     // "lora", or "dora" (PEFT use_dora, mlx-lm fine_tune_type)
  std::string baseModel;  // PEFT base_model_name_or_path, mlx-lm model
  int64_t rank = 0;       // PEFT r, mlx-lm lora_parameters.rank
  double alpha = 0;       // PEFT lora_alpha (mlx-lm has none: scale is given instead)
  double scale = 0;       // what B·A is multiplied by: alpha / r (alpha / sqrt(r) with rsLoRA), mlx-lm's scale
  bool rslora = false;
  // PEFT rank_pattern: a module-name pattern (a regex matched against the name's last parts) and
  // the rank of the modules it matches.
  std::vector<std::pair<std::string, int64_t>> rankPattern;
  std::vector<std::string> targetModules;     // PEFT target_modules, mlx-lm lora_parameters.keys
  std::vector<std::string> targetParameters;  // PEFT target_parameters (nn.Parameter, e.g. fused experts)
  int64_t numLayers = -1;                     // mlx-lm: the last N layers are adapted
  std::string file;                           // the adapter_config.json read

  // The rank meant for `module` (or a parameter's full name): rank_pattern's first key that
  // matches its end, as PEFT matches it, else rank.
  int64_t rankFor(const std::string& module) const;
};

}  // namespace ws
