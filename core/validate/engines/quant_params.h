// The parameters a quantization method registers on the modules it quantizes, as vLLM 0.11.0's and
// SGLang 0.5.23's create_weights do - what a checkpoint tensor's last name component must be for the model's
// load_weights to find it in params_dict. WS-E009's emulated loader asks this instead of taking any
// quantized-looking name as present (core/validate/engines/weight_name_rules.cpp).
#pragma once

#include <optional>
#include <string_view>

#include "core/model/model_description.h"

namespace ws::val {

// Does vLLM 0.11.0 register `leaf` on a module quantized under `q`? A FusedMoE layer's parameters
// are `w13_` / `w2_` plus the linear name (fused_moe/layer.py make_expert_params_mapping swaps the
// prefix). nullopt where the source does not settle it: a method or scheme not read, a condition
// the config does not state (an unsaid activation scheme, GPTQ act-order), and the KV-cache scales.
std::optional<bool> vllmRegistersQuantParam(const QuantConfig& q, std::string_view leaf);

// The same for SGLang 0.5.23 on CUDA with its default MoE backend: its fp8 and compressed-tensors
// methods name block scales differently (fp8 weight_scale_inv, compressed-tensors weight_scale),
// gptq is gptq_marlin, and a plain-AWQ MoE stays unquantized.
std::optional<bool> sglangRegistersQuantParam(const QuantConfig& q, std::string_view leaf);

}  // namespace ws::val
