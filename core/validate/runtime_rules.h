// The compatibility family: what a named runtime's loader refuses (core/validate/runtimes.h).
// Each rule follows that loader's own checks, in its words; the Sink makes a refusal an error when
// validate --runtime names the runtime.
#pragma once

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val {

void runtimeRules(const Checkpoint& c, Sink& sink);

}  // namespace ws::val
