// What every RowDecoder reads its stored tensors through: a tensor's mapped bytes (checked against
// its file), the pread path for value scans, and a scale-like companion read as floats whatever
// its dtype. Shared by the decoders of dequant.cpp and library_decoders.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/numerics/decode_desc.h"
#include "core/numerics/dequant.h"
#include "core/numerics/element_reader.h"
#include "core/util/error.h"

namespace ws::num {

inline const uint8_t* dataOf(const Checkpoint& c, const TensorRecord& t) {
  const auto& f = c.files[t.file];
  if (t.cut || !f.map || t.offset > f.map->size() || t.bytes > f.map->size() - t.offset)
    fail(ErrorCode::Io,
         "data [" + std::to_string(t.offset) + ", +" + std::to_string(t.bytes) + ") runs past the end of the " + std::to_string(f.size) +
             "-byte file (cut: a partial download or a header-only copy)",
         f.path, t.offset, t.name);
  return f.map->bytes().data() + t.offset;
}

inline uint64_t product(const std::vector<uint64_t>& v, size_t from = 0, size_t to = SIZE_MAX) {
  uint64_t n = 1;
  for (size_t i = from; i < std::min(to, v.size()); ++i) n *= v[i];
  return n;
}

inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

[[noreturn]] inline void mismatch(const Checkpoint& c, const TensorRecord& t, const std::string& what) {
  fail(ErrorCode::TensorInvalidInfo, what, c.files[t.file].path, t.offset, t.name);
}

// A stored tensor's bytes: where the mapping holds them, and where they lie in their file, for
// the reads ExtentScratch::pread asks for instead of the mapping.
struct StoredBytes {
  const uint8_t* mapped = nullptr;
  const MappedFile* file = nullptr;
  uint64_t offset = 0;  // of the first byte in the file
  StoredBytes() = default;
  StoredBytes(const Checkpoint& c, const TensorRecord& t) : mapped(dataOf(c, t)), file(c.files[t.file].map.get()), offset(t.offset) {}
  // Bytes [at, at + n): the mapping's own, or read with pread into buf, or the kept copy when it
  // holds them (`kept` is then set).
  const uint8_t* staged(uint64_t at, uint64_t n, std::vector<uint8_t>& buf, bool pread, const ExtentScratch::Kept* keptCopy = nullptr, bool* kept = nullptr) const {
    if (!pread) return mapped + at;
    if (keptCopy && keptCopy->file == file && offset + at >= keptCopy->offset && offset + at + n <= keptCopy->offset + keptCopy->bytes.size()) {
      if (kept) *kept = true;
      return keptCopy->bytes.data() + (offset + at - keptCopy->offset);
    }
    buf.resize(std::max<uint64_t>(buf.size(), n));
    file->readAt(offset + at, buf.data(), n);
    return buf.data();
  }
};

// A scale-like companion read as floats, whatever its dtype.
struct ScaleView {
  const TensorRecord* t = nullptr;
  StoredBytes bytes;
  ElementReader r;
  uint64_t n = 0;
  // `as` reads the bytes as another type of the same width (MX scales stored as U8 are E8M0).
  void init(const Checkpoint& c, const TensorRecord& rec, const DType* as = nullptr) {
    t = &rec;
    bytes = StoredBytes(c, rec);
    n = rec.elements();
    if (!r.init(as ? as : rec.dtype)) mismatch(c, rec, "scale dtype " + std::string(rec.dtype->name) + " has no float value");
  }
  float at(uint64_t i) const { return r.at(bytes.mapped, i); }
  // Entries [first, first + n) as floats into out; read with pread into buf when asked. True
  // when they came from the scratch's kept copy.
  bool run(uint64_t first, uint64_t n, float* out, std::vector<uint8_t>& buf, bool pread, const ExtentScratch::Kept* keptCopy = nullptr) const {
    bool kept = false;
    r.run(stored(first, n, buf, pread, keptCopy, &kept), 0, n, out);
    return kept;
  }
  // The same entries as stored, not converted.
  const uint8_t* stored(uint64_t first, uint64_t n, std::vector<uint8_t>& buf, bool pread, const ExtentScratch::Kept* keptCopy, bool* kept) const {
    const uint64_t width = t->dtype->blockBytes;
    return bytes.staged(first * width, n * width, buf, pread, keptCopy, kept);
  }
  Region region() const { return t ? Region{bytes.mapped, t->bytes, n, r.kind()} : Region{}; }
};

inline Region regionOf(const uint8_t* p, const TensorRecord& t, ElemKind k = ElemKind::None) { return Region{p, t.bytes, t.elements(), k}; }

}  // namespace ws::num
