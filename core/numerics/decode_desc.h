// A plain description of how to decode one logical tensor - which bytes, read how, with which
// parameters - filled by the CPU decoders themselves (RowDecoder::describe) so the GPU kernels
// never re-derive a layout, and evaluated element by element on the device by the formulas in
// kernels/decode_element.cuh, which mirror the CPU loops operation for operation.
#pragma once

#include <cstdint>

#include "core/numerics/hd.h"

namespace ws::num {

struct Region {
  const uint8_t* data = nullptr;  // host pointer (into the mapping) until the kernel side rebases it
  uint64_t bytes = 0;
  uint64_t count = 0;             // elements, for scale-like regions
  ElemKind kind = ElemKind::None;
};

enum class DescKind : uint8_t { Plain, GgufBlocks, Fp8Scaled, Nvfp4, MxfpBlocks, PackedInt, Kt, GptqAwq, Bnb4, Int8Rows };

constexpr int kMaxNuma = 8;

struct DecodeDesc {
  DescKind kind = DescKind::Plain;
  uint64_t rows = 0, cols = 0;
  Region w;
  // GgufBlocks; rowMeta: bytes each row carries before its blocks (ik_llama.cpp's row scales);
  // rowInterleave: rows stored in interleaved groups of this many (DType::rowInterleave)
  int ggmlId = -1;
  uint32_t blockElems = 1, blockBytes = 1, rowMeta = 0, rowInterleave = 1;
  // Fp8Scaled (mode 0 tensor, 1 channel, 2 block) / Nvfp4 (mode 0 global multiplies, 1 divides)
  // / MxfpBlocks / PackedInt: scales
  int mode = 0;
  uint64_t M = 1, bm = 128, bn = 128, gm = 1, gn = 1;
  Region s, g;  // scales; global scale (NVFP4)
  // PackedInt: 0 compressed-tensors, 1 RAWINT4, 2 MLX
  int intKind = 0;
  uint32_t bits = 4, wordBytes = 4;
  uint64_t packedCols = 0, groups = 1, group = 1;
  Region zp, gidx;
  bool zpPacked = false;
  // GptqAwq (mode 0 GPTQ v1: each stored zero one below the real one; 1 GPTQ v2, zeros as stored;
  // 2 AWQ GEMM; 3 AWQ GEMV): w the qweight words (packedCols words a row of qweight), zp the qzeros
  // words (zpRowWords a row), s the scales [groups, rows] ([rows, 8 zpRowWords] in mode 3), gidx
  // GPTQ's g_idx.
  uint64_t zpRowWords = 0;
  // Bnb4 (mode 0 NF4, 1 FP4): `group` values an absmax; s the absmax (F32, or U8 codes when nested),
  // g the nested absmax (one per `bn` absmax codes), nestedMap their code map, `offset` added after.
  Region nestedMap;
  float offset = 0.0f;
  // The dtype the writer's own dequantization returns its values in (the GPTQ and AWQ scales', the
  // bitsandbytes quant state's): each value is rounded to it, as the writer's arithmetic does.
  ElemKind roundTo = ElemKind::F32;
  // The weight is not laid out in whole logical rows (GPTQ, AWQ and bitsandbytes pack across them):
  // the device copies it whole rather than the selected rows' bytes.
  bool wWhole = false;
  // Kt
  uint32_t parts = 0;
  Region ktW[kMaxNuma], ktS[kMaxNuma];
  uint64_t rowsPerPart = 1;
  bool int4 = false;
};

}  // namespace ws::num
