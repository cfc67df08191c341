// GGUF v2/v3 parsing (formats.md 2.1-2.3) through a bounded reader: every count and length is
// checked against the bytes that remain before anything is allocated from it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/formats/data_extent.h"
#include "core/model/dtype.h"
#include "core/model/metadata.h"
#include "core/util/error.h"

namespace ws {

enum class GgufType : int32_t {
  U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7, String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12
};
const char* ggufTypeName(GgufType t);

struct GgufKv {
  std::string key;
  GgufType type = GgufType::U8;
  // Scalars: the value. Arrays: element type and count, and the values themselves when the
  // array is numeric and short (long arrays such as token lists are only counted).
  MetaScalar value;
  GgufType arrayType = GgufType::U8;
  uint64_t arrayCount = 0;
  std::vector<double> arrayNumbers;  // filled for numeric arrays of at most kMaxKeptArray elements
  std::vector<MetaScalar> first;     // arrays: the first kMetaPreview elements, strings included
  uint64_t offset = 0;               // where the key starts in the file
  uint64_t dataOffset = 0;           // arrays: where the first element starts

  std::optional<int64_t> asInt() const;
  std::optional<std::string> asString() const;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> ne;   // ggml order: ne[0] is the contiguous dimension
  const DType* dtype = nullptr;
  uint64_t relOffset = 0;    // relative to the data section
  uint64_t bytes = 0;
  uint64_t infoOffset = 0;   // where the tensor info starts in the file
};

struct GgufFile {
  uint32_t version = 0;
  uint32_t alignment = 32;
  uint64_t dataStart = 0;    // absolute offset of the data section
  std::vector<GgufKv> kv;
  std::vector<GgufTensorInfo> tensors;
  std::vector<std::string> notes;  // tolerated oddities (long names, non-canonical offsets)
  // The first tensor whose offset is aligned and in bounds but not where ggml's current reader
  // demands (the running sum of padded sizes): the file opens, llama.cpp refuses it.
  std::optional<Error> nonCanonical;
  // DataExtent::Partial only: the first tensor whose data runs past the end of the file.
  std::optional<Error> extentProblem;

  const GgufKv* find(std::string_view key) const;
};

constexpr uint64_t kMaxKeptArray = 4096;

// The elements of a GGUF array entry, read from the file when asked for (a 256k-token vocabulary
// is never loaded to show its first rows): string arrays are indexed once, in one pass over their
// lengths; numbers are read by position. Bounds are checked as the parser checks them.
class GgufArray {
 public:
  // `file` is the whole GGUF file the entry came from.
  static Result<GgufArray> open(std::span<const uint8_t> file, const std::string& path, const MetaEntry& e);
  uint64_t size() const { return count_; }
  MetaScalar at(uint64_t i) const;

 private:
  std::span<const uint8_t> file_;
  GgufType type_ = GgufType::U8;
  uint64_t start_ = 0, count_ = 0;
  std::vector<uint64_t> strings_;  // string arrays: where each element's length field starts
};
GgufType ggufTypeFromName(std::string_view name);

GgufFile parseGguf(std::span<const uint8_t> file, const std::string& path, DataExtent extent = DataExtent::Exact);
bool looksLikeGguf(std::span<const uint8_t> file);

}  // namespace ws
