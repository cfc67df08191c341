// Which stored bytes a decode of some rows reads, worked out from the decoder's own description of
// its layout (DecodeDesc) without reading any of them. A remote checkpoint fetches exactly these
// before a preview tile, `dequant --rows` or one expert's decode (remote_reads.h), instead of the
// whole tensor. A member that is not laid out row by row - a per-tensor or global scale, packed
// zero points, g_idx, KTransformers' NUMA parts, a bias the decoder never reads - is named whole.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/numerics/dequant.h"

namespace ws::num {

struct StoredSpan {
  uint32_t tensor = 0;  // index in Checkpoint::tensors
  uint64_t offset = 0;  // absolute, in that tensor's file
  uint64_t bytes = 0;
};

// One or more spans for every member of req's logical tensor that holds bytes. Throws CoreError
// as makeDecoder and selectRows do (an expert or rows out of range, inconsistent companions).
std::vector<StoredSpan> rowFootprint(const Checkpoint& c, const DequantRequest& req);
// The same from the layout decoder of req.logical (makeLayoutDecoder) the caller already holds.
std::vector<StoredSpan> rowFootprint(const Checkpoint& c, const RowDecoder& layout, const DequantRequest& req);

// The bytes of region r of d (one of its members: w, s, g, zp, gidx, nestedMap, a NUMA part) a
// decode of rows [first, first + n) reads - its piece of the same footprint, or all of it where
// the decode does not read it by rows: what the device copies of each region for a row range.
struct ByteSpan {
  uint64_t from = 0, bytes = 0;
};
ByteSpan regionRowSpan(const DecodeDesc& d, const Region& r, uint64_t first, uint64_t n);

}  // namespace ws::num
