// The modules a LoRA adapter changes, read from its factors: for each, the A and B tensors, the
// rank they share and the input and output features they imply, in the layouts PEFT and mlx-lm
// write (docs/adapters.md):
//   PEFT, an nn.Linear:            lora_A [r, in],    lora_B [out, r]
//   PEFT, an nn.Parameter [E, out, in] (target_parameters, fused experts):
//                                  lora_A [r*E, in],  lora_B [out, r*E]
//   mlx-lm, a Linear:              lora_a [in, r],    lora_b [r, out]
//   mlx-lm, a SwitchLinear (experts stacked):
//                                  lora_a [E, r, in], lora_b [E, out, r]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"

namespace ws {

struct LoraModule {
  uint32_t logical = 0;      // index into Checkpoint::logical
  int32_t a = -1, b = -1;    // the factors' tensor indices; -1 when missing
  // The adapted module as the base model names it: PEFT's "base_model.model." wrapper taken off;
  // of a PEFT parameter wrapper, the parameter itself ("...mlp.experts.gate_up_proj").
  std::string module;
  bool parameter = false;    // a PEFT target_parameters wrapper: its rank dimension is r x experts
  bool stacked = false;      // an mlx-lm SwitchLinear: one pair of factors per expert
  int64_t rank = -1;         // the factors' shared dimension; -1 when they disagree or one is missing
  int64_t experts = 0;       // stacked: the experts the factors hold
  uint64_t in = 0, out = 0;  // the module's features, as the factors imply them
};

// Every logical tensor with a LoRA factor, in catalog order.
std::vector<LoraModule> loraModules(const Checkpoint& c);

// One line for reports and validate's WS-A004: "LoRA (peft) of qwen3_moe: rank 4 (8 for o_proj),
// alpha 8 (scale 2), 16 modules in 3 layers; targets k_proj, q_proj, ...". Empty when `modules`
// is empty and the checkpoint has no adapter_config.json.
std::string adapterSummary(const Checkpoint& c, const std::vector<LoraModule>& modules);

}  // namespace ws
