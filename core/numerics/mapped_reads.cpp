#include "core/numerics/mapped_reads.h"

namespace ws::num {

void checkMappedReads(const MappedReadGuard& guard, const Checkpoint& c, const TensorRecord& t) {
  if (const auto& map = c.files[t.file].map; map && t.bytes && !t.cut) guard.check(*map, t.offset, t.bytes, t.name);
}

void checkMappedReads(const MappedReadGuard& guard, const Checkpoint& c, const LogicalTensor& l) {
  for (uint32_t m : l.members) checkMappedReads(guard, c, c.tensors[m]);
}

}  // namespace ws::num
