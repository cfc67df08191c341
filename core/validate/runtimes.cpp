#include "core/validate/runtimes.h"

namespace ws::val {

const std::vector<RuntimeInfo>& runtimes() {
  static const std::vector<RuntimeInfo> r = {
      {"kt", "KTransformers SFT", "the KTransformers fine-tuning weight loader (native FP8 and RAWINT4 experts)", ""},
      {"seed", "the seed runtime", "the Rust GPU runtime's weight store (its safetensors dtype set)", ""},
      {"llama.cpp", "llama.cpp", "ggml's GGUF reader and llama.cpp's model builder (canonical tensor offsets; the architecture and its required keys)", "0c1e57098"},
      // The serving engines (core/validate/engines): their registries, kernels and layout checks.
      {"vllm", "vLLM", "vLLM's model registry, quantization kernels and parallel layers", "0.11.0"},
      {"sglang", "SGLang", "SGLang's model registry, quantization kernels and parallel layers", "0.5.23"},
  };
  return r;
}

const RuntimeInfo* findRuntime(std::string_view name) {
  for (const auto& r : runtimes())
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace ws::val
