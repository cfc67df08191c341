// safetensors header parsing with the reference reader's checks (formats.md 1.2), in its order,
// over a read-only mapping. Nothing is copied but names and shapes.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <optional>

#include "core/formats/data_extent.h"
#include "core/io/mapped_file.h"
#include "core/model/dtype.h"
#include "core/util/error.h"

namespace ws {

struct SafetensorsTensor {
  std::string name;
  const DType* dtype = nullptr;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;  // relative to the data section
  uint64_t end = 0;
};

struct SafetensorsHeader {
  uint64_t headerLength = 0;          // N, the JSON length
  uint64_t dataStart = 0;             // 8 + N: absolute offset of the data section
  std::vector<SafetensorsTensor> tensors;  // in file (offset) order
  std::map<std::string, std::string> metadata;
  // DataExtent::Partial only: the file ends before (or after) the data the header describes.
  std::optional<Error> extentProblem;
};

constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;

// Auto: simdjson first, and the reference-order SAX parser for anything it does not accept (and
// for every error, so messages name the byte at fault). Reference: the SAX parser only - the
// fuzz target checks the two agree.
enum class HeaderParser { Auto, Reference };

// Throws CoreError with the file name, and the tensor or offset at fault.
SafetensorsHeader parseSafetensors(std::span<const uint8_t> file, const std::string& path, HeaderParser parser = HeaderParser::Auto,
                                   DataExtent extent = DataExtent::Exact);
// The same from a mapped file. Its header is read ahead first as one range: otherwise the fault on
// its first page reads the kernel's read-around window (read_ahead_kb: 8 MiB a shard on this
// machine: opening the 10 GiB checkpoint of docs/benchmarks.md cold read 324 MiB, 73 after).
SafetensorsHeader parseSafetensors(const MappedFile& file, HeaderParser parser = HeaderParser::Auto, DataExtent extent = DataExtent::Exact);

}  // namespace ws
