// The GGUF block types as runs of 16 values, for the GPU: run k (0 .. elems / 16 - 1) of a block
// is its values 16k .. 16k + 15, each made by the same operations, in the same order, as
// gguf_block_formulas.h's block formula (ggml's dequantize_row_*) makes it, so the bits are the
// same. The device's 16-values-a-thread body (kernel_threads.h, Body::GgufRuns) decodes one run a
// thread into registers, with no block-sized array; decodeGgufBlock, which the block kernel and
// the CPU's emulation of the kernels call, makes these types' blocks from their runs too. The CPU
// reference decoders keep the block formulas: there a 16-value loop of byte codes vectorizes at
// half the width of the formulas' 32-value loops (Q5_K decoded 0.34x as fast through runs, Q8_0
// 0.33x; bench/run_dequant_bench.py's types, this machine). tst_decode_desc holds every run
// formula to the block formula on every fixture, and to ggml's own output.
#pragma once

#include <cstdint>

#include "core/numerics/gguf_block_formulas.h"

namespace ws::num::blocks {

template <class Y>
WS_HD void q4_0_run(const uint8_t* __restrict b, int k, Y y) {  // k 0: low nibbles, 1: high
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = float(int((qs[j] >> (4 * k)) & 0x0F) - 8) * d;
}

template <class Y>
WS_HD void q4_1_run(const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b), m = f16(b + 2);
  const uint8_t* qs = b + 4;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = float((qs[j] >> (4 * k)) & 0x0F) * d + m;
}

// Value 16k + j's fifth bit is qh bit 16k + j (ggml: (qh >> j) << 4 and qh >> (j + 12), masked).
template <class Y>
WS_HD void q5_0_run(const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b);
  const uint32_t qh = uint32_t(b[2]) | (uint32_t(b[3]) << 8) | (uint32_t(b[4]) << 16) | (uint32_t(b[5]) << 24);
  const uint8_t* qs = b + 6;
  WS_UNROLL for (int j = 0; j < 16; ++j) {
    const uint8_t xh = uint8_t(((qh >> (16 * k + j)) << 4) & 0x10);
    y[j] = float(int(((qs[j] >> (4 * k)) & 0x0F) | xh) - 16) * d;
  }
}

template <class Y>
WS_HD void q5_1_run(const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b), m = f16(b + 2);
  const uint32_t qh = uint32_t(b[4]) | (uint32_t(b[5]) << 8) | (uint32_t(b[6]) << 16) | (uint32_t(b[7]) << 24);
  const uint8_t* qs = b + 8;
  WS_UNROLL for (int j = 0; j < 16; ++j) {
    const uint8_t xh = uint8_t(((qh >> (16 * k + j)) << 4) & 0x10);
    y[j] = float(int(((qs[j] >> (4 * k)) & 0x0F) | xh)) * d + m;
  }
}

template <class Y>
WS_HD void q8_0_run(const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b);
  const int8_t* qs = reinterpret_cast<const int8_t*>(b + 2) + 16 * k;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = float(qs[j]) * d;
}

template <class Y>
WS_HD void q8_1_run(const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b);
  const int8_t* qs = reinterpret_cast<const int8_t*>(b + 4) + 16 * k;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = float(qs[j]) * d;
}

// ggml walks two halves of 128 values (32 code bytes each), four 2-bit planes of each, two runs of
// 16 per plane: run k is half k / 8, plane (k % 8) / 2, bytes 16 (k % 2) .. +15, scale byte k.
template <class Y>
WS_HD void q2_k_run(const uint8_t* __restrict b, int k, Y y) {
  const uint8_t* q = b + 16 + 32 * (k / 8) + 16 * (k % 2);
  const int shift = 2 * ((k % 8) / 2);
  const float d = f16(b + 80), dmin = f16(b + 82);
  const uint8_t sc = b[k];
  const float dl = d * float(sc & 0xF), ml = dmin * float(sc >> 4);
  WS_UNROLL for (int l = 0; l < 16; ++l) y[l] = dl * float(int8_t((q[l] >> shift) & 3)) - ml;
}

// Run k has scale k: 6 bits, the low 4 from byte k % 8 of the first 8 scale bytes (low nibble for
// k < 8, high after), the high 2 from byte k % 4 of the last 4, bits 2 (k / 4) - the same 6 bits
// ggml's kmask shuffle puts at scales[k]. Codes as ggml's: ((q >> shift) & 3) - (hm bit ? 0 : 4),
// half k / 8, plane (k % 8) / 2, bytes 16 (k % 2) .. +15; the hm bit is 4 (k / 8) + plane.
template <class Y>
WS_HD void q3_k_run(const uint8_t* __restrict b, int k, Y y) {
  const uint8_t* hm = b + 16 * (k % 2);
  const uint8_t* q = b + 32 + 32 * (k / 8) + 16 * (k % 2);
  const int plane = (k % 8) / 2, hbit = 4 * (k / 8) + plane;
  const int scale = ((b[96 + k % 8] >> (4 * (k / 8))) & 0xF) | (((b[104 + k % 4] >> (2 * (k / 4))) & 3) << 4);
  const float dl = f16(b + 108) * float(scale - 32);
  WS_UNROLL for (int l = 0; l < 16; ++l) y[l] = dl * float(int(((q[l] >> (2 * plane)) & 3) - 4 + 4 * ((hm[l] >> hbit) & 1)));
}

// Run k: sub-block k / 2 (its scale and min, and qh bit k / 2), code bytes 32 (k / 4) + 16 (k % 2)
// .. +15, low nibbles for an even sub-block and high for an odd one.
template <class Y>
WS_HD void q5_k_run(const uint8_t* __restrict b, int k, Y y) {
  const int sub = k / 2;
  uint8_t sc, m;
  scaleMinK4(sub, b + 4, sc, m);
  const float d1 = f16(b) * float(sc), m1 = f16(b + 2) * float(m);
  const uint8_t* qh = b + 16 + 16 * (k % 2);
  const uint8_t* ql = b + 48 + 32 * (k / 4) + 16 * (k % 2);
  const int shift = 4 * (sub % 2);
  WS_UNROLL for (int l = 0; l < 16; ++l) y[l] = d1 * float(((ql[l] >> shift) & 0xF) + (((qh[l] >> sub) & 1) ? 16 : 0)) - m1;
}

// ggml makes 128 values at a time as four quarters of 32 from the same 64 low and 32 high bytes:
// run k is half k / 8, quarter (k % 8) / 2 (low bytes 0-31 or 32-63 by its parity, low or high
// nibble by its half, high bits 2 x quarter), bytes 16 (k % 2) .. +15, scale k. ggml computes
// d * sc * q left to right, (d * sc) * q.
template <class Y>
WS_HD void q6_k_run(const uint8_t* __restrict b, int k, Y y) {
  const int quarter = (k % 8) / 2, l0 = 16 * (k % 2);
  const uint8_t* ql = b + 64 * (k / 8) + 32 * (quarter % 2) + l0;
  const uint8_t* qh = b + 128 + 32 * (k / 8) + l0;
  const float dl = f16(b + 208) * float(reinterpret_cast<const int8_t*>(b + 192)[k]);
  const int lowShift = 4 * (quarter / 2), highShift = 2 * quarter;
  WS_UNROLL for (int l = 0; l < 16; ++l) y[l] = dl * float(int(((ql[l] >> lowShift) & 0xF) | (((qh[l] >> highShift) & 3) << 4)) - 32);
}

template <class Y>
WS_HD void q8_k_run(const uint8_t* __restrict b, int k, Y y) {
  const float d = hdBitsToFloat(uint32_t(b[0]) | (uint32_t(b[1]) << 8) | (uint32_t(b[2]) << 16) | (uint32_t(b[3]) << 24));
  const int8_t* qs = reinterpret_cast<const int8_t*>(b + 4) + 16 * k;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = d * float(qs[j]);
}

template <class Y>
WS_HD void iq4_nl_run(const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = d * float(hdIq4nl((qs[j] >> (4 * k)) & 0xF));
}

// Run k: sub-block k / 2's 6-bit scale, its 16 code bytes, low nibbles for even k, high for odd.
template <class Y>
WS_HD void iq4_xs_run(const uint8_t* __restrict b, int k, Y y) {
  const int ib = k / 2;
  const int ls = ((b[4 + ib / 2] >> 4 * (ib % 2)) & 0xF) | (((u16(b + 2) >> 2 * ib) & 3) << 4);
  const float dl = f16(b) * float(ls - 32);
  const uint8_t* qs = b + 8 + 16 * ib;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq4nl((qs[j] >> (4 * (k % 2))) & 0xF));
}

template <class Y>
WS_HD void mxfp4_run(const uint8_t* __restrict b, int k, Y y) {
  const float d = hdGgmlE8m0Half(b[0]);
  const uint8_t* qs = b + 1;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = float(hdMxfp4Doubled((qs[j] >> (4 * k)) & 0x0F)) * d;
}

// Run k is sub-block k: its UE4M3 scale, 8 code bytes, low nibbles first then high.
template <class Y>
WS_HD void nvfp4_run(const uint8_t* __restrict b, int k, Y y) {
  const float d = hdGgmlUe4m3Half(b[k]);
  const uint8_t* qs = b + 4 + 8 * k;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = float(hdMxfp4Doubled((qs[j % 8] >> (4 * (j / 8))) & 0x0F)) * d;
}

// The types written as runs, one row each: ggml type id, formula, values and bytes a block
// (ggml-common.h's block_* sizes). Q4_K has a body of its own (kernel_threads.h, 16-byte loads).
#define WS_GGUF_RUN_TYPES(X)                                                                     \
  X(2, q4_0, 32, 18) X(3, q4_1, 32, 20) X(6, q5_0, 32, 22) X(7, q5_1, 32, 24) X(8, q8_0, 32, 34) \
  X(9, q8_1, 32, 36) X(10, q2_k, 256, 84) X(11, q3_k, 256, 110) X(13, q5_k, 256, 176)            \
  X(14, q6_k, 256, 210) X(15, q8_k, 256, 292) X(20, iq4_nl, 32, 18) X(23, iq4_xs, 256, 136)      \
  X(39, mxfp4, 32, 17) X(40, nvfp4, 64, 36)

// Each row as a type the kernel body is compiled for, so that runs a block and block bytes are
// constants (a run's block is then a shift or a multiply, never a 64-bit division).
#define WS_GGUF_RUN_TYPE(id, fn, elems, bytes)                               \
  struct fn##_runs {                                                         \
    static constexpr uint32_t kRuns = (elems) / 16, kBytes = (bytes);         \
    template <class Y>                                                       \
    WS_HD_MEMBER static void run(const uint8_t* b, int k, Y y) {             \
      fn##_run(b, k, y);                                                     \
    }                                                                        \
  };
WS_GGUF_RUN_TYPES(WS_GGUF_RUN_TYPE)
#undef WS_GGUF_RUN_TYPE

// Type `id`'s block at b into y from its runs; false when the type is not written as runs.
template <class Y>
WS_HD_FN bool blockFromRuns(int id, const uint8_t* b, Y y) {
  switch (id) {
#define WS_GGUF_RUN_BLOCK(id, fn, elems, bytes)                                        \
  case id:                                                                             \
    for (int k = 0; k < int(fn##_runs::kRuns); ++k) fn##_runs::run(b, k, y + 16 * k); \
    return true;
    WS_GGUF_RUN_TYPES(WS_GGUF_RUN_BLOCK)
#undef WS_GGUF_RUN_BLOCK
    default: return false;
  }
}

}  // namespace ws::num::blocks
