// diff's comparison of everything besides the tensors (issue 53 item 3): the HF side files' keys
// (config.json, generation_config.json, tokenizer_config.json; tokenizer.json by its model type,
// vocabulary and merges - their counts and a hash of their text - and each added token's id), and
// a GGUF's metadata keys against another GGUF's (tokenizer.ggml.* among them), and an HF folder
// against a GGUF by the keys llama.cpp's converter derives from config.json (source
// "config.json -> gguf", key "hidden_size -> qwen3moe.embedding_length").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"

namespace ws::diff {

struct MetadataDifference {
  std::string source;  // "config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json", "gguf"
  std::string key;     // a JSON pointer's path ("/text_config/num_experts"), or the GGUF key
  std::optional<std::string> a, b;  // the values as JSON (GGUF arrays: type, length, first elements); none: absent
};

// Every key whose value differs or that one side lacks, in source then key order; between an HF
// folder and a GGUF, only the converter's keys; empty for other mixes of formats.
std::vector<MetadataDifference> diffMetadata(const Checkpoint& a, const Checkpoint& b);

}  // namespace ws::diff
