// The synthetic checkpoint writer: a valid checkpoint of a real model family's names, shapes and
// config keys, in a chosen format and quant scheme. It serves the bundled sample, the tests, demos
// and the benchmarks. --sparse writes real headers over sparse (hole) data, so a full-size
// DeepSeek-V3 costs only header bytes on disk. It writes only under the folder it is given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/util/error.h"

namespace ws::synth {

struct Options {
  std::string like = "qwen3-moe";  // qwen3-moe deepseek-v3 kimi-k2 mixtral gpt-oss qwen3-vl-moe glm-4.5
  std::string scheme = "bf16";     // bf16 fp8-block nvfp4 mxfp4 int4-ct kt-int8 gguf-q4_k
  std::string size = "tiny";       // tiny: a few MiB; full: the published model's dimensions
  // Overrides of the preset (-1: keep the preset's value).
  int64_t layers = -1, experts = -1, hidden = -1, expertIntermediate = -1, denseIntermediate = -1;
  int64_t sharedExperts = -1, denseLayers = -1, vocab = -1, mtpLayers = -1, shards = -1, numaNodes = -1;
  bool sparse = false;
  uint64_t seed = 1;
  std::string out;
};

struct Summary {
  std::vector<std::string> files;  // every file written, relative to out
  uint64_t tensors = 0;
  uint64_t dataBytes = 0;
};

const std::vector<std::string>& families();
const std::vector<std::string>& schemes();

Result<Summary> write(const Options& opt);

}  // namespace ws::synth
