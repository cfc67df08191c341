// File writers for synthetic checkpoints. Sparse mode writes headers and leaves data as holes.
#pragma once

#include <string>
#include <vector>

#include "core/synth/plan.h"

namespace ws::synth {

// Writes one safetensors file holding `tensors` (in order); returns data bytes.
uint64_t writeSafetensorsFile(const std::string& path, const std::vector<const PlannedTensor*>& tensors, bool sparse, uint64_t seed);

// Writes one GGUF v3 file with the plan's KV pairs (plan.config) and tensors.
uint64_t writeGgufFile(const std::string& path, const Plan& plan, bool sparse, uint64_t seed);

}  // namespace ws::synth
