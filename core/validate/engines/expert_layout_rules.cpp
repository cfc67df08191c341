#include "core/validate/engines/expert_layout_rules.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "core/formats/tokenizer_info.h"
#include "core/io/text_file.h"
#include "core/validate/engines/engine_tables.h"
#include "core/validate/engines/quant_method.h"
#include "core/validate/engines/name_list.h"

namespace ws::val::engines {

namespace {

// One engine's loader of fused expert tensors for one model class: it transposes each as
// transformers 4.x stored them, gate_up_proj [E, H, 2I] and down_proj [E, I, H], and chunks
// gate_up into gate then up.
struct FusedExpertLoaderRow {
  std::string_view engine, architecture, source;
  // The expert count the engine's config builds when text_config names none (the key and default
  // of the transformers class it reads), "" when the count is always the checkpoint's.
  std::string_view countKey;
  int64_t countDefault;
  std::string_view countSource;
  std::string_view countFailure;  // what the loader does when the counts differ
};

const std::vector<FusedExpertLoaderRow>& fusedExpertLoaders() {
  static const std::vector<FusedExpertLoaderRow> rows = {
      // vLLM 0.11.0 reads transformers' Qwen3VLMoeTextConfig (no config class of its own); at
      // 4.57.1 its num_experts defaults to 60 (configuration_qwen3_vl_moe.py:181) and it has no
      // attribute_map, so transformers 5's num_local_experts is not read.
      {"vllm", "Qwen3VLMoeForConditionalGeneration", "vllm/model_executor/models/qwen3_vl_moe.py Qwen3MoeLLMModel.load_weights:217-233 (transpose(-1, -2), gate_up chunked on dim -2)",
       "num_experts", 60, "transformers 4.57.1's Qwen3VLMoeTextConfig (configuration_qwen3_vl_moe.py:181)",
       "load_fused_expert_weights indexes the fused tensor for every expert it built (qwen3_vl_moe.py:129-130: IndexError past the stored ones) and the router's "
       "ReplicatedLinear.weight_loader asserts the sizes match (layers/linear.py:378-380)"},
      // SGLang 0.5.23 pins transformers 5.19.0, whose attribute_map reads num_local_experts as
      // num_experts: the checkpoint's count either way.
      {"sglang", "Qwen3VLMoeForConditionalGeneration", "sglang/srt/models/qwen3_vl_moe.py load_weights:319-344 (transpose(-1, -2), gate_up chunked on dim -2)", "", 0, "", ""},
      {"vllm", "Llama4ForConditionalGeneration", "vllm/model_executor/models/llama4.py Llama4Model.load_moe_expert_weights:400-407 (transpose(-1, -2), gate_up chunked on dim -2)", "", 0, "", ""},
      {"sglang", "Llama4ForConditionalGeneration", "sglang/srt/models/mllama4.py Llama4ForConditionalGeneration.load_weights:895-957 (gate_up chunked on dim -1, each expert transposed)", "", 0,
       "", ""},
  };
  return rows;
}

std::string shapeText(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The ModelOpt NVFP4 MoE methods create each layer's per-expert input scales, w13_input_scale [E, 2]
// and w2_input_scale [E], before loading, and only each routed expert's own gate / up / down
// input_scale fills them (the expert mapping's shards):
// - vLLM 0.11.0 (quantization/modelopt.py ModelOptNvFp4FusedMoE, 1186-1194) with torch.empty -
//   an expert stored without one keeps whatever the allocator left there, and
//   process_weights_after_loading takes their max and inverse (1310-1330);
// - SGLang 0.5.23 (quantization/modelopt_quant.py ModelOptNvFp4FusedMoEMethod, 2633-2648) with
//   1.0 - and where its backend takes the layer's largest w13 scale (2769-2786) a 1.0 becomes
//   every expert's.
void nvfp4ExpertInputScales(const Checkpoint& c, const std::string& engine, Sink& sink) {
  const auto paths = quantPathsOf(c.model);
  if (std::find(paths.begin(), paths.end(), "modelopt-nvfp4") == paths.end()) return;
  std::set<std::string, std::less<>> names;
  for (const auto& t : c.tensors) names.insert(t.name);
  std::vector<std::string> missing;
  for (const auto& t : c.tensors) {
    if (t.role != Role::RoutedExpert || t.expert < 0 || !t.name.ends_with(".weight")) continue;
    if (t.projection != Projection::Gate && t.projection != Projection::Up && t.projection != Projection::Down) continue;
    const std::string scale = t.name.substr(0, t.name.size() - 7) + ".input_scale";
    if (!names.count(scale)) missing.push_back(scale);
  }
  if (missing.empty()) return;
  const std::string what = std::to_string(missing.size()) + " routed expert projections of this ModelOpt NVFP4 checkpoint have no input_scale of their own, which ";
  const std::string first = missing.front().substr(0, missing.front().rfind('.')) + ".weight";
  if (engine == "vllm")
    sink.add("WS-E010", what + "vLLM " + std::string(kVllmRelease) + " (quantization/modelopt.py ModelOptNvFp4FusedMoE: w13_input_scale / w2_input_scale from torch.empty, 1186-1194) " +
                            std::string(kLoadsUninitialisedScales) + ": " + listed(missing),
             first);
  else
    sink.add("WS-E010", what + "SGLang " + std::string(kSglangRelease) + " (quantization/modelopt_quant.py ModelOptNvFp4FusedMoEMethod: w13_input_scale / w2_input_scale filled with 1.0, " +
                            "2633-2648) " + std::string(kLoadsDefaultScales) + " - where its backend takes the layer's largest w13 scale (2769-2786), every expert's: " + listed(missing),
             first);
}

}  // namespace

void expertLayoutRules(const Checkpoint& c, const std::string& engine, Sink& sink) {
  nvfp4ExpertInputScales(c, engine, sink);
  const ModelDescription& m = c.model;
  if (c.format != "safetensors" || m.source != "config.json" || m.hiddenSize <= 0) return;
  const FusedExpertLoaderRow* row = nullptr;
  for (const auto& r : fusedExpertLoaders())
    if (r.engine == engine && std::find(m.architectures.begin(), m.architectures.end(), r.architecture) != m.architectures.end()) row = &r;
  if (!row) return;
  const uint64_t H = uint64_t(m.hiddenSize);
  const std::string who = std::string(engine == "vllm" ? "vLLM " : "SGLang ") + std::string(engine == "vllm" ? kVllmRelease : kSglangRelease) + " (" + std::string(row->source) + ")";

  std::vector<std::string> flipped, neither, square;
  uint64_t stored = 0;  // the experts a fused tensor holds
  for (const auto& t : c.tensors) {
    const bool gateUp = t.name.ends_with("experts.gate_up_proj"), down = t.name.ends_with("experts.down_proj");
    if ((!gateUp && !down) || t.shape.size() != 3) continue;
    stored = t.shape[0];
    const uint64_t a = t.shape[1], b = t.shape[2];
    // gate_up wants [E, H, 2I], down [E, I, H]; transformers 5 keeps [E, 2I, H] and [E, H, I].
    const bool wanted = gateUp ? a == H : b == H, other = gateUp ? b == H : a == H;
    const std::string named = t.name + " " + shapeText(t.shape);
    if (wanted && other) square.push_back(named);
    else if (other) flipped.push_back(named);
    else if (!wanted) neither.push_back(named);
  }
  if (!flipped.empty())
    sink.add("WS-E010", std::to_string(flipped.size()) + " fused expert tensors stored as transformers 5 keeps them, gate_up_proj [E, 2I, H] and down_proj [E, H, I], where " + who +
                            " transposes each from transformers 4.x's [E, H, 2I] / [E, I, H]: the copy into its FusedMoE raises RuntimeError (a size mismatch): " + listed(flipped) +
                            (square.empty() ? std::string() : "; the square ones (" + listed(square) + ") would pass the copy with each expert's gate and up rows scrambled") +
                            "; transpose them to transformers 4.x's layout",
             flipped.front().substr(0, flipped.front().find(' ')));
  if (!neither.empty())
    sink.add("WS-E010", std::to_string(neither.size()) + " fused expert tensors whose shape has no axis of the hidden size " + std::to_string(H) + " where " + who +
                            " needs gate_up_proj [E, H, 2I] and down_proj [E, I, H]: " + listed(neither),
             neither.front().substr(0, neither.front().find(' ')));

  if (row->countKey.empty() || !stored) return;
  nlohmann::json cfg;
  try {
    cfg = nlohmann::json::parse(readTextFile((std::filesystem::path(sideFolder(c)) / "config.json").string()));
  } catch (const std::exception&) {
    return;
  }
  const nlohmann::json text = cfg.is_object() && cfg.contains("text_config") && cfg["text_config"].is_object() ? cfg["text_config"] : cfg;
  const std::string key(row->countKey);
  const int64_t built = text.contains(key) && text[key].is_number_integer() ? text[key].get<int64_t>() : row->countDefault;
  if (uint64_t(built) != stored)
    sink.add("WS-E010", "text_config " + (text.contains(key) ? key + " is " + std::to_string(built) : "has no " + key + (text.contains("num_local_experts") ? " (transformers 5 writes num_local_experts)" : std::string())) +
                            ": " + who + " builds " + std::to_string(built) + " experts a layer from " + (text.contains(key) ? std::string("it") : std::string(row->countSource)) +
                            ", and the checkpoint's fused expert tensors hold " + std::to_string(stored) + ": " + std::string(row->countFailure),
             "config.json");
}

}  // namespace ws::val::engines
