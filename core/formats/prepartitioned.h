// Checkpoints saved already split per rank: vLLM's sharded state (ShardedStateLoader writes
// model-rank-R-part-P.safetensors, one set of parts per tensor-parallel rank, each rank's own
// shard of every tensor under the same names), which the seed runtime loads as prepartitioned_tp.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"

namespace ws {

// The files of each rank (parts in order) when every file is named NAME-rank-R-part-P.safetensors;
// nullopt otherwise.
std::optional<std::map<int, std::vector<std::string>>> vllmShardedStateFiles(const std::vector<std::string>& files);

// Reads the headers of every rank's files and compares each rank's tensors (names, dtypes,
// shapes) with rank 0's, which the catalog `c` already holds: fills c.prepartitioned and reports
// each disagreement (a missing rank, a tensor absent, extra or different) as InconsistentRanks.
void describeRanks(Checkpoint& c, const std::map<int, std::vector<std::string>>& ranks, const std::function<void(Error)>& report);

}  // namespace ws
