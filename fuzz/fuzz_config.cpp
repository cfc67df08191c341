// config.json and hf_quant_config.json text (the input split at its first NUL) into a model
// description: an error, or plausible counts with each layer classified once.
#include <string>

#include "core/formats/hf_config.h"
#include "core/util/error.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto [config, quant] = wsfuzz::splitAtNul(std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    ws::ModelDescription m = ws::parseHfConfigText(std::string(config), "config.json");
    if (!quant.empty()) ws::applyHfQuantConfigText(std::string(quant), "hf_quant_config.json", m);
    wsfuzz::require(m.numLayers <= ws::kMaxPlausibleCount && m.numExperts <= ws::kMaxPlausibleCount, "plausible counts");
    wsfuzz::require(m.moeLayers.size() + m.denseLayers.size() <= size_t(std::max<int64_t>(0, m.numLayers)), "each layer once");
  } catch (const ws::CoreError&) {
  }
  return 0;
}
