// The stored tensors the scale statistics (scale_stats.h) read for one logical tensor: its scale
// and global-scale members, or a GGUF block-quantized weight whole, whose scales sit inside each
// block. One list for both uses: a remote pass fetches these first (remote_reads.h), a local one
// reads them ahead (read_ahead.h).
#pragma once

#include "core/model/checkpoint.h"

namespace ws::num {

template <class Fn>
void forEachScaleSource(const Checkpoint& c, const LogicalTensor& l, Fn&& fn) {
  if (l.weight < 0) return;
  const TensorRecord& w = c.tensors[uint32_t(l.weight)];
  if (w.dtype->isBlockQuant()) return fn(w);
  for (uint32_t m : l.members)
    if (c.tensors[m].component == Component::Scale || c.tensors[m].component == Component::GlobalScale) fn(c.tensors[m]);
}

}  // namespace ws::num
