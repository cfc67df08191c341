#include "core/plan/sglang_swa_pool.h"

#include <algorithm>

namespace ws::plan {

const std::vector<std::string_view>& sglangHybridSwaArchitectures() {
  static const std::vector<std::string_view> t = {
      "BeamForCausalLM", "Llama4ForConditionalGeneration", "DeepseekV4ForCausalLM", "DeepseekV4ForCausalLMNextN", "DeepseekV4ForCausalLMDSpark",
      // SWA_SINK_ARCHS
      "GptOssForCausalLM", "GraniteSWAForCausalLM", "GraniteMoeSWAForCausalLM", "IQuestQ1ForCausalLM", "IQuestQ1MTP",
      // MIMO_V2_MODEL_ARCHS
      "MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM", "MiMoV2MTP",
      "Step3p5ForCausalLM", "Step3p5MTP", "Step3p7ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration", "EmbeddingGemma2Model",
      "Gemma4UnifiedForConditionalGeneration", "DiffusionGemmaForBlockDiffusion", "LagunaForCausalLM", "MellumForCausalLM", "MuseGlimmerForCausalLM",
      "MuseGlimmerForConditionalGeneration", "InklingForConditionalGeneration", "InklingForConditionalGenerationMTP", "UnlimitedOCRForCausalLM",
  };
  return t;
}

bool sglangHybridSwa(const ModelDescription& m) {
  const auto& list = sglangHybridSwaArchitectures();
  for (const auto& arch : m.architectures) {
    if (std::find(list.begin(), list.end(), arch) == list.end()) continue;
    const auto& types = m.attention.layerTypes;
    if (arch == "BeamForCausalLM") return std::find(types.begin(), types.end(), "sliding_attention") != types.end();
    if (arch == "LagunaForCausalLM") return m.attention.slidingWindow > 0;  // only with a sliding window
    return true;
  }
  return m.attention.hybridSwaFlag;
}

}  // namespace ws::plan
