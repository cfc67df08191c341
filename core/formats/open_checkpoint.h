// Opens whatever the user points at - a safetensors file, a sharded folder with
// model.safetensors.index.json, a GGUF file or split set, a KTransformers expert folder - and
// builds the catalog with structure recognised.
#pragma once

#include <memory>
#include <string>

#include "core/formats/remote_open.h"
#include "core/model/checkpoint.h"
#include "core/util/error.h"

namespace ws {

Result<std::shared_ptr<const Checkpoint>> openCheckpoint(const std::string& path);

// For validation: files that cannot be read, missing shards, duplicate names across shards and
// inconsistent split sets are recorded in Checkpoint::issues and the rest is opened. Fails only
// when the path itself cannot be used (missing, not a checkpoint, unreadable index).
Result<std::shared_ptr<const Checkpoint>> openCheckpointTolerant(const std::string& path);

// For viewing (inspect, dequant, stats, the GUI): tolerant, so a cut file or a lone part of a
// split set shows what it holds with its problems in Checkpoint::issues; but when no tensor at
// all could be read, that is a failure with the first problem.
Result<std::shared_ptr<const Checkpoint>> openCheckpointPartial(const std::string& path);
// The same, a remote location opened with these options rather than the process-wide ones (the
// GUI's progress and Cancel).
Result<std::shared_ptr<const Checkpoint>> openCheckpointPartial(const std::string& path, const RemoteOptions& remote);

}  // namespace ws
