#include "core/numerics/read_ahead.h"

#include "core/numerics/scale_sources.h"

namespace ws::num {

namespace {

void advise(const Checkpoint& c, const TensorRecord& t) {
  if (t.bytes && !t.cut && c.files[t.file].map) c.files[t.file].map->willNeed(t.offset, t.bytes);
}

}  // namespace

void readAhead(const Checkpoint& c, uint32_t logical) {
  if (c.remote) return;
  for (uint32_t m : c.logical[logical].members) advise(c, c.tensors[m]);
}

void readAheadScales(const Checkpoint& c, uint32_t logical) {
  if (c.remote) return;
  forEachScaleSource(c, c.logical[logical], [&](const TensorRecord& t) { advise(c, t); });
}

}  // namespace ws::num
