// GGUF header, KV pairs and tensor infos over arbitrary bytes, then the model description built
// from the KV pairs: an error, or tensors that lie inside the file, aligned, with exact sizes.
#include <span>

#include "core/formats/gguf.h"
#include "core/formats/gguf_model.h"
#include "core/util/error.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ws::GgufFile g = ws::parseGguf(std::span<const uint8_t>(data, size), "fuzz.gguf");
    wsfuzz::require(g.alignment > 0 && (g.alignment & (g.alignment - 1)) == 0, "alignment is a power of two");
    // With no tensors the aligned data start may lie past a short file: nothing is read there.
    wsfuzz::require(g.tensors.empty() || g.dataStart <= size, "data section starts inside the file");
    for (const auto& t : g.tensors) {
      wsfuzz::require(t.dtype != nullptr && t.ne.size() <= 4, "dtype and at most 4 dims (0 is a scalar, as in ggml)");
      wsfuzz::require(t.relOffset % g.alignment == 0, "offsets are aligned");
      wsfuzz::require(t.relOffset <= size - g.dataStart && t.bytes <= size - g.dataStart - t.relOffset, "every tensor lies inside the file");
      uint64_t elems = 1;
      for (int64_t d : t.ne) elems *= uint64_t(d);  // the parser proved this does not overflow
      wsfuzz::require(t.dtype->bytesFor(elems) == t.bytes, "bytes = elements x type size");
    }
    ws::ModelDescription m = ws::modelFromGgufKv(g, "fuzz.gguf");
    wsfuzz::require(m.numLayers <= ws::kMaxPlausibleCount && m.numExperts <= ws::kMaxPlausibleCount, "plausible counts");
  } catch (const ws::CoreError&) {
  }
  return 0;
}
