// The GGUF block types as runs of 16 values, for the GPU: run k (0 .. elems / 16 - 1) of a block
// is its values 16k .. 16k + 15, each made by the same operations, in the same order, as
// gguf_block_formulas.h's block formula (ggml's dequantize_row_*) makes it, so the bits are the
// same. The device's 16-values-a-thread body (kernel_threads.h, Body::GgufRuns) decodes one run a
// thread into registers, with no block-sized array; decodeGgufBlock, which the block kernel and
// the CPU's emulation of the kernels call, makes these types' blocks from their runs too. The CPU
// reference decoders keep the block formulas: there a 16-value loop of byte codes vectorizes at
// half the width of the formulas' 32-value loops (Q5_K decoded 0.34x as fast through runs, Q8_0
// 0.33x; bench/run_dequant_bench.py's types, this machine). tst_decode_desc holds every run
// formula to the block formula on every fixture and on random blocks, and to ggml's own output.
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

// Q4_K: run k is half of sub-block k / 2 (q4kSubScale), code bytes 32 (k / 4) + 16 (k % 2) .. +15.
// The device decodes Q4_K by its own body (kernel_threads.h, 16-byte code loads); the block kernel
// and the CPU's emulation use this.
template <class Y>
WS_HD void q4_k_run(const uint8_t* __restrict b, int k, Y y) {
  float scale, min;
  q4kSubScale(b, k / 2, scale, min);
  const uint8_t* q = b + 16 + 32 * (k / 4) + 16 * (k % 2);
  const int shift = 4 * ((k / 2) % 2);
  WS_UNROLL for (int l = 0; l < 16; ++l) y[l] = scale * float((q[l] >> shift) & 0xF) - min;
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

// Q6_0: run k is the low (k 0) or high (k 1) nibbles, their 5th and 6th bits from qh.
template <class Y>
WS_HD void q6_0_run(const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b);
  const uint8_t* qh = b + 2;
  const uint8_t* qs = b + 10;
  WS_UNROLL for (int j = 0; j < 16; ++j) {
    const uint8_t h = uint8_t(qh[j % 8] >> 4 * (j / 8));
    y[j] = float(int(((qs[j] >> (4 * k)) & 0x0F) | ((h << (4 - 2 * k)) & 0x30)) - 32) * d;
  }
}

// TQ1_0: 160 values of five trits a byte over qs[0..31] (run k < 10: power k / 2, bytes 16 (k % 2)
// .. +15), 80 over qs[32..47] (runs 10-14: power k - 10), 16 over qh[0..3] (run 15: power l / 4).
template <class Y>
WS_HD void tq1_0_run(const uint8_t* __restrict b, int k, Y y) {
  static const uint8_t pow3[6] = {1, 3, 9, 27, 81, 243};
  const float d = f16(b + 52);
  if (k < 10) {
    const uint8_t* qs = b + 16 * (k % 2);
    WS_UNROLL for (int l = 0; l < 16; ++l) y[l] = tq1Trit(uint8_t(qs[l] * pow3[k / 2])) * d;
  } else if (k < 15) {
    WS_UNROLL for (int l = 0; l < 16; ++l) y[l] = tq1Trit(uint8_t(b[32 + l] * pow3[k - 10])) * d;
  } else {
    WS_UNROLL for (int l = 0; l < 16; ++l) y[l] = tq1Trit(uint8_t(b[48 + l % 4] * pow3[l / 4])) * d;
  }
}

// TQ2_0: run k is half k / 8 (32 bytes each), plane (k % 8) / 2, bytes 16 (k % 2) .. +15.
template <class Y>
WS_HD void tq2_0_run(const uint8_t* __restrict b, int k, Y y) {
  const uint8_t* qs = b + 32 * (k / 8) + 16 * (k % 2);
  const int shift = 2 * ((k % 8) / 2);
  const float d = f16(b + 64);
  WS_UNROLL for (int m = 0; m < 16; ++m) y[m] = float(int8_t((qs[m] >> shift) & 3) - 1) * d;
}

template <class Y>
WS_HD void q1_0_run(const uint8_t* __restrict b, int k, Y y) {  // sign bits 16k .. 16k + 15
  const float d = f16(b);
  const uint8_t* qs = b + 2 + 2 * k;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = float(int((qs[j >> 3] >> (j & 7)) & 1) * 2 - 1) * d;
}

template <class Y>
WS_HD void q2_0_run(const uint8_t* __restrict b, int k, Y y) {  // 2-bit codes 16k .. 16k + 15
  const float d = f16(b);
  const uint8_t* qs = b + 2 + 4 * k;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = float(int((qs[j >> 2] >> ((j & 3) * 2)) & 3) - 1) * d;
}

// The I-quant codebook types: ggml makes each 32 values (sub-block k / 2) from four grid points of
// 8; run k is points 2 (k % 2) and 2 (k % 2) + 1 of it, by the same operations.
template <class Y>
WS_HD void iq2_xxs_run(const uint8_t* __restrict b, int k, Y y) {
  const uint8_t* q = b + 2 + 8 * (k / 2);
  const uint32_t aux1 = u32(q + 4);
  const float db = f16(b) * (0.5f + float(aux1 >> 28)) * 0.25f;
  WS_UNROLL for (int p = 0; p < 2; ++p) {
    const int l = 2 * (k % 2) + p;
    const uint64_t grid = grids::hdIq2xxsGrid(q[l]);
    const uint32_t signs = ksigns((aux1 >> 7 * l) & 127);
    WS_UNROLL for (int j = 0; j < 8; ++j) y[8 * p + j] = db * float(gridByte(grid, j)) * signOf(signs, j);
  }
}

// IQ2_XS: points 0-1 of a sub-block take the low scale nibble, 2-3 the high.
template <class Y>
WS_HD void iq2_xs_run(const uint8_t* __restrict b, int k, Y y) {
  const int ib32 = k / 2;
  const float dl = f16(b) * (0.5f + float((b[66 + ib32] >> (4 * (k % 2))) & 0xf)) * 0.25f;
  WS_UNROLL for (int p = 0; p < 2; ++p) {
    const uint32_t q = u16(b + 2 + 2 * (4 * ib32 + 2 * (k % 2) + p));
    const uint64_t grid = grids::hdIq2xsGrid(q & 511);
    const uint32_t signs = ksigns(q >> 9);
    WS_UNROLL for (int j = 0; j < 8; ++j) y[8 * p + j] = dl * float(gridByte(grid, j)) * signOf(signs, j);
  }
}

template <class Y>
WS_HD void iq2_s_run(const uint8_t* __restrict b, int k, Y y) {
  const int ib32 = k / 2;
  const uint8_t* qs = b + 2 + 4 * ib32;
  const uint8_t* signs = b + 34 + 4 * ib32;
  const uint32_t qh = b[66 + ib32];
  const float dl = f16(b) * (0.5f + float((b[74 + ib32] >> (4 * (k % 2))) & 0xf)) * 0.25f;
  WS_UNROLL for (int p = 0; p < 2; ++p) {
    const int l = 2 * (k % 2) + p;
    const uint64_t grid = grids::hdIq2sGrid(qs[l] | ((qh << (8 - 2 * l)) & 0x300));
    WS_UNROLL for (int j = 0; j < 8; ++j) y[8 * p + j] = dl * float(gridByte(grid, j)) * signOf(signs[l], j);
  }
}

template <class Y>
WS_HD void iq3_xxs_run(const uint8_t* __restrict b, int k, Y y) {
  const int ib32 = k / 2;
  const uint8_t* qs = b + 2 + 8 * ib32;
  const uint32_t aux = u32(b + 66 + 4 * ib32);
  const float db = f16(b) * (0.5f + float(aux >> 28)) * 0.5f;
  WS_UNROLL for (int p = 0; p < 2; ++p) {
    const int l = 2 * (k % 2) + p;
    iq3Octet(y + 8 * p, db, grids::hdIq3xxsGrid(qs[2 * l + 0]), grids::hdIq3xxsGrid(qs[2 * l + 1]), ksigns((aux >> 7 * l) & 127));
  }
}

// IQ3_S walks sub-blocks in pairs (a scale byte, two qh bytes, 16 index and 8 sign bytes a pair):
// sub-block k / 2 is pair k / 4, half (k / 2) % 2.
template <class Y>
WS_HD void iq3_s_run(const uint8_t* __restrict b, int k, Y y) {
  const int pair = k / 4, half = (k / 2) % 2;
  const uint8_t* qs = b + 2 + 16 * pair + 8 * half;
  const uint32_t qh = b[66 + 2 * pair + half];
  const uint8_t* signs = b + 74 + 8 * pair + 4 * half;
  const float db = f16(b) * float(1 + 2 * ((b[106 + pair] >> (4 * half)) & 0xf));
  WS_UNROLL for (int p = 0; p < 2; ++p) {
    const int l = 2 * (k % 2) + p;
    const uint32_t grid1 = grids::hdIq3sGrid(qs[2 * l + 0] | ((qh << (8 - 2 * l)) & 256));
    const uint32_t grid2 = grids::hdIq3sGrid(qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256));
    iq3Octet(y + 8 * p, db, grid1, grid2, signs[l]);
  }
}

template <class Y>
WS_HD void iq1_s_run(const uint8_t* __restrict b, int k, Y y) {
  const int ib = k / 2;
  const uint8_t* qs = b + 2 + 4 * ib;
  const uint32_t qh = u16(b + 34 + 2 * ib);
  const float dl = f16(b) * float(2 * ((qh >> 12) & 7) + 1);
  const float delta = qh & 0x8000 ? -kIq1sDelta : kIq1sDelta;
  WS_UNROLL for (int p = 0; p < 2; ++p) {
    const int l = 2 * (k % 2) + p;
    const uint64_t grid = grids::hdIq1sGrid(qs[l] | (((qh >> 3 * l) & 7) << 8));
    WS_UNROLL for (int j = 0; j < 8; ++j) y[8 * p + j] = dl * (float(int8_t(gridByte(grid, j))) + delta);
  }
}

// IQ1_M: points 0-1 of a sub-block take its first 3-bit scale and qh byte, 2-3 the second; each
// point's index bits and delta sign are a nibble of its qh byte (low for even points, high for odd).
template <class Y>
WS_HD void iq1_m_run(const uint8_t* __restrict b, int k, Y y) {
  const int ib = k / 2, h = k % 2;
  const uint8_t* qs = b + 4 * ib + 2 * h;
  const uint32_t qh = b[32 + 2 * ib + h];
  const uint32_t sc = u16(b + 48 + 2 * (ib / 2));
  const float dl = iq1mD(b) * float(2 * ((sc >> (6 * (ib % 2) + 3 * h)) & 0x7) + 1);
  WS_UNROLL for (int p = 0; p < 2; ++p) {
    const uint64_t grid = grids::hdIq1sGrid(qs[p] | ((qh << (8 - 4 * p)) & 0x700));
    const float delta = qh & (p ? 0x80 : 0x08) ? -kIq1sDelta : kIq1sDelta;
    WS_UNROLL for (int j = 0; j < 8; ++j) y[8 * p + j] = dl * (float(int8_t(gridByte(grid, j))) + delta);
  }
}

// ik_llama.cpp's IQ2_K .. IQ6_K (iqk/iqk_quantize.cpp dequantize_row_* at 8337e4c): run k's scale,
// and its bit of `extra` (the shifted half of the type's value table; each 16 values has one, in
// order), are the 16 values' own.
template <class Y>
WS_HD void iq2_k_run(const uint8_t* __restrict b, int k, Y y) {
  const int ib32 = k / 2, h = k % 2;
  const float dl = f16(b) * float(int((b[4 + ib32] >> (4 * h)) & 0xF) - 8);
  const uint32_t v = (u16(b + 2) >> k) & 1 ? 4 : 0;
  const uint8_t* qs = b + 12 + 32 * (ib32 / 4) + 16 * h;
  const int shift = 2 * (ib32 % 4);
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq2nl(v + ((qs[j] >> shift) & 3)));
}

// IQ3_K: the scale's sign is bit k of scales_h; 2 low code bits in plane ib32 % 4 of 32 bytes a
// 128 values, the third in bit ib32 of qh.
template <class Y>
WS_HD void iq3_k_run(const uint8_t* __restrict b, int k, Y y) {
  const int ib32 = k / 2, h = k % 2;
  const float dl = f16(b) * float((2 * ((b[6 + ib32] >> (4 * h)) & 0xF) + 1) * ((u16(b + 4) >> k) & 1 ? -1 : 1));
  const uint32_t v = (u16(b + 2) >> k) & 1 ? 8 : 0;
  const uint8_t* qs = b + 14 + 32 * (ib32 / 4) + 16 * h;
  const uint8_t* qh = b + 78 + 16 * h;
  const int shiftL = 2 * (ib32 % 4), shiftH = ib32 % 8;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq3nl(v + (((qs[j] >> shiftL) & 3) | (((qh[j] >> shiftH) & 1) << 2))));
}

// IQ4_K: 6-bit scale k (low 4 bits a nibble of scales_l, high 2 from scales_h), codes 16 bytes a 32
// values, low nibbles for even k.
template <class Y>
WS_HD void iq4_k_run(const uint8_t* __restrict b, int k, Y y) {
  const int ib = k / 2, h = k % 2;
  const uint8_t sh = uint8_t(b[4 + ib / 2] >> 4 * (ib % 2));
  const float dl = f16(b) * float(int(((b[8 + ib] >> (4 * h)) & 0xF) | ((sh << (4 - 2 * h)) & 0x30)) - 32);
  const uint32_t v = (u16(b + 2) >> k) & 1 ? 16 : 0;
  const uint8_t* qs = b + 16 + 16 * ib;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq4k(v + ((qs[j] >> (4 * h)) & 0xF)));
}

// IQ5_K makes 64 values at a time as four runs: run q = k % 4 of 64-value group k / 4 reads code
// bytes 16 (q % 2) .. +15 of the group's 32, their low (q < 2) or high nibble, the fifth bit from qh
// bit 2 (group % 4) + q / 2; scale q from sl byte 2 x group + q / 2 and sh byte `group`.
template <class Y>
WS_HD void iq5_k_run(const uint8_t* __restrict b, int k, Y y) {
  const int group = k / 4, q = k % 4, nib = q / 2;
  const uint32_t sl = b[8 + 2 * group + nib], sh = b[4 + group];
  const float dl = f16(b) * float(int(((sl >> (4 * (q % 2))) & 0xF) | (((sh << 4) >> (2 * q)) & 0x30)) - 32);
  const uint32_t v = ((u16(b + 2) >> k) & 1) << 5;
  const uint8_t* qs = b + 16 + 32 * group + 16 * (q % 2);
  const uint8_t* qh = b + 144 + 16 * (q % 2);
  const int shift = 2 * (group % 4) + nib;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq5nl(v + (((qs[j] >> (4 * nib)) & 0xF) | (((qh[j] >> shift) & 1) << 4))));
}

// IQ6_K as IQ5_K, with an int8 scale k, two high bits a code (qh: 32 bytes per two groups), and
// ik_llama.cpp's fused cubic (iq6Curve).
template <class Y>
WS_HD void iq6_k_run(const uint8_t* __restrict b, int k, Y y) {
  const int group = k / 4, q = k % 4, nib = q / 2;
  const float dl = f16(b) * float(int8_t(b[4 + k]));
  const float m = (u16(b + 2) >> k) & 1 ? 1.f : 0.f;
  const uint8_t* qs = b + 20 + 32 * group + 16 * (q % 2);
  const uint8_t* qh = b + 148 + 32 * (group / 2) + 16 * (q % 2);
  const int shift = 4 * (group % 2) + 2 * nib;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = dl * iq6Curve(float(((qs[j] >> (4 * nib)) & 0xF) | (((qh[j] >> shift) & 3) << 4)), m);
}

// ---- ik_llama.cpp's types whose rows begin with a scale (`meta`: a float, or an f16), as runs of
// 16 of a block of that row.

// IQ4_KS: scale byte k / 2 ((bits 1-7) - 127, bit 0 the table half), codes 16 bytes a 32 values.
template <class Y>
WS_HD void iq4_ks_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const int ib = k / 2;
  const float dl = hdLoad<float>(meta, 0) * float(int(b[ib] & 254) - 127);
  const uint32_t v = uint32_t(b[ib] & 1) << 4;
  const uint8_t* qs = b + 8 + 16 * ib;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq4k(v + ((qs[j] >> (4 * (k % 2))) & 0xF)));
}

// IQ5_KS makes 64 values at a time from 32 code bytes, low nibbles then high: run k is group k / 4,
// nibble (k % 4) / 2, bytes 16 (k % 2) .. +15; scale byte and qh bit k / 2.
template <class Y>
WS_HD void iq5_ks_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const int s = k / 2, nib = (k % 4) / 2;
  const float dl = hdLoad<float>(meta, 0) * float(int(b[s] & 254) - 127);
  const uint32_t v = uint32_t(b[s] & 1) << 5;
  const uint8_t* qs = b + 8 + 32 * (k / 4) + 16 * (k % 2);
  const uint8_t* qh = b + 136 + 16 * (k % 2);
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq5nl(v + (((qs[j] >> (4 * nib)) & 0xF) | (((qh[j] >> s) & 1) << 4))));
}

// IQ2_KS: as IQ5_KS's walk over 2-bit planes (two planes a group, 32 bytes per two groups); the
// scale's fifth bit is bit k / 2 + 8 of `extra`, the table half bit k / 2.
template <class Y>
WS_HD void iq2_ks_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const int group = k / 4, nib = (k % 4) / 2, s = k / 2;
  const uint32_t extra = u16(b);
  const float dl = f16(meta) * float(int(((b[2 + group] >> (4 * nib)) & 0xF) | ((extra >> (s + 4)) & 0x10)) - 16);
  const uint32_t v = (extra >> s) & 1 ? 4 : 0;
  const uint8_t* qs = b + 6 + 32 * (group / 2) + 16 * (k % 2);
  const int shift = 4 * (group % 2) + 2 * nib;
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq2nl(v + ((qs[j] >> shift) & 3)));
}

// IQ3_KS: sub-block s = k / 2's scale (a nibble of scale byte s % 4, the fifth bit bit s of
// `extra`), table half bit 8 + s, plane s % 4 of 32 bytes a 128 values, the third bit qh bit s.
template <class Y>
WS_HD void iq3_ks_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const int s = k / 2;
  const uint32_t extra = u16(b);
  const float dl = f16(meta) * float(int(((b[2 + s % 4] >> (4 * (s / 4))) & 0xF) | (((extra >> s) & 1) << 4)) - 16);
  const uint32_t v = ((extra >> (8 + s)) & 1) << 3;
  const uint8_t* qs = b + 6 + 32 * (s / 4) + 16 * (k % 2);
  const uint8_t* qh = b + 70 + 16 * (k % 2);
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq3nl(v + (((qs[j] >> (2 * (s % 4))) & 3) | (((qh[j] >> s) & 1) << 2))));
}

// IQ4_KSS: a sub-block's scale byte is bit 0 of its 8 words; run k decodes words 8 (k % 2) / 2 ..
// of sub-block k / 2 (x ^ (x >> 1) undone), low nibbles for even k.
template <class Y>
WS_HD void iq4_kss_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const uint8_t* q = b + 16 * (k / 2);
  int ls = 0;
  WS_UNROLL for (int w = 0; w < 8; ++w) ls |= (u16(q + 2 * w) & 1) << w;
  const uint32_t v = uint32_t(ls & 1) << 4;
  const float dl = hdLoad<float>(meta, 0) * float((ls & 254) - 127);
  WS_UNROLL for (int j = 0; j < 16; ++j) {
    uint16_t aux = uint16_t(u16(q + 2 * (j / 2)) & 0xFFFE);
    aux = uint16_t(aux ^ (aux >> 1));
    const uint8_t code = uint8_t(j % 2 ? aux >> 8 : aux & 0xFF);
    y[j] = dl * float(hdIq4k(v + ((code >> (4 * (k % 2))) & 0xF)));
  }
}

// IQ2_KL: a code makes two neighbouring values; run k is group k / 4, nibble (k % 4) / 2 (scale
// 2 x group + nibble), code bytes 8 (k % 2) .. +7 of the group's 16.
template <class Y>
WS_HD void iq2_kl_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const int group = k / 4, nib = (k % 4) / 2;
  const float dl = f16(meta) * float(int(((b[2 + (2 * group + nib) % 4] >> 4 * (group / 2)) & 0xF) | (((u16(b) >> (4 * group + 2 * nib)) & 3) << 4)) - 32);
  const uint8_t* qs = b + 6 + 16 * group + 8 * (k % 2);
  const uint8_t* qh = b + 70 + 8 * (k % 2);
  WS_UNROLL for (int p = 0; p < 8; ++p) {
    const uint32_t c = ((qs[p] >> (4 * nib)) & 0xF) | (((qh[p] >> (2 * group + nib)) & 1) << 4);
    y[2 * p + 0] = dl * float(hdIq2kl(c, 0));
    y[2 * p + 1] = dl * float(hdIq2kl(c, 1));
  }
}

// The KT types: run k is two of a sub-block's trellis groups of 8 (four of 4 for IQ4_KT).
template <class Y>
WS_HD void iq1_kt_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const int ib = k / 2;
  const uint8_t* sh = b;
  const uint8_t* ql = b + 8;
  const uint8_t* qh = b + 40;
  const float sl = hdLoad<float>(meta, 0) * float(hdIq4k(sh[ib] & 0xF));
  WS_UNROLL for (int p = 0; p < 2; ++p) {
    const int ig = 2 * (k % 2) + p;
    uint32_t idx = ql[ib * 4 + ig] | ((uint32_t(qh[(ib % 4) * 4 + ig]) << (8 - 4 * (ib / 4))) & 0xF00);
    idx |= (uint32_t(sh[ib]) << (8 - ig)) & 0x1000;
    ktGroup(idx, 4096, false, sl, 8, y + 8 * p);
  }
}

// IQ2_KT: runs 0-7 are the block's first half (indices in ql, the scale bytes' low nibbles), 8-15
// its second (qh, high nibbles); scale byte (k % 8) / 2.
template <class Y>
WS_HD void iq2_kt_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const int half = k / 8, ib = (k % 8) / 2;
  const float scale = hdLoad<float>(meta, 0) * float(hdIq4k((b[ib] >> (4 * half)) & 0xF));
  const uint8_t* q = b + 4 + 32 * half;
  WS_UNROLL for (int p = 0; p < 2; ++p) ktGroup(u16(q + 2 * (4 * ib + 2 * (k % 2) + p)), 4096, false, scale, 8, y + 8 * p);
}

// IQ3_KT: as IQ2_KT, magnitudes, a sign per value in qh bit ib + 4 x half.
template <class Y>
WS_HD void iq3_kt_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const int half = k / 8, ib = (k % 8) / 2;
  const float scale = hdLoad<float>(meta, 0) * float((b[ib] >> (4 * half)) & 0xF);
  const uint8_t* ql = b + 4 + 32 * half;
  const uint8_t* qh = b + 68;
  const uint8_t mask = uint8_t(1 << (ib + 4 * half));
  WS_UNROLL for (int p = 0; p < 2; ++p) {
    const int ig = 2 * (k % 2) + p;
    ktGroup(u16(ql + 2 * (4 * ib + ig)), 4096, true, scale, 8, y + 8 * p);
    WS_UNROLL for (int j = 0; j < 8; ++j)
      if (qh[ig * 8 + j] & mask) y[8 * p + j] = -y[8 * p + j];
  }
}

template <class Y>
WS_HD void iq4_kt_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const int ib = k / 2;
  const uint8_t* ql = b + 32;
  const uint8_t* qh = b + 96;
  const uint32_t shb = hdLoad<uint32_t>(b, ib);
  const uint32_t offset = (shb & 1) ? 32768 + 4096 : 4096;
  const float sl = hdLoad<float>(meta, 0) * float(int((shb & 0xFF) >> 1) - 64);
  WS_UNROLL for (int p = 0; p < 4; ++p) {
    const int ig = 4 * (k % 2) + p, jj = ib * 8 + ig;
    const uint32_t idx = ql[jj] | ((uint32_t(qh[jj % 32]) << (8 - 4 * (jj / 32))) & 0xF00) | (((shb >> (8 + 3 * ig)) & 7) << 12);
    ktGroup(idx, offset, false, sl, 4, y + 4 * p);
  }
}

// The ternary types: run k of IQ1_BN is its k-th 16 values (three bytes of five trits, and trit k
// of `extra`); of IQ2_BN, bit pair k of its 16 bytes.
template <class Y>
WS_HD void iq1_bn_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  static const uint32_t mult[5] = {81, 27, 9, 3, 1};
  const float d = f16(meta);
  WS_UNROLL for (int q = 0; q < 3; ++q)
    WS_UNROLL for (int j = 0; j < 5; ++j) y[5 * q + j] = d * float(bnTrit(b[3 * k + q], mult[j]) - 1);
  y[15] = d * float(bnTrit(b[12], mult[k]) - 1);
}

template <class Y>
WS_HD void iq2_bn_run(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const float d = hdLoad<float>(meta, 0);
  WS_UNROLL for (int j = 0; j < 16; ++j) y[j] = d * float(int((b[j] >> (2 * k)) & 3) - 1);
}

// The types with row meta written as runs: ggml (ik_llama.cpp) type id, formula, values, bytes a
// block, and meta bytes a row (ik_llama.cpp's row_meta_size).
#define WS_GGUF_ROW_RUN_TYPES(X)                                                                                  \
  X(144, iq4_ks, 256, 136, 4) X(152, iq5_ks, 256, 168, 4) X(145, iq2_ks, 256, 70, 2) X(156, iq3_ks, 256, 102, 2)  \
  X(146, iq4_kss, 256, 128, 4) X(157, iq2_kl, 256, 86, 2) X(158, iq1_kt, 256, 56, 4) X(153, iq2_kt, 256, 68, 4)   \
  X(154, iq3_kt, 256, 100, 4) X(155, iq4_kt, 256, 128, 4) X(134, iq1_bn, 64, 13, 2) X(135, iq2_bn, 64, 16, 4)

#define WS_GGUF_ROW_RUN_TYPE(id, fn, elems, bytes, meta)                     \
  struct fn##_runs {                                                         \
    static constexpr uint32_t kRuns = (elems) / 16, kBytes = (bytes);         \
    static constexpr uint32_t kMeta = (meta);                                 \
    template <class Y>                                                       \
    WS_HD_MEMBER static void run(const uint8_t* m, const uint8_t* b, int k, Y y) { \
      fn##_run(m, b, k, y);                                                  \
    }                                                                        \
  };
WS_GGUF_ROW_RUN_TYPES(WS_GGUF_ROW_RUN_TYPE)
#undef WS_GGUF_ROW_RUN_TYPE

// Type `id`'s block at b of the row whose meta is at `meta` into y from its runs; false when the
// type is not written as runs.
template <class Y>
WS_HD_FN bool rowBlockFromRuns(int id, const uint8_t* meta, const uint8_t* b, Y y) {
  switch (id) {
#define WS_GGUF_ROW_RUN_BLOCK(id, fn, elems, bytes, metaBytes)                                 \
  case id:                                                                                     \
    for (int k = 0; k < int(fn##_runs::kRuns); ++k) fn##_runs::run(meta, b, k, y + 16 * k); \
    return true;
    WS_GGUF_ROW_RUN_TYPES(WS_GGUF_ROW_RUN_BLOCK)
#undef WS_GGUF_ROW_RUN_BLOCK
    default: return false;
  }
}

// The types written as runs, one row each: ggml type id, formula, values and bytes a block
// (ggml-common.h's block_* sizes).
#define WS_GGUF_RUN_TYPES(X)                                                                                           \
  X(2, q4_0, 32, 18) X(3, q4_1, 32, 20) X(6, q5_0, 32, 22) X(7, q5_1, 32, 24) X(8, q8_0, 32, 34)                       \
  X(9, q8_1, 32, 36) X(10, q2_k, 256, 84) X(11, q3_k, 256, 110) X(12, q4_k, 256, 144) X(13, q5_k, 256, 176)            \
  X(14, q6_k, 256, 210) X(15, q8_k, 256, 292) X(20, iq4_nl, 32, 18) X(23, iq4_xs, 256, 136) X(39, mxfp4, 32, 17)       \
  X(40, nvfp4, 64, 36) X(41, q1_0, 128, 18) X(42, q2_0, 64, 18) X(34, tq1_0, 256, 54) X(35, tq2_0, 256, 66)            \
  X(16, iq2_xxs, 256, 66) X(17, iq2_xs, 256, 74) X(22, iq2_s, 256, 82) X(18, iq3_xxs, 256, 98) X(21, iq3_s, 256, 110)  \
  X(19, iq1_s, 256, 50) X(29, iq1_m, 256, 56) X(133, q6_0, 32, 26) X(137, iq2_k, 256, 76) X(138, iq3_k, 256, 110)      \
  X(139, iq4_k, 256, 144) X(140, iq5_k, 256, 176) X(141, iq6_k, 256, 212)

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
