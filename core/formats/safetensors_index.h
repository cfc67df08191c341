// model.safetensors.index.json (formats.md 1.3): which shard holds which tensor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/name_table.h"

namespace ws {

struct SafetensorsIndex {
  std::vector<std::string> shards;                          // distinct shard files, natural order
  NameTable weightMap;                                        // tensor -> index into shards
  std::optional<uint64_t> totalSize;                        // metadata.total_size when an unsigned integer
  // weightMap's keys view this one buffer: 200k names, one allocation instead of 200k.
  std::shared_ptr<const std::string> names;
};

// weight_map is required; metadata is optional and its fields may be of any type. A shard must be
// a plain file name beside the index: a path ("../x", "/dev/zero", "a/b") is refused, so an index
// can never make us read outside the checkpoint's folder. A tensor named twice is refused too.
// Parsed as a token stream (no DOM): Kimi-K2's index is 20 MB of JSON. Throws
// CoreError(InvalidHeaderJson) naming `path` (and the tensor, when one is at fault).
SafetensorsIndex parseSafetensorsIndex(const std::string& text, const std::string& path);

}  // namespace ws
