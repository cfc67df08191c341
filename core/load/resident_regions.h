// Where a load put the file bytes it uploaded, so the BF16 twins decode from the copies already on
// the device instead of staging the same bytes from the file again (the GPU-proof issue, item 3).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/numerics/decode_desc.h"

namespace ws::load {

class UploadedRanges {
 public:
  struct Piece {
    uint32_t file;
    uint64_t fileOffset, bytes;
    const uint8_t* device;  // where the piece landed unchanged, in the backend's memory
  };
  // The pieces in any order; those consecutive in a file and on the device join into one run.
  explicit UploadedRanges(std::vector<Piece> pieces);
  // The device address of [fileOffset, fileOffset + bytes) of `file` where one uploaded run holds
  // all of it, else nullptr.
  const uint8_t* find(uint32_t file, uint64_t fileOffset, uint64_t bytes) const;

 private:
  std::vector<Piece> runs_;  // sorted by (file, fileOffset), disjoint
};

// d (logical tensor `logical`'s description) with every region a decode of rows [first, first + n)
// reads pointing into the uploaded copies (each rebased by its span's start, so the formulas index
// it as before), or nullopt when a span was not uploaded as it is in the file: a member this rank
// does not hold, one converted at load, KTransformers' NUMA parts (staged from the file as before).
std::optional<num::DecodeDesc> onUploadedBytes(const Checkpoint& c, uint32_t logical, const num::DecodeDesc& d, uint64_t first, uint64_t n,
                                               const UploadedRanges& uploaded);

}  // namespace ws::load
