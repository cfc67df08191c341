// The safetensors header parser over arbitrary bytes: it either throws CoreError or returns
// tensors that lie inside the data section, are contiguous from 0 and hold exactly their bytes;
// and its simdjson fast path (with the reference-order SAX parser behind it) and the SAX parser
// alone accept and refuse the same inputs and read the same header from the ones they accept.
#include <optional>
#include <span>

#include "core/formats/safetensors.h"
#include "core/util/checked.h"
#include "core/util/error.h"
#include "fuzz_support.h"

namespace {

// Each parser on its own: a refusal of one must not hide an acceptance by the other.
std::optional<ws::SafetensorsHeader> parse(std::span<const uint8_t> bytes, ws::HeaderParser parser) {
  try {
    return ws::parseSafetensors(bytes, "fuzz.safetensors", parser);
  } catch (const ws::CoreError&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  const auto h = parse(bytes, ws::HeaderParser::Auto);
  const auto r = parse(bytes, ws::HeaderParser::Reference);
  wsfuzz::require(h.has_value() == r.has_value(), "the fast path and the reference parser accept the same headers");
  if (!h) return 0;
  wsfuzz::require(h->dataStart == 8 + h->headerLength && h->dataStart <= size, "data section starts inside the file");
  uint64_t expect = 0;
  for (const auto& t : h->tensors) {
    wsfuzz::require(t.dtype != nullptr, "every tensor has a dtype");
    wsfuzz::require(t.begin == expect && t.end >= t.begin, "tensors are contiguous from 0");
    wsfuzz::require(t.end <= size - h->dataStart, "every tensor lies inside the file");
    auto elems = ws::checkedProduct(t.shape);
    wsfuzz::require(elems && t.dtype->bytesFor(*elems) == t.end - t.begin, "bytes = elements x dtype size");
    expect = t.end;
  }
  wsfuzz::require(expect == size - h->dataStart, "the data section is filled exactly");
  wsfuzz::require(r->tensors.size() == h->tensors.size() && r->metadata == h->metadata, "both parsers read the same header");
  for (size_t i = 0; i < h->tensors.size(); ++i)
    wsfuzz::require(r->tensors[i].name == h->tensors[i].name && r->tensors[i].dtype == h->tensors[i].dtype && r->tensors[i].shape == h->tensors[i].shape &&
                        r->tensors[i].begin == h->tensors[i].begin && r->tensors[i].end == h->tensors[i].end,
                    "both parsers read the same tensors");
  return 0;
}
