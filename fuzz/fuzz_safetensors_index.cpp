// model.safetensors.index.json over arbitrary text: an error, or an index whose every shard is a
// plain file name and whose weight_map only names listed shards.
#include <string>

#include "core/formats/safetensors_index.h"
#include "core/util/error.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ws::SafetensorsIndex idx = ws::parseSafetensorsIndex(std::string(reinterpret_cast<const char*>(data), size), "fuzz.index.json");
    for (const auto& s : idx.shards) wsfuzz::require(!s.empty() && s.find('/') == std::string::npos && s != "..", "shards are plain file names");
    idx.weightMap.forEach([&](std::string_view, uint32_t shard) { wsfuzz::require(shard < idx.shards.size(), "every mapped shard is listed"); });
  } catch (const ws::CoreError&) {
  }
  return 0;
}
