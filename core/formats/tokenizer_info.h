// The tokenizer in one summary, from wherever the checkpoint keeps it: GGUF's tokenizer.ggml.* keys
// (token texts read from the array on demand) or an HF folder's tokenizer.json and
// tokenizer_config.json (read when asked for, never at open: Qwen3's tokenizer.json is 11 MB).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"

namespace ws {

struct SpecialToken {
  std::string role;  // "bos", "eos", "pad", "unk"
  int64_t id = -1;   // -1: the checkpoint names the token but not its id (or the id is unknown)
  std::string text;
};

struct TokenizerInfo {
  bool present = false;
  std::string source;      // "gguf", "tokenizer.json"
  std::string model;       // GGUF tokenizer.ggml.model ("gpt2", "llama"), tokenizer.json model.type ("BPE")
  uint64_t vocabSize = 0;  // tokens the tokenizer can produce (HF: vocabulary plus added tokens beyond it)
  uint64_t merges = 0;
  uint64_t addedTokens = 0;
  std::vector<SpecialToken> special;
  std::vector<std::string> chatTemplates;  // their names: "default", "tool_use", ...
  std::vector<std::string> problems;       // files that could not be read, as sentences
  std::map<int64_t, std::string> texts;    // the texts of the ids asked for that the tokenizer has
};

// `textsOf`: ids whose token texts to look up (in TokenizerInfo::texts).
TokenizerInfo tokenizerInfo(const Checkpoint& c, const std::set<int64_t>& textsOf = {});

// The HF tokenizer files (tokenizer.json, tokenizer_config.json) of a folder, whatever the
// checkpoint beside them: a GGUF file's folder may hold its HF source's.
TokenizerInfo hfTokenizerInfo(const std::string& folder, const std::set<int64_t>& textsOf = {});

// The folder an HF checkpoint's side files (config.json, tokenizer files) live in: the path
// opened, or the folder of the file opened.
std::string sideFolder(const Checkpoint& c);

}  // namespace ws
