// vLLM 0.11.0's weight loaders for the MoE families, read from the wheel on PyPI
// (vllm-0.11.0-cp38-abi3-manylinux1_x86_64.whl, vllm/model_executor/models/*.py). Each row is one
// class's load_weights; the expert renames are FusedMoE.make_expert_params_mapping's
// (layers/fused_moe/layer.py:2102-2113): "experts.E.<gate>." and "experts.E.<up>." into
// "experts.w13_", "experts.E.<down>." into "experts.w2_", for E below the config's expert count.
#include "core/validate/engines/engine_tables.h"

namespace ws::val::engines {

namespace {

const std::vector<VllmStackedRow> kQkvGateUp = {
    {"qkv_proj", "q_proj", "q"}, {"qkv_proj", "k_proj", "k"}, {"qkv_proj", "v_proj", "v"}, {"gate_up_proj", "gate_proj", "0"}, {"gate_up_proj", "up_proj", "1"}};

}  // namespace

const std::vector<VllmLoaderRow>& vllmLoaderTable() {
  static const std::vector<VllmLoaderRow> rows = {
      // qwen3_moe.py:440-568 Qwen3MoeModel.load_weights (Qwen3MoeForCausalLM.load_weights:686,
      // AutoWeightsLoader): ignore_suffixes at 452-454, "mlp.experts" guard at 470, a renamed name
      // not in params_dict tries the next row (486).
      {{"Qwen3MoeForCausalLM"}, VllmFamily::Qwen3Moe, "vllm/model_executor/models/qwen3_moe.py Qwen3MoeModel.load_weights", true, kQkvGateUp,
       "gate_proj", "up_proj", "down_proj", "mlp.experts", false, "", true, true,
       {".bias", "_bias", ".k_scale", "_k_scale", ".v_scale", "_v_scale", ".weight_scale", "_weight_scale", ".input_scale", "_input_scale"}, ""},
      // qwen2_moe.py:405-495 Qwen2MoeModel.load_weights (Qwen2MoeForCausalLM.load_weights:552):
      // ".bias"/"_bias" dropped when not a parameter (434, 458, 478), not-in-params continues (440).
      {{"Qwen2MoeForCausalLM"}, VllmFamily::Qwen2Moe, "vllm/model_executor/models/qwen2_moe.py Qwen2MoeModel.load_weights", true, kQkvGateUp,
       "gate_proj", "up_proj", "down_proj", "mlp.experts", false, "", true, true, {".bias", "_bias"}, ""},
      // mixtral.py:367-464 MixtralModel.load_weights (MixtralForCausalLM.load_weights:600): q/k/v
      // only (369-374), experts named w1 / w3 / w2 (360-365), a renamed name looked up at once (408).
      {{"MixtralForCausalLM"}, VllmFamily::Mixtral, "vllm/model_executor/models/mixtral.py MixtralModel.load_weights", true,
       {{"qkv_proj", "q_proj", "q"}, {"qkv_proj", "k_proj", "k"}, {"qkv_proj", "v_proj", "v"}}, "w1", "w3", "w2", "", false, "", false, true, {".bias", "_bias"}, ""},
      // deepseek_v2.py:1306-1426 DeepseekV2ForCausalLM.load_weights on the full names (no
      // AutoWeightsLoader; DeepseekV3ForCausalLM:1429 inherits it): fused_qkv_a_proj only where
      // q_lora_rank makes it (1352), "mlp.experts." guard unless a parameter (1345), the expert
      // renames looked up at once (1386), MTP layers model.layers.(N+i). skipped (1331, 1435-1443).
      {{"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"}, VllmFamily::DeepseekV2, "vllm/model_executor/models/deepseek_v2.py DeepseekV2ForCausalLM.load_weights", false,
       {{"gate_up_proj", "gate_proj", "0"}, {"gate_up_proj", "up_proj", "1"}, {"fused_qkv_a_proj", "q_a_proj", "0"}, {"fused_qkv_a_proj", "kv_a_proj_with_mqa", "1"}},
       "gate_proj", "up_proj", "down_proj", "mlp.experts.", true, "fused_qkv_a_proj", false, false, {".bias"}, "prefix"},
      // glm4_moe.py:507-606 Glm4MoeModel.load_weights (Glm4MoeForCausalLM.load_weights:709): the
      // DeepSeek loop without the optional fusion; MTP layers skipped where "layers.(N+i)." is in
      // the name (522, 718-727).
      {{"Glm4MoeForCausalLM"}, VllmFamily::Glm4Moe, "vllm/model_executor/models/glm4_moe.py Glm4MoeModel.load_weights", true, kQkvGateUp,
       "gate_proj", "up_proj", "down_proj", "mlp.experts.", true, "", false, false, {".bias"}, "substring"},
  };
  return rows;
}

}  // namespace ws::val::engines
