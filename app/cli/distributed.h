// What the commands' --distributed modes share (docs/distributed.md).
#pragma once

#include <memory>

#include "core/dist/communicator.h"

namespace ws::cli {

// Joins the MPI job, or says why not (a build without MPI) and returns null. Call it before the
// checkpoint is opened: a remote one is then mirrored into this rank's own cache.
std::unique_ptr<dist::Communicator> joinOrReport(const char* command);

}  // namespace ws::cli
