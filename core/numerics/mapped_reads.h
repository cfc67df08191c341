// After a decode that read a checkpoint through its mappings under a MappedReadGuard: were the
// bytes the files'? A file cut short or a disk failing under a long scan (validate --values,
// stats --all, diff) then fails that tensor with an error, where it would have ended the process.
#pragma once

#include "core/io/mapped_read_guard.h"
#include "core/model/checkpoint.h"

namespace ws::num {

// Throws CoreError(Io) naming the file, offset and tensor when the bytes of `t` may not be its
// file's (MappedReadGuard::check). Nothing for a tensor with no local mapping.
void checkMappedReads(const MappedReadGuard& guard, const Checkpoint& c, const TensorRecord& t);
// The same for every stored member of `l`.
void checkMappedReads(const MappedReadGuard& guard, const Checkpoint& c, const LogicalTensor& l);

}  // namespace ws::num
