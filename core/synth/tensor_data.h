// Deterministic bytes for synthetic tensors: valid values of each format, seeded by the name.
#pragma once

#include <cstdint>
#include <vector>

#include "core/synth/plan.h"

namespace ws::synth {

std::vector<uint8_t> tensorBytes(const PlannedTensor& t, uint64_t seed);

}  // namespace ws::synth
