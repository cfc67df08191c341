// Reads element i of a plain (non-block) stored tensor as float, for every safetensors dtype we
// can give a real value (complex and FP6 are refused by name).
#pragma once

#include <cstdint>
#include <string>

#include "core/model/dtype.h"
#include "core/numerics/hd.h"

namespace ws::num {

// The 256-entry value table of an 8-bit float type (E4M3, E5M2, their FNUZ forms, E8M0), or
// nullptr for any other type.
const float* byteFloatTable(const DType* d);

class ElementReader {
 public:
  // Returns false (and leaves the reader unusable) for dtypes with no scalar float value.
  bool init(const DType* d);
  float at(const uint8_t* base, uint64_t i) const;
  const DType* dtype() const { return dtype_; }
  ElemKind kind() const { return kind_; }
  // Converts n consecutive elements starting at element `first`.
  void run(const uint8_t* base, uint64_t first, uint64_t n, float* out) const;

 private:
  using Kind = ElemKind;
  Kind kind_ = Kind::None;
  const DType* dtype_ = nullptr;
};

}  // namespace ws::num
