// CPU reference dequantization of GGUF block types, following ggml's scalar dequantize_row_*
// (formats.md 2.6) operation for operation, so results are bit-identical to ggml's to_float.
#pragma once

#include <cstdint>

#include "core/model/dtype.h"

namespace ws::num {

// True when dequantizeGgufBlocks handles this type.
bool ggufBlockTypeSupported(const DType& t);

// Decodes `nblocks` consecutive blocks of type t from src into dst (nblocks * t.blockElems floats).
// Not for types whose rows carry meta bytes (DType::rowMetaBytes): dequantizeGgufRows.
void dequantizeGgufBlocks(const DType& t, const uint8_t* src, uint64_t nblocks, float* dst);
// Decodes `rows` whole rows of `cols` values, each row's meta bytes (if any) then its blocks.
void dequantizeGgufRows(const DType& t, const uint8_t* src, uint64_t rows, uint64_t cols, float* dst);
// Decodes rows [first, first + n) of a tensor of row-interleaved type t (DType::rowInterleave > 1)
// whose bytes start at `base`: any rows, each from its group.
void dequantizeGgufInterleavedRows(const DType& t, const uint8_t* base, uint64_t first, uint64_t n, uint64_t cols, float* dst);

}  // namespace ws::num
