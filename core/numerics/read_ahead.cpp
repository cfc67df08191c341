#include "core/numerics/read_ahead.h"

namespace ws::num {

void readAhead(const Checkpoint& c, uint32_t logical) {
  if (c.remote) return;
  for (uint32_t m : c.logical[logical].members) {
    const TensorRecord& t = c.tensors[m];
    if (t.bytes && !t.cut && c.files[t.file].map) c.files[t.file].map->willNeed(t.offset, t.bytes);
  }
}

}  // namespace ws::num
