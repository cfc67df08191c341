// Model-family presets for the synthetic writer: dimensions (tiny and published) and the
// naming/config conventions each family uses.
#pragma once

#include <cstdint>
#include <string>

namespace ws::synth {

enum class MoeStyle { Qwen, DeepSeek, Mixtral, GptOss, QwenVlFused };

struct Family {
  std::string like;
  std::string modelType;     // config.json model_type
  std::string architecture;  // config.json architectures[0]
  std::string ggufArch;      // general.architecture
  std::string prefix = "model.";
  MoeStyle moe = MoeStyle::Qwen;
  int64_t layers = 0, hidden = 0, heads = 0, kvHeads = 0, headDim = 0;
  int64_t denseIntermediate = 0, expertIntermediate = 0, experts = 0, shared = 0, topk = 0;
  int64_t denseLayers = 0;   // leading dense layers
  int64_t vocab = 0, mtp = 0, shards = 1;
  bool mla = false;          // DeepSeek multi-head latent attention
  int64_t qLora = 0, kvLora = 0, nope = 0, rope = 0, vHead = 0;
  bool qkNorm = false, attnBias = false, sinks = false, vision = false, tiedEmbeddings = false;
};

// Throws std::invalid_argument for an unknown family or size.
Family presetFamily(const std::string& like, const std::string& size);

}  // namespace ws::synth
