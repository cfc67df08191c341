// The tensor bytes a decode of a remote checkpoint reads, fetched before it runs (the mirror holds
// headers only: core/formats/remote_open.h). Nothing happens for a local checkpoint.
#pragma once

#include <cstdint>

#include "core/model/checkpoint.h"

namespace ws::num {

// For decoding `logical` whole, or only expert `expert` of a stacked or fused [E, ...] tensor:
// each member's slice of that expert where the member's leading dimension is the expert count, the
// whole member otherwise. Throws CoreError(Remote) naming the URL.
void fetchForDecode(const Checkpoint& c, uint32_t logical, int64_t expert = -1);
// One stored tensor, whole.
void fetchTensor(const Checkpoint& c, const TensorRecord& t);
// What the scale statistics read: every scale and global scale, and GGUF block tensors whole
// (their scales sit inside each block).
void fetchScales(const Checkpoint& c);
// Every tensor of the checkpoint (validate --values on a remote checkpoint).
void fetchAll(const Checkpoint& c);

}  // namespace ws::num
