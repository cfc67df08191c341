// validate --hub: every local file held to the Hub's own record of its repository (WS-H001 to
// WS-H005): size, then the LFS sha256 (weights) or the git blob SHA-1 (small files), hashed on
// all cores. What the Hub lists and the folder lacks, and what the folder holds and the Hub does
// not list, are named too.
#pragma once

#include "core/formats/remote_open.h"
#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val {

void hubRules(const Checkpoint& c, const HubRecord& record, Sink& sink, const ValidateOptions& opt);

// The hf:// location a path inside a Hub cache snapshot is of ("hf://ORG/REPO@COMMIT"); empty
// when the path is not in one.
std::string hubLocationOf(const std::string& path);

}  // namespace ws::val
