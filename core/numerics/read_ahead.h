// Reading ahead of a scan of a local checkpoint: the kernel is asked to start reading a tensor's
// bytes before its decode needs them, so a cold scan's disk reads overlap the decoding instead
// of each tensor's page faults waiting in turn (docs/benchmarks.md, value scans).
#pragma once

#include <cstdint>

#include "core/model/checkpoint.h"

namespace ws::num {

// Every stored member of logical tensor `logical`, advised (MappedFile::willNeed). Nothing for a
// remote checkpoint, whose bytes are fetched (remote_reads.h), or a cut tensor's missing bytes.
void readAhead(const Checkpoint& c, uint32_t logical);

}  // namespace ws::num
