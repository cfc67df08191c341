// A diff unit decoded into a row-major [out, in] float matrix by the CPU reference decoders.
#pragma once

#include <cstdint>
#include <vector>

#include "core/diff/diff_match.h"
#include "core/numerics/device_dequant.h"
#include "core/numerics/numerics_mode.h"
#include "core/util/error.h"

namespace ws::diff {

struct Matrix {
  uint64_t rows = 0, cols = 0;  // a vector (norm, bias-like weight) is one row
  std::vector<float> values;
  std::vector<uint8_t> saturated;  // 1 where the stored code is at its format's extreme; empty
                                   // when the scheme has no such notion (saturation.h)
};

// Decodes only the expert (and half) the unit names. Errors name the logical tensor. With a device
// dequantizer (num::deviceDequant), the values come from the GPU; they equal the CPU's bit for bit.
// `numerics` turns them into another arithmetic's values (numerics_mode.h) before anything else.
Result<Matrix> decodeUnit(const Checkpoint& c, const Unit& u, const num::DeviceDequantFn* device = nullptr,
                          num::Numerics numerics = num::Numerics::Reference);

}  // namespace ws::diff
