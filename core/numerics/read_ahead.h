// Reading ahead of a scan of a local checkpoint: the kernel is asked to start reading a tensor's
// bytes before its decode needs them, so a cold scan's disk reads overlap the decoding instead
// of each tensor's page faults waiting in turn (docs/benchmarks.md, value scans).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/model/checkpoint.h"

namespace ws::num {

// Every stored member of logical tensor `logical`, advised (MappedFile::willNeed). Nothing for a
// remote checkpoint, whose bytes are fetched (remote_reads.h), or a cut tensor's missing bytes.
void readAhead(const Checkpoint& c, uint32_t logical);
// Only what the scale statistics read of it (scale_sources.h): a pass over the scales alone,
// which advising whole tensors would make read every weight as well.
void readAheadScales(const Checkpoint& c, uint32_t logical);
// How many tensors a pass over the scales alone advises ahead, per worker: their scales are small
// (128 KiB a tensor on the bench checkpoints), so it takes several tensors ahead to keep the disk
// busy while these are counted.
// Cold, on the 10 GiB bench checkpoint: 4, 16 and 64 ahead were alike (docs/benchmarks.md).
constexpr size_t kScaleTensorsAheadPerWorker = 16;

}  // namespace ws::num
