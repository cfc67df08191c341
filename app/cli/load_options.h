// The load command's options, shared by one process's load and the distributed one.
#pragma once

#include "app/cli/command.h"
#include "core/load/loader.h"

namespace ws::cli {

// Placement, skips, defers, derived buffers, readers and staging from the command line, for a
// load of `c` over `epSize` EP ranks (the rank is the caller's). Throws std::invalid_argument
// naming a bad value.
load::LoadOptions loadOptionsOf(const Args& a, const Checkpoint& c, int epSize);

// load --distributed: this process is one MPI rank and one EP rank (docs/distributed.md).
int distributedLoad(const Args& a);

}  // namespace ws::cli
