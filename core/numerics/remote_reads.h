// The tensor bytes a decode of a remote checkpoint reads, fetched before it runs (the mirror holds
// headers only: core/formats/remote_open.h). Nothing happens for a local checkpoint.
#pragma once

#include <cstdint>

#include "core/model/checkpoint.h"
#include "core/numerics/dequant.h"

namespace ws::num {

// For decoding the rows `req` selects (all of them, one expert's, a row range of either): the
// rows' slice of each member laid out by row, the whole member otherwise (row_footprint.h).
// Throws CoreError(Remote) naming the URL, or CoreError as selectRows for a selection out of range.
void fetchForDecode(const Checkpoint& c, const DequantRequest& req);
// One stored tensor, whole.
void fetchTensor(const Checkpoint& c, const TensorRecord& t);
// What the scale statistics read: every scale and global scale, and GGUF block tensors whole
// (their scales sit inside each block).
void fetchScales(const Checkpoint& c);
// Every tensor of the checkpoint (validate --values on a remote checkpoint).
void fetchAll(const Checkpoint& c);

}  // namespace ws::num
