// The list of tensors a synthetic checkpoint holds, before any byte is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model/dtype.h"
#include "core/model/scheme_table.h"
#include "core/synth/family.h"

namespace ws::synth {

// What bytes a tensor gets: each kind yields valid values of its format (no NaN scales).
enum class Fill { Values, Ones, Fp8Codes, PositiveF32, E4m3Scale, E8m0Scale, Fp4Codes, IntCodes, Bf16Scale, ShapeInts, GgufBlocks };

struct PlannedTensor {
  std::string name;
  const DType* dtype = nullptr;
  std::vector<uint64_t> shape;  // PyTorch order
  Fill fill = Fill::Values;
  std::vector<int64_t> ints;    // ShapeInts payload
  uint64_t bytes() const;
};

struct Plan {
  std::vector<PlannedTensor> tensors;
  nlohmann::json config;        // config.json (safetensors and KT), or GGUF KV as a flat object
};

Plan planSafetensors(const Family& f, Scheme scheme, int64_t numaNodes);
Plan planGguf(const Family& f);

}  // namespace ws::synth
