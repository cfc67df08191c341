// The special token ids each file of a checkpoint gives: config.json and generation_config.json
// (bos_token_id / eos_token_id / pad_token_id, an id or a list), the HF tokenizer
// (tokenizer_config.json's bos_token / eos_token / pad_token texts, their ids from tokenizer.json),
// and a GGUF's tokenizer.ggml.*_token_id keys - with the HF files beside a GGUF file too, which
// is how vLLM serves a GGUF (its tokenizer and config from the HF source).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/formats/tokenizer_info.h"

namespace ws {

struct SpecialTokenSource {
  std::string file;  // the path that says it
  std::string name;  // its file name: "config.json", "generation_config.json", "tokenizer_config.json", the GGUF's
  bool gguf = false;
  // "bos", "eos", "pad" -> the ids. A GGUF's "eos" holds its eos and eot ids: llama.cpp ends a
  // generation at either (both are end-of-generation tokens, src/llama-vocab.cpp).
  std::map<std::string, std::set<int64_t>> ids;
};

// generation_config.json and config.json of `folder`, those that name an id: bos_token_id,
// eos_token_id, pad_token_id, each an id or a list (text_config's first, for multimodal configs).
// A file absent or unreadable names none (the integrity family reports that).
std::vector<SpecialTokenSource> configTokenSources(const std::string& folder);

// A tokenizer's special tokens with an id as a source (empty ids when it has none).
SpecialTokenSource tokenizerTokenSource(const TokenizerInfo& t, std::string file, std::string name, bool gguf);

}  // namespace ws
