// A checkpoint's file-level metadata as typed values: every GGUF key-value pair (with its GGUF
// type; arrays with their element type, length and first elements - the rest read on demand by
// core/formats/gguf_array) and each safetensors file's __metadata__ strings. Config files of HF
// folders are read on demand (core/model/side_files).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace ws {

// One value: GGUF numbers as their own kind (unsigned, signed, floating), a bool or a string.
using MetaScalar = std::variant<std::monostate, uint64_t, int64_t, double, bool, std::string>;

// Elements of an array kept with the catalog; the rest stay in the file.
constexpr uint64_t kMetaPreview = 16;

struct MetaEntry {
  std::string key;
  std::string type;          // GGUF: UINT8 ... FLOAT64, BOOL, STRING, ARRAY; safetensors __metadata__: STRING
  std::string elementType;   // ARRAY: the element type
  uint64_t length = 0;       // ARRAY: element count
  MetaScalar value;          // scalars
  std::vector<MetaScalar> first;  // ARRAY: its first kMetaPreview elements
  int32_t file = -1;         // the file it was read from (index into Checkpoint::files)
  uint64_t offset = 0;       // GGUF: where the key starts in the file
  uint64_t dataOffset = 0;   // GGUF ARRAY: where its first element starts
};

}  // namespace ws
