// The safetensors header parser over arbitrary bytes: it either throws CoreError or returns
// tensors that lie inside the data section, are contiguous from 0 and hold exactly their bytes,
// and its simdjson fast path reads exactly what the reference-order SAX parser reads.
#include <span>

#include "core/formats/safetensors.h"
#include "core/util/checked.h"
#include "core/util/error.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ws::SafetensorsHeader h = ws::parseSafetensors(std::span<const uint8_t>(data, size), "fuzz.safetensors");
    wsfuzz::require(h.dataStart == 8 + h.headerLength && h.dataStart <= size, "data section starts inside the file");
    uint64_t expect = 0;
    for (const auto& t : h.tensors) {
      wsfuzz::require(t.dtype != nullptr, "every tensor has a dtype");
      wsfuzz::require(t.begin == expect && t.end >= t.begin, "tensors are contiguous from 0");
      wsfuzz::require(t.end <= size - h.dataStart, "every tensor lies inside the file");
      auto elems = ws::checkedProduct(t.shape);
      wsfuzz::require(elems && t.dtype->bytesFor(*elems) == t.end - t.begin, "bytes = elements x dtype size");
      expect = t.end;
    }
    wsfuzz::require(expect == size - h.dataStart, "the data section is filled exactly");
    // The simdjson fast path accepted it: the reference parser must read exactly the same.
    ws::SafetensorsHeader r = ws::parseSafetensors(std::span<const uint8_t>(data, size), "fuzz.safetensors", ws::HeaderParser::Reference);
    wsfuzz::require(r.tensors.size() == h.tensors.size() && r.metadata == h.metadata, "both parsers read the same header");
    for (size_t i = 0; i < h.tensors.size(); ++i)
      wsfuzz::require(r.tensors[i].name == h.tensors[i].name && r.tensors[i].dtype == h.tensors[i].dtype && r.tensors[i].shape == h.tensors[i].shape &&
                          r.tensors[i].begin == h.tensors[i].begin && r.tensors[i].end == h.tensors[i].end,
                      "both parsers read the same tensors");
  } catch (const ws::CoreError&) {
  }
  return 0;
}
