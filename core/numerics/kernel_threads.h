// What one GPU thread of each dequantization kernel does, and the launch geometry, written once:
// kernels/device_numerics.cu's __global__ kernels only read blockIdx, threadIdx and gridDim and
// call these bodies, and tests run the same bodies for every thread of the same grid on the CPU
// (tst_decode_desc), so indexing, grid-stride loops, row offsets and launch geometry are proved
// without a device; the GPU run then only has to show the device executes the same code.
#pragma once

#include <cstdint>

#include "core/numerics/decode_element.h"

namespace ws::num {

// A 1-D launch: `threads` per block, enough blocks to give each element a thread, at most 65535
// (past that each thread strides over several). No elements: no blocks (nothing is launched).
struct LaunchGrid {
  uint32_t blocks = 0, threads = 256;
};
WS_HD LaunchGrid launchGrid(uint64_t n) {
  LaunchGrid g;
  const uint64_t want = (n + g.threads - 1) / g.threads;
  g.blocks = uint32_t(want < 65535 ? want : 65535);
  return g;
}

// Which thread is running: its block and thread index and the grid's size.
struct ThreadIndex {
  uint64_t block, thread, blocks, threads;
  WS_HD_FN uint64_t first() const { return block * threads + thread; }
  WS_HD_FN uint64_t stride() const { return blocks * threads; }
};

// Rows [firstRow, firstRow + rows) of an element-wise description into out[(r - firstRow) * cols + j].
WS_HD void elementsThread(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, float* out, ThreadIndex t) {
  const uint64_t n = rows * d.cols;
  for (uint64_t i = t.first(); i < n; i += t.stride()) out[i] = decodeElement(d, firstRow + i / d.cols, i % d.cols);
}

// GGUF blocks [firstBlock, firstBlock + nblocks) into out[(b - firstBlock) * blockElems ...].
WS_HD void blocksThread(const DecodeDesc& d, uint64_t firstBlock, uint64_t nblocks, float* out, ThreadIndex t) {
  for (uint64_t i = t.first(); i < nblocks; i += t.stride()) decodeGgufBlock(d, firstBlock + i, out + i * d.blockElems);
}

// Rows [firstRow, firstRow + rows) as BF16, rounded to nearest even (hdToBf16Rne), for the
// preview and the load's derived buffers.
WS_HD void elementsBf16Thread(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, uint16_t* out, ThreadIndex t) {
  const uint64_t n = rows * d.cols;
  for (uint64_t i = t.first(); i < n; i += t.stride()) out[i] = hdToBf16Rne(decodeElement(d, firstRow + i / d.cols, i % d.cols));
}

WS_HD void blocksBf16Thread(const DecodeDesc& d, uint64_t firstBlock, uint64_t nblocks, uint16_t* out, ThreadIndex t) {
  float y[256];
  for (uint64_t i = t.first(); i < nblocks; i += t.stride()) {
    decodeGgufBlock(d, firstBlock + i, y);
    for (uint32_t k = 0; k < d.blockElems; ++k) out[i * d.blockElems + k] = hdToBf16Rne(y[k]);
  }
}

// FP8 with a block scale grid (DeepSeek-V3, Kimi-K2 and kin), written for bandwidth: a thread takes
// 16 consecutive elements of a row - one 16-byte load of codes, one scale (16 elements never cross a
// scale block when its width is a multiple of 16), row and column from one division, 16 outputs
// stored as whole 16-byte words - instead of one element, four divisions and a byte load each.
// Out is float (F32) or uint16_t (BF16, rounded to nearest even). Needs fp8BlockVectorizable().
WS_HD bool fp8BlockVectorizable(const DecodeDesc& d) {
  return d.kind == DescKind::Fp8Scaled && d.mode == 2 && d.cols % 16 == 0 && d.bn % 16 == 0 &&
         (d.w.kind == ElemKind::E4M3 || d.w.kind == ElemKind::E5M2 || d.w.kind == ElemKind::E4M3Fnuz || d.w.kind == ElemKind::E5M2Fnuz);
}

// Unrolled on the device, so the 16 codes and outputs stay in registers (an indexed array would
// live in local memory); the CPU compiler unrolls as it likes - the arithmetic is the same.
#if defined(__CUDACC__)
#define WS_UNROLL _Pragma("unroll")
#else
#define WS_UNROLL
#endif

WS_HD float hdFp8Code(ElemKind k, uint32_t x) {
  switch (k) {
    case ElemKind::E4M3: return hdE4m3ToFloat(uint8_t(x));
    case ElemKind::E5M2: return hdE5m2ToFloat(uint8_t(x));
    case ElemKind::E4M3Fnuz: return hdE4m3fnuzToFloat(uint8_t(x));
    default: return hdE5m2fnuzToFloat(uint8_t(x));
  }
}

// One output value as the low bits of a 32-bit word: F32 whole, BF16 rounded to nearest even.
WS_HD uint32_t hdOutBits(float v, float) { return hdFloatToBits(v); }
WS_HD uint32_t hdOutBits(float v, uint16_t) { return hdToBf16Rne(v); }

// `words` 32-bit words from p / to dst, as 16-byte loads and stores on the device (the rows of a
// described region, and every output run, are 16-byte aligned there).
template <int words>
WS_HD void loadWords(const uint8_t* p, uint32_t* w) {
#if defined(__CUDA_ARCH__)
  WS_UNROLL for (int q = 0; q < words / 4; ++q) {
    const uint4 v = reinterpret_cast<const uint4*>(p)[q];
    w[4 * q] = v.x, w[4 * q + 1] = v.y, w[4 * q + 2] = v.z, w[4 * q + 3] = v.w;
  }
#else
  memcpy(w, p, 4 * words);
#endif
}

template <int words>
WS_HD void storeWords(void* dst, const uint32_t* w) {
#if defined(__CUDA_ARCH__)
  WS_UNROLL for (int q = 0; q < words / 4; ++q) reinterpret_cast<uint4*>(dst)[q] = make_uint4(w[4 * q], w[4 * q + 1], w[4 * q + 2], w[4 * q + 3]);
#else
  memcpy(dst, w, 4 * words);
#endif
}

template <class Out>
WS_HD void fp8BlockVecThread(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, ThreadIndex t) {
  constexpr int perWord = int(4 / sizeof(Out)), outWords = 16 / perWord;
  const uint64_t runsPerRow = d.cols / 16, n = rows * runsPerRow;
  for (uint64_t i = t.first(); i < n; i += t.stride()) {
    const uint64_t r = firstRow + i / runsPerRow, j = (i % runsPerRow) * 16;
    const uint64_t b = r / d.M, row = r % d.M;
    const float s = scaleAt(d.s, (b * d.gm + row / d.bm) * d.gn + j / d.bn);
    uint32_t codes[4], o[outWords];
    loadWords<4>(d.w.data + r * d.cols + j, codes);
    WS_UNROLL for (int w = 0; w < outWords; ++w) o[w] = 0;
    WS_UNROLL for (int k = 0; k < 16; ++k) {
      const uint32_t bits = hdOutBits(hdFp8Code(d.w.kind, (codes[k >> 2] >> ((k & 3) * 8)) & 0xFF) * s, Out{});
      o[k / perWord] |= bits << ((k % perWord) * 8 * int(sizeof(Out)));
    }
    storeWords<outWords>(out + i * 16, o);
  }
}

// The transposed twin: `mats` row-major [rows, cols] matrices of `elemBytes`-byte elements, each
// written as [cols, rows]. One thread per destination element, so the stores are coalesced.
WS_HD void transposeThread(const uint8_t* src, uint8_t* dst, uint64_t mats, uint64_t rows, uint64_t cols, uint32_t elemBytes, ThreadIndex t) {
  const uint64_t per = rows * cols, n = mats * per;
  for (uint64_t i = t.first(); i < n; i += t.stride()) {
    const uint64_t m = i / per, k = i % per;
    const uint64_t c = k / rows, r = k % rows;  // destination [c, r] of matrix m
    const uint8_t* from = src + (m * per + r * cols + c) * elemBytes;
    uint8_t* to = dst + i * elemBytes;
    for (uint32_t b = 0; b < elemBytes; ++b) to[b] = from[b];
  }
}

// Runs a kernel body for every thread of its grid on the CPU, as the GPU would (in block and thread
// order; every body writes disjoint elements, so the order does not matter there either): what the
// host backend builds derived buffers with, and what the tests prove the geometry by.
template <class Body>
void emulateGrid(LaunchGrid g, Body body) {
  for (uint64_t b = 0; b < g.blocks; ++b)
    for (uint64_t t = 0; t < g.threads; ++t) body(ThreadIndex{b, t, g.blocks, g.threads});
}

}  // namespace ws::num
