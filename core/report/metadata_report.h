// File-level metadata in the reports: inspect's "metadata", "tokenizer" and "config" (JSON) and
// its metadata section (text), and `weightscope meta` (one key in full).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/formats/tokenizer_info.h"
#include "core/model/checkpoint.h"

namespace ws {

// {key, type, value} per entry (GGUF arrays: element_type, length, value = their first elements;
// safetensors entries: file).
nlohmann::json metadataJson(const Checkpoint& c);
nlohmann::json tokenizerJson(const TokenizerInfo& t);
// HF folders: config.json, generation_config.json and tokenizer_config.json as parsed (a file
// that cannot be parsed: {"error": why}); null for other formats.
nlohmann::json configFilesJson(const Checkpoint& c);
// The metadata section of inspect's text: arrays summarised, long strings cut with their length,
// the tokenizer in one line.
std::string metadataText(const Checkpoint& c, const TokenizerInfo& t);

// `weightscope meta`: every entry whose key matches `glob` (all when empty), arrays and strings in
// full. Text: one entry per block; JSON: a list of {key, type, value} with whole arrays.
std::string metaText(const Checkpoint& c, const std::string& glob);
nlohmann::json metaJson(const Checkpoint& c, const std::string& glob);

}  // namespace ws
