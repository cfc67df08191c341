// config.json and hf_quant_config.json -> ModelDescription (formats.md 3-7).
#pragma once

#include <string>

#include "core/model/model_description.h"

namespace ws {

// Reads `dir`/config.json (and hf_quant_config.json when present). Returns false when there is no
// config.json; throws CoreError(InvalidHeaderJson) naming the file when it is not valid JSON.
bool readHfConfig(const std::string& dir, ModelDescription& out);

// Parses config.json text (exposed for tests and for the synthetic writer's round trip).
ModelDescription parseHfConfigText(const std::string& text, const std::string& path);

// Applies hf_quant_config.json text (ModelOpt's quantization block) on top of `out`.
void applyHfQuantConfigText(const std::string& text, const std::string& path, ModelDescription& out);

// Which layers are MoE, given the config's rule keys; fills moeLayers / denseLayers.
void applyLayerPattern(ModelDescription& m, int64_t firstKDense, int64_t sparseStep, const std::vector<int>& mlpOnly,
                       int64_t moeLayerFreq, int64_t interleaveStep, const std::vector<int>& explicitMoe);

}  // namespace ws
