// The tensor bytes a decode of a remote checkpoint reads, fetched before it runs (the mirror holds
// headers only: core/formats/remote_open.h). Nothing happens for a local checkpoint.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/numerics/dequant.h"

namespace ws::num {

// For decoding the rows `req` selects (all of them, one expert's, a row range of either): the
// rows' slice of each member laid out by row, the whole member otherwise (row_footprint.h).
// Throws CoreError(Remote) naming the URL, or CoreError as selectRows for a selection out of range.
void fetchForDecode(const Checkpoint& c, const DequantRequest& req);
// The same from the layout decoder of req.logical the caller already holds (a preview tile's).
void fetchForDecode(const Checkpoint& c, const RowDecoder& layout, const DequantRequest& req);
// One stored tensor, whole.
void fetchTensor(const Checkpoint& c, const TensorRecord& t);
// These stored tensors, whole, as one batch of requests.
void fetchTensors(const Checkpoint& c, const std::vector<const TensorRecord*>& tensors);
// What the scale statistics of the logical tensors [range.first, range.second) read: their scales
// and global scales, and GGUF block tensors whole (their scales sit inside each block).
void fetchScales(const Checkpoint& c, std::pair<size_t, size_t> range);
// Every member of these logical tensors, whole, as one batch of requests (validate --values: the
// weights of this process's share).
void fetchWhole(const Checkpoint& c, const std::vector<uint32_t>& logical);

}  // namespace ws::num
