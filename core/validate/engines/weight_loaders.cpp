// The serving engines' weight loaders for the MoE families, read from their wheels on PyPI:
// vLLM 0.11.0 (vllm-0.11.0-cp38-abi3-manylinux1_x86_64.whl, vllm/model_executor/models/*.py) and
// SGLang 0.5.23 (sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl, sglang/srt/models/*.py).
// Each row is one class's load_weights. Both engines' expert renames are
// FusedMoE.make_expert_params_mapping's (vLLM layers/fused_moe/layer.py:2102-2113, SGLang
// layers/moe/fused_moe_triton/layer.py:1797-1822): "experts.E.<gate>." and "experts.E.<up>." into
// "experts.w13_", "experts.E.<down>." into "experts.w2_", for E below the expert count.
#include "core/validate/engines/engine_tables.h"

namespace ws::val::engines {

namespace {

const std::vector<StackedRenameRow> kQkvGateUp = {
    {"qkv_proj", "q_proj", "q"}, {"qkv_proj", "k_proj", "k"}, {"qkv_proj", "v_proj", "v"}, {"gate_up_proj", "gate_proj", "0"}, {"gate_up_proj", "up_proj", "1"}};
const std::vector<StackedRenameRow> kQkv = {{"qkv_proj", "q_proj", "q"}, {"qkv_proj", "k_proj", "k"}, {"qkv_proj", "v_proj", "v"}};

}  // namespace

const std::vector<WeightLoaderRow>& weightLoaderTable() {
  static const std::vector<WeightLoaderRow> rows = {
      // vLLM qwen3_moe.py:440-568 Qwen3MoeModel.load_weights (Qwen3MoeForCausalLM.load_weights:686,
      // AutoWeightsLoader): ignore_suffixes at 452-454, "mlp.experts" guard at 470, a renamed name
      // not in params_dict tries the next row (486).
      {.engine = "vllm", .architectures = {"Qwen3MoeForCausalLM"}, .family = LoaderFamily::Qwen3Moe,
       .source = "vllm/model_executor/models/qwen3_moe.py Qwen3MoeModel.load_weights", .autoWeightsLoader = true, .stacked = kQkvGateUp,
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = true, .expertPathDrops = true,
       .droppedSuffixes = {".bias", "_bias", ".k_scale", "_k_scale", ".v_scale", "_v_scale", ".weight_scale", "_weight_scale", ".input_scale", "_input_scale"}, .specLayers = ""},
      // vLLM qwen2_moe.py:405-495 Qwen2MoeModel.load_weights (Qwen2MoeForCausalLM.load_weights:552):
      // ".bias"/"_bias" dropped when not a parameter (434, 458, 478), not-in-params continues (440).
      {.engine = "vllm", .architectures = {"Qwen2MoeForCausalLM"}, .family = LoaderFamily::Qwen2Moe,
       .source = "vllm/model_executor/models/qwen2_moe.py Qwen2MoeModel.load_weights", .autoWeightsLoader = true, .stacked = kQkvGateUp,
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = true, .expertPathDrops = true, .droppedSuffixes = {".bias", "_bias"}, .specLayers = ""},
      // vLLM mixtral.py:367-464 MixtralModel.load_weights (MixtralForCausalLM.load_weights:600): q/k/v
      // only (369-374), experts named w1 / w3 / w2 (360-365), a renamed name looked up at once (408).
      {.engine = "vllm", .architectures = {"MixtralForCausalLM"}, .family = LoaderFamily::Mixtral,
       .source = "vllm/model_executor/models/mixtral.py MixtralModel.load_weights", .autoWeightsLoader = true, .stacked = kQkv,
       .expertGate = "w1", .expertUp = "w3", .expertDown = "w2", .expertGuard = "", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = false, .expertPathDrops = true, .droppedSuffixes = {".bias", "_bias"}, .specLayers = ""},
      // vLLM deepseek_v2.py:1306-1426 DeepseekV2ForCausalLM.load_weights on the full names (no
      // AutoWeightsLoader; DeepseekV3ForCausalLM:1429 inherits it): fused_qkv_a_proj only where
      // q_lora_rank makes it (1352), "mlp.experts." guard unless a parameter (1345), the expert
      // renames looked up at once (1386), MTP layers model.layers.(N+i). skipped (1331, 1435-1443);
      // lm_head never tied (1211). DeepseekV32ForCausalLM is the same class (registry.py:73).
      {.engine = "vllm", .architectures = {"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"}, .family = LoaderFamily::DeepseekV2,
       .source = "vllm/model_executor/models/deepseek_v2.py DeepseekV2ForCausalLM.load_weights", .autoWeightsLoader = false,
       .stacked = {{"gate_up_proj", "gate_proj", "0"}, {"gate_up_proj", "up_proj", "1"}, {"fused_qkv_a_proj", "q_a_proj", "0"}, {"fused_qkv_a_proj", "kv_a_proj_with_mqa", "1"}},
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts.", .expertGuardOnlyIfNotParameter = true,
       .optionalStacked = "fused_qkv_a_proj", .stackedMissingContinues = false, .expertPathDrops = false, .droppedSuffixes = {".bias"}, .specLayers = "prefix",
       .headTied = false},
      // vLLM glm4_moe.py:507-606 Glm4MoeModel.load_weights (Glm4MoeForCausalLM.load_weights:709): the
      // DeepSeek loop without the optional fusion; MTP layers skipped where "layers.(N+i)." is in
      // the name (522, 718-727); lm_head never tied (633).
      {.engine = "vllm", .architectures = {"Glm4MoeForCausalLM"}, .family = LoaderFamily::Glm4Moe,
       .source = "vllm/model_executor/models/glm4_moe.py Glm4MoeModel.load_weights", .autoWeightsLoader = true, .stacked = kQkvGateUp,
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts.", .expertGuardOnlyIfNotParameter = true,
       .optionalStacked = "", .stackedMissingContinues = false, .expertPathDrops = false, .droppedSuffixes = {".bias"}, .specLayers = "substring", .headTied = false},
      // vLLM gpt_oss.py:600-632 GptOssModel.load_weights (GptOssForCausalLM.load_weights:705,
      // AutoWeightsLoader with hf_to_vllm_mapper 651-672): ".self_attn." -> ".attn.", the HF
      // expert names by suffix into w13_* / w2_*, embed_tokens -> embedding; then (mxfp4 297-487,
      // other 489-598) a name holding a fused-expert suffix or "sinks" is looked up as it is, q/k/v
      // renamed into qkv with a KeyError when missing, and anything else not in params_dict
      // skipped without a word (482-484, 593-595). The head is never tied (674-678); the loader's
      // skip_prefixes for a tied config is not modelled.
      {.engine = "vllm", .architectures = {"GptOssForCausalLM"}, .family = LoaderFamily::GptOss,
       .source = "vllm/model_executor/models/gpt_oss.py GptOssModel.load_weights", .autoWeightsLoader = true,
       .stacked = {{".qkv", ".q_proj", "q"}, {".qkv", ".k_proj", "k"}, {".qkv", ".v_proj", "v"}}, .expertGate = "", .expertUp = "", .expertDown = "",
       .expertGuard = "", .expertGuardOnlyIfNotParameter = false, .optionalStacked = "", .stackedMissingContinues = false, .expertPathDrops = false,
       .droppedSuffixes = {}, .specLayers = "", .unplaced = Unplaced::Silent, .headTied = false,
       .mapperSubstrings = {{".self_attn.", ".attn."}},
       .mapperSuffixes = {{".embed_tokens.weight", ".embedding.weight"}, {".gate_up_proj_blocks", ".w13_weight"}, {".down_proj_blocks", ".w2_weight"},
                          {".gate_up_proj_scales", ".w13_weight_scale"}, {".down_proj_scales", ".w2_weight_scale"}, {".gate_up_proj", ".w13_weight"},
                          {".down_proj", ".w2_weight"}, {".gate_up_proj_bias", ".w13_bias"}, {".down_proj_bias", ".w2_bias"}},
       .directNames = {".w13_weight_scale", ".w2_weight_scale", ".w13_weight", ".w2_weight", ".w13_bias", ".w2_bias", "sinks"}},
      // vLLM qwen3_next.py:952-1026 Qwen3NextModel.load_weights (Qwen3NextForCausalLM.load_weights:
      // 1179-1185, AutoWeightsLoader with skip_prefixes ["mtp."]): q/k/v and gate/up the stacked
      // rows (954-961), the "mlp.experts" guard (980), the name renamed before any check (983) and
      // a renamed name that is no parameter trying the next row (985-992), the expert renames
      // looked up at once (1008: KeyError), and the last lookup too (1021). The GatedDeltaNet's
      // in_proj_qkvz / in_proj_ba are single parameters (247-261): split tensors have no row.
      // lm_head is never tied (1059-1067). The expert path's skip of a "_bias" name is not
      // modelled (its ".bias" is).
      {.engine = "vllm", .architectures = {"Qwen3NextForCausalLM"}, .family = LoaderFamily::Qwen3Next,
       .source = "vllm/model_executor/models/qwen3_next.py Qwen3NextModel.load_weights", .autoWeightsLoader = true, .stacked = kQkvGateUp,
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = true, .expertPathDrops = true, .droppedSuffixes = {".bias"}, .specLayers = "", .headTied = false,
       .skipPrefixes = {"mtp."}},

      // SGLang gpt_oss.py:898-1321 GptOssForCausalLM.load_weights on the full names. An MXFP4
      // checkpoint's ".experts" names go to _load_mxfp4_experts_weights (937-942): the six
      // *_blocks / *_scales / *_bias suffixes renamed into w13_ / w2_ weight, weight_scale and
      // weight_bias (1012-1139), any other skipped without a word (974-985); the rest, and every name
      // of another checkpoint, to _load_normal_weights: names past the layers skipped (1231-1240),
      // q/k/v stacked into qkv_proj unless the name holds "mlp.experts" (1244-1259), the fused expert
      // renames by substring - experts.gate_up_proj to w13_weight, its _bias to w13_weight_bias,
      // down_proj likewise (make_expert_params_mapping_fused) - and anything that is no parameter
      // skipped without a word at every step (1253, 1266, 1285-1288). The suffix rows stand for
      // both. Not modelled: the MXFP4 path's KeyError (or get_submodule's AttributeError) for a name
      // it renames into no parameter - the normal path's silence is taken. lm_head never tied.
      {.engine = "sglang", .architectures = {"GptOssForCausalLM"}, .family = LoaderFamily::GptOss,
       .source = "sglang/srt/models/gpt_oss.py GptOssForCausalLM.load_weights", .autoWeightsLoader = false, .stacked = kQkv,
       .expertGate = "", .expertUp = "", .expertDown = "", .expertGuard = "mlp.experts", .expertGuardOnlyIfNotParameter = false, .optionalStacked = "",
       .stackedMissingContinues = true, .expertPathDrops = false, .droppedSuffixes = {".bias"}, .specLayers = "", .unplaced = Unplaced::Silent,
       .expertUnplaced = Unplaced::Silent, .layerRange = true, .headTied = false,
       .mapperSuffixes = {{".experts.gate_up_proj_blocks", ".experts.w13_weight"}, {".experts.gate_up_proj_scales", ".experts.w13_weight_scale"},
                          {".experts.gate_up_proj_bias", ".experts.w13_weight_bias"}, {".experts.down_proj_blocks", ".experts.w2_weight"},
                          {".experts.down_proj_scales", ".experts.w2_weight_scale"}, {".experts.down_proj_bias", ".experts.w2_weight_bias"},
                          {".experts.gate_up_proj", ".experts.w13_weight"}, {".experts.down_proj", ".experts.w2_weight"}}},

      // SGLang qwen3_next.py:1138-1276 Qwen3NextForCausalLM.load_weights, a hand loop on the full
      // names: any name holding "mtp" skipped (1186), ".self_attn" taken out (1192-1193: the
      // full-attention layer holds qkv_proj itself), the stacked rows with the GatedDeltaNet's
      // split in_proj_qkv / in_proj_z / in_proj_b / in_proj_a besides (1141-1155), each renamed
      // name kept only once it is a parameter (1222-1228), the expert renames looked up at once
      // (1249: KeyError), the last lookup too (1270). A stray "_scale" is skipped once it holds
      // 1.0 (1264-1268) - not modelled. Shared experts fused into the routed ones (1195-1199) are
      // renamed experts.<num_experts>.: the same tensors fill them, so the parameters are taken
      // unfused. Every layer is sparse (543-559); lm_head never tied (1049-1056).
      {.engine = "sglang", .architectures = {"Qwen3NextForCausalLM"}, .family = LoaderFamily::Qwen3Next,
       .source = "sglang/srt/models/qwen3_next.py Qwen3NextForCausalLM.load_weights", .autoWeightsLoader = false,
       .stacked = {{"qkv_proj", "q_proj", "q"}, {"qkv_proj", "k_proj", "k"}, {"qkv_proj", "v_proj", "v"}, {"gate_up_proj", "gate_proj", "0"}, {"gate_up_proj", "up_proj", "1"},
                   {"in_proj_qkvz.", "in_proj_qkv.", "0,1,2"}, {"in_proj_qkvz.", "in_proj_z.", "3"}, {"in_proj_ba.", "in_proj_b.", "0"}, {"in_proj_ba.", "in_proj_a.", "1"}},
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = true, .expertPathDrops = true, .droppedSuffixes = {".bias"}, .specLayers = "",
       .unplaced = Unplaced::KeyError, .expertUnplaced = Unplaced::KeyError, .mtpNames = true, .everyLayerSparse = true, .headTied = false,
       .mapperSubstrings = {{".self_attn.", "."}}, .renameOnlyWhenPlaced = true},
      // vLLM qwen3_vl_moe.py Qwen3VLMoeForConditionalGeneration.load_weights (qwen3_vl.py:1596-1603,
      // AutoWeightsLoader with the WeightsMapper's prefixes 1104-1109): the tower's names to
      // Qwen3_VisionTransformer.load_weights (qwen3_vl.py:534-561: attn.q / k / v stacked into
      // attn.qkv, anything else looked up at once), the language model's to Qwen3MoeForCausalLM
      // (qwen3_moe.py:686-689) and its Qwen3MoeLLMModel.load_weights (qwen3_vl_moe.py:142-286):
      // Qwen3-MoE's rows and ignore_suffixes (144-155), and fused expert tensors (experts.gate_up_proj
      // / experts.down_proj, no expert index) renamed into w13_weight / w2_weight, which they fill
      // for every expert (160-163, 217-233; the layout WS-E010 checks); after the first fused name
      // the per-expert renames are gone for good (166-170), so a checkpoint mixing both layouts
      // raises on the per-expert names that load after it.
      {.engine = "vllm", .architectures = {"Qwen3VLMoeForConditionalGeneration"}, .family = LoaderFamily::Qwen3VlMoe,
       .source = "vllm/model_executor/models/qwen3_vl_moe.py Qwen3MoeLLMModel.load_weights", .autoWeightsLoader = true, .stacked = kQkvGateUp,
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = true, .expertPathDrops = true,
       .droppedSuffixes = {".bias", "_bias", ".k_scale", "_k_scale", ".v_scale", "_v_scale", ".weight_scale", "_weight_scale", ".input_scale", "_input_scale"}, .specLayers = "",
       .mapperPrefixes = {{"model.visual.", "visual."}, {"lm_head.", "language_model.lm_head."}, {"model.language_model.", "language_model.model."}},
       .modelPrefix = "language_model.model.", .headName = "language_model.lm_head.weight",
       .fusedExperts = {{"experts.gate_up_proj", "experts.w13_weight"}, {"experts.down_proj", "experts.w2_weight"}}, .fusedSticky = true, .towerMarkers = {"visual."},
       .towerStacked = {{"attn.qkv.", "attn.q.", "q"}, {"attn.qkv.", "attn.k.", "k"}, {"attn.qkv.", "attn.v.", "v"}}},

      // SGLang qwen3_vl_moe.py:214-392 Qwen3VLMoeForConditionalGeneration.load_weights, one loop on
      // the full names: model.language_model. shortened to model. (257), names past the layers
      // skipped (258-269), the stacked rows - up_proj before gate_proj - skipping the tower's names
      // and the experts' (215-222, 276-304), fused and per-expert expert names (309-365, a renamed
      // name looked up at once: KeyError; the fused mapping takes over for good at the first fused
      // name, 245-249, 271-274), then the tower's attn.qkv. -> attn.qkv_proj. and model.visual. ->
      // visual. (370-373) and, for any name no parameter takes, "Parameter ... not found in
      // params_dict" and nothing loaded (392). Every layer sparse (qwen3_moe.py
      // 873-886); the head tied by the top level's tie_word_embeddings (qwen3_vl.py:1349-1368).
      {.engine = "sglang", .architectures = {"Qwen3VLMoeForConditionalGeneration"}, .family = LoaderFamily::Qwen3VlMoe,
       .source = "sglang/srt/models/qwen3_vl_moe.py Qwen3VLMoeForConditionalGeneration.load_weights", .autoWeightsLoader = false,
       .stacked = {{".qkv_proj", ".q_proj", "q"}, {".qkv_proj", ".k_proj", "k"}, {".qkv_proj", ".v_proj", "v"}, {"gate_up_proj", "up_proj", "1"}, {"gate_up_proj", "gate_proj", "0"}},
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = true, .expertPathDrops = true,
       .droppedSuffixes = {".bias", "_bias", ".k_scale", "_k_scale", ".v_scale", "_v_scale", ".weight_scale", "_weight_scale", ".input_scale", "_input_scale"}, .specLayers = "",
       .unplaced = Unplaced::Warns, .expertUnplaced = Unplaced::KeyError, .layerRange = true, .everyLayerSparse = true,
       .mapperSubstrings = {{"model.language_model.", "model."}},
       .fusedExperts = {{"experts.gate_up_proj", "experts.w13_weight"}, {"experts.down_proj", "experts.w2_weight"}}, .fusedSticky = true, .towerMarkers = {"visual"}, .towerMarkerAnywhere = true,
       .towerRenames = {{"attn.qkv.", "attn.qkv_proj."}, {"model.visual.", "visual."}}, .towerUnplaced = Unplaced::Warns},
      // vLLM mllama4.py:1029-1076 Llama4ForConditionalGeneration.load_weights: names under
      // language_model. to AutoWeightsLoader (1061-1070), so Llama4ForCausalLM.load_weights (llama4.py
      // 688-699: lm_head. skipped where text_config ties it) and Llama4Model.load_weights (485-655):
      // q/k/v and gate/up stacked unless the name holds "experts" (489-496, 550), a renamed name looked
      // up at once (KeyError), fused expert tensors into w13_weight / w2_weight whole (400-424) or
      // per-expert names through the expert mapping, any other name looked up (648: KeyError). The
      // vision tower's and projector's names to _load_other_weights (998-1027): its seven stacked
      // rows (1032-1043), else looked up at once. The switch to the fused mapping after the first
      // fused name is for good (525-527), as Qwen3-VL-MoE's.
      {.engine = "vllm", .architectures = {"Llama4ForConditionalGeneration"}, .family = LoaderFamily::Llama4,
       .source = "vllm/model_executor/models/llama4.py Llama4Model.load_weights", .autoWeightsLoader = true,
       .stacked = {{".qkv_proj", ".q_proj", "q"}, {".qkv_proj", ".k_proj", "k"}, {".qkv_proj", ".v_proj", "v"}, {".gate_up_proj", ".gate_proj", "0"}, {".gate_up_proj", ".up_proj", "1"}},
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "experts", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = false, .expertPathDrops = false, .droppedSuffixes = {}, .specLayers = "",
       .modelPrefix = "language_model.model.", .headName = "language_model.lm_head.weight", .headSkippedWhenTied = true,
       .fusedExperts = {{"experts.gate_up_proj", "experts.w13_weight"}, {"experts.down_proj", "experts.w2_weight"}}, .fusedSticky = true,
       .towerMarkers = {"vision_model.", "multi_modal_projector."},
       .towerStacked = {{".self_attn.qkv_proj", ".self_attn.q_proj", "q"}, {".self_attn.qkv_proj", ".self_attn.k_proj", "k"}, {".self_attn.qkv_proj", ".self_attn.v_proj", "v"},
                        {".shared_expert.gate_up_proj", ".shared_expert.gate_proj", "0"}, {".shared_expert.gate_up_proj", ".shared_expert.up_proj", "1"},
                        {".feed_forward.gate_up_proj", ".feed_forward.gate_proj", "0"}, {".feed_forward.gate_up_proj", ".feed_forward.up_proj", "1"}}},

      // SGLang mllama4.py:640-706 Llama4ForConditionalGeneration.load_weights, one loop on the full
      // names: without --enable-multimodal (model_config.py:691-705) every name holding "vision" or
      // "multi_modal_projector" skipped without a word (708-712); the seven stacked rows, a renamed
      // name looked up at once (641-650, 731-747: KeyError); fused expert tensors into w13_weight /
      // w2_weight per expert, a missing parameter skipped (895-957), per-expert names through the
      // expert mapping (787-816: KeyError); a ".bias" that is no parameter skipped, anything else
      // looked up (959-969: KeyError); at the end, "Some weights are not initialized from
      // checkpoints" for what nothing filled (702-706).
      {.engine = "sglang", .architectures = {"Llama4ForConditionalGeneration"}, .family = LoaderFamily::Llama4,
       .source = "sglang/srt/models/mllama4.py Llama4ForConditionalGeneration.load_weights", .autoWeightsLoader = false,
       .stacked = {{".self_attn.qkv_proj", ".self_attn.q_proj", "q"}, {".self_attn.qkv_proj", ".self_attn.k_proj", "k"}, {".self_attn.qkv_proj", ".self_attn.v_proj", "v"},
                   {".shared_expert.gate_up_proj", ".shared_expert.gate_proj", "0"}, {".shared_expert.gate_up_proj", ".shared_expert.up_proj", "1"},
                   {".feed_forward.gate_up_proj", ".feed_forward.gate_proj", "0"}, {".feed_forward.gate_up_proj", ".feed_forward.up_proj", "1"}},
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = false, .expertPathDrops = false, .droppedSuffixes = {".bias"}, .specLayers = "",
       .fusedExperts = {{"experts.gate_up_proj", "experts.w13_weight"}, {"experts.down_proj", "experts.w2_weight"}}, .fusedUnplaced = Unplaced::Silent,
       .towerMarkers = {"vision", "multi_modal_projector"}, .towerMarkerAnywhere = true, .towerSkipped = true,
       .unfilledWarning = "Some weights are not initialized from checkpoints"},

      // SGLang qwen3_moe.py:1157-1276 Qwen3MoeForCausalLM.load_weights, a hand loop on the full
      // names: "mtp" names skipped for the main model (1192), names past the layers skipped
      // (get_layer_id, 1195-1204), a renamed name not in params_dict tries the next row
      // (1222-1225), an expert rename that is not one skipped (1241-1261), any other name not in
      // params_dict skipped without a word (1264-1267). Every layer is sparse (stage_facts,
      // 877-879); lm_head is its own ParallelLMHead (1017).
      {.engine = "sglang", .architectures = {"Qwen3MoeForCausalLM"}, .family = LoaderFamily::Qwen3Moe,
       .source = "sglang/srt/models/qwen3_moe.py Qwen3MoeForCausalLM.load_weights", .autoWeightsLoader = false, .stacked = kQkvGateUp,
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = true, .expertPathDrops = false, .droppedSuffixes = {".bias"}, .specLayers = "",
       .unplaced = Unplaced::Silent, .expertUnplaced = Unplaced::Silent, .layerRange = true, .mtpNames = true, .everyLayerSparse = true, .headTied = false},
      // SGLang qwen2_moe.py:1324-1408 Qwen2MoeForCausalLM.load_weights: the Qwen3 loop, but an
      // expert rename looked up at once (1383-1384: KeyError) and no "mtp" filter. Every layer is
      // sparse (1057-1059); lm_head its own (1238).
      {.engine = "sglang", .architectures = {"Qwen2MoeForCausalLM"}, .family = LoaderFamily::Qwen2Moe,
       .source = "sglang/srt/models/qwen2_moe.py Qwen2MoeForCausalLM.load_weights", .autoWeightsLoader = false, .stacked = kQkvGateUp,
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = true, .expertPathDrops = true, .droppedSuffixes = {".bias", "_bias"}, .specLayers = "",
       .unplaced = Unplaced::Silent, .expertUnplaced = Unplaced::KeyError, .layerRange = true, .everyLayerSparse = true, .headTied = false},
      // SGLang mixtral.py:392-479 MixtralForCausalLM.load_weights: vLLM's loop on full names, but a
      // name no rename places is logged ("Parameter ... not found in params_dict", 479) and
      // skipped; lm_head its own (355).
      {.engine = "sglang", .architectures = {"MixtralForCausalLM"}, .family = LoaderFamily::Mixtral,
       .source = "sglang/srt/models/mixtral.py MixtralForCausalLM.load_weights", .autoWeightsLoader = false, .stacked = kQkv,
       .expertGate = "w1", .expertUp = "w3", .expertDown = "w2", .expertGuard = "", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = false, .expertPathDrops = true, .droppedSuffixes = {".bias", "_bias"}, .specLayers = "",
       .unplaced = Unplaced::Warns, .expertUnplaced = Unplaced::KeyError, .layerRange = true, .everyLayerSparse = true, .headTied = false},
      // SGLang models/deepseek_common/deepseek_weight_loader.py DeepseekV2WeightLoaderMixin.do_load_weights
      // (DeepseekV2ForCausalLM.load_weights, deepseek_v2.py:3436; V3 inherits it) on the full names:
      // names past the layers skipped (301-310), gate/up the only stacked rows (257-261), the
      // "mlp.experts." guard unless a parameter (384), a renamed name looked up at once (386-390:
      // KeyError), an expert rename that is not one left to the last lookup (407-409), which logs
      // "<name> not found in params_dict." and skips it (528-533); with a q_lora_rank the q_a /
      // kv_a halves are cached and loaded as one into fused_qkv_a_proj_with_mqa once both are in
      // (438-513) - a half whose partner never comes is never loaded. Shared experts fused into
      // the routed ones (the default for V3 with 256 experts on CUDA SM 8.0+ without EP,
      // deepseek_v2.py:3316-3394) are renamed experts.<n_routed>. (311-315): the same tensors
      // fill them, so the parameters are taken unfused. lm_head tied by tie_word_embeddings
      // (deepseek_v2.py:3288-3289). DeepseekV32ForCausalLM subclasses it unchanged (3522-3523), and
      // so does GLM-5's GlmMoeDsaForCausalLM (glm4_moe.py:1284-1285, only the name its shared-expert
      // fusion compares).
      {.engine = "sglang", .architectures = {"DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"}, .family = LoaderFamily::DeepseekV2,
       .source = "sglang/srt/models/deepseek_common/deepseek_weight_loader.py DeepseekV2WeightLoaderMixin.do_load_weights", .autoWeightsLoader = false,
       .stacked = {{"gate_up_proj", "gate_proj", "0"}, {"gate_up_proj", "up_proj", "1"}}, .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj",
       .expertGuard = "mlp.experts.", .expertGuardOnlyIfNotParameter = true, .optionalStacked = "", .stackedMissingContinues = false, .expertPathDrops = false,
       .droppedSuffixes = {".bias"}, .specLayers = "", .unplaced = Unplaced::Warns, .expertUnplaced = Unplaced::Warns, .layerRange = true, .headTied = true,
       .unplacedWarning = "%s not found in params_dict.", .pairs = {{.first = "q_a_proj", .second = "kv_a_proj_with_mqa", .into = "fused_qkv_a_proj_with_mqa", .firstShard = "q_a", .secondShard = "kv_a", .requiresKey = "q_lora_rank"}}, .indexerWhereBuilt = true},
      // SGLang glm4_moe.py:1071-1250 Glm4MoeForCausalLM.load_weights: MTP layers skipped (1154-1163),
      // the "mlp.experts" guard always (1200), a renamed name not in params_dict tries the next row
      // (1208-1209), an expert rename that is not one skipped (1237-1239), any other name skipped
      // without a word (1242-1246). Shared experts fused into the routed ones (the default on
      // CUDA SM 8.0+ without EP, 1011-1027) are renamed experts.<n_routed>.: the same tensors fill
      // them, so the parameters are taken unfused.
      {.engine = "sglang", .architectures = {"Glm4MoeForCausalLM"}, .family = LoaderFamily::Glm4Moe,
       .source = "sglang/srt/models/glm4_moe.py Glm4MoeForCausalLM.load_weights", .autoWeightsLoader = false, .stacked = kQkvGateUp,
       .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj", .expertGuard = "mlp.experts", .expertGuardOnlyIfNotParameter = false,
       .optionalStacked = "", .stackedMissingContinues = true, .expertPathDrops = false, .droppedSuffixes = {".bias"}, .specLayers = "past",
       .unplaced = Unplaced::Silent, .expertUnplaced = Unplaced::Silent, .headTied = false},
      // SGLang deepseek_v4.py:5251-5645 DeepseekV4ForCausalLM.load_weights on the published names:
      // remap_weight_name_to_dpsk_hf_format (:5113-5181) first - embed., head., norm.weight and
      // hc_head_* to the model's, layers. under model., .attn. / .ffn. / .attn_norm. / .ffn_norm.
      // to SGLang's, the router's tid2eid and bias, w1 / w2 / w3 to gate / down / up, a .scale to
      // .weight_scale_inv; names past the layers (get_layer_id) and mtp.* skipped (:5361-5395); the
      // shared experts' gate / up stacked, a missing target a KeyError (:5415-5438); an expert
      // name with no parameter skipped without a word (:5439-5471), a bias too; then the caches:
      // a compressor's wkv and wgate weights into wkv_gate, anything else of theirs an
      // AssertionError (:5489-5526), wq_a and wkv (weights and scales) into wqkv_a, its name
      // looked up at once (:5527-5568), a lone half failing the asserts at the end (:5603-5604);
      // anything else not a parameter warned about and skipped (:5569-5594), and what nothing
      // filled only warned about (:5611-5636).
      {.engine = "sglang", .architectures = {"DeepseekV4ForCausalLM"}, .family = LoaderFamily::DeepseekV4,
       .source = "sglang/srt/models/deepseek_v4.py DeepseekV4ForCausalLM.load_weights", .autoWeightsLoader = false,
       .stacked = {{"gate_up_proj", "gate_proj", "0"}, {"gate_up_proj", "up_proj", "1"}}, .expertGate = "gate_proj", .expertUp = "up_proj", .expertDown = "down_proj",
       .expertGuard = "mlp.experts.", .expertGuardOnlyIfNotParameter = true, .optionalStacked = "", .stackedMissingContinues = false, .expertPathDrops = false,
       .droppedSuffixes = {".bias"}, .specLayers = "past", .unplaced = Unplaced::Warns, .expertUnplaced = Unplaced::Silent, .layerRange = true, .headTied = true,
       .unplacedWarning = "%s not found in params_dict.",
       .pairs = {{.first = ".compressor.wkv.", .second = ".compressor.wgate.", .into = ".compressor.wkv_gate.", .firstShard = "wkv", .secondShard = "wgate",
                  .suffixes = {".weight"}, .otherSuffixRaises = "a compressor's wkv / wgate must be weights (deepseek_v4.py:5496-5498)", .onlyWhereFused = true,
                  .orphanRaises = "AssertionError: assert len(cache_compressor_weight) == 0 (deepseek_v4.py:5603)"},
                 {.first = ".wq_a.", .second = ".wkv.", .into = ".wqkv_a.", .firstShard = "wq_a", .secondShard = "wkv", .skipIf = ".compressor.",
                  .suffixes = {".weight", ".weight_scale_inv"}, .fusedMissing = Unplaced::KeyError,
                  .orphanRaises = "AssertionError: assert len(cache_wqkv_a_weight) == 0 (deepseek_v4.py:5604)"}},
       .mapperSubstrings = {{".attn.", ".self_attn."}, {".ffn.", ".mlp."}, {".attn_norm.", ".input_layernorm."}, {".ffn_norm.", ".post_attention_layernorm."},
                            {".gate.tid2eid", ".topk.tid2eid"}, {".gate.bias", ".gate.e_score_correction_bias"}, {".w1.", ".gate_proj."}, {".w2.", ".down_proj."}, {".w3.", ".up_proj."}},
       .mapperSuffixes = {{".scale", ".weight_scale_inv"}},
       .mapperPrefixes = {{"embed.", "model.embed_tokens."}, {"head.", "lm_head."}, {"norm.weight", "model.norm.weight"}, {"hc_head_", "model.hc_head_"}, {"layers.", "model.layers."}},
       .skipPrefixes = {"mtp"}, .unfilledWarning = "Some weights are not initialized from checkpoints"},
  };
  return rows;
}

}  // namespace ws::val::engines
