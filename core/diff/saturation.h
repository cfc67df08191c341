// Saturated codes: stored codes at the format's extreme (FP8 at +-448 / +-57344, E2M1 at +-6,
// integer codes at their first or last value, GGUF Q8_0 at +-127). Many such codes mean the
// quantizer clipped: the scale was too small for the block.
#pragma once

#include <cstdint>
#include <optional>

#include "core/numerics/decode_desc.h"

namespace ws::diff {

// Whether element (r, j) of the described tensor holds an extreme code; nullopt when the scheme
// has no such notion here (plain floats, K-quants and other GGUF block types).
std::optional<bool> codeAtExtreme(const num::DecodeDesc& d, uint64_t r, uint64_t j);

}  // namespace ws::diff
