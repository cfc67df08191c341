// The GGUF block decoders, operation for operation as ggml's scalar dequantize_row_* (formats.md
// 2.6), written once for the CPU reference and the CUDA kernels: the same source on both sides is
// what makes GPU output bit-identical to the CPU (with FMA contraction off on both).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/numerics/hd.h"
#include "core/numerics/iq_grids.h"

namespace ws::num::blocks {

WS_HD uint16_t u16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
WS_HD float f16(const uint8_t* p) { return hdHalfToFloat(u16(p)); }

constexpr int QK = 256;

template <class Y>
WS_HD void q4_0(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    const int x0 = (qs[j] & 0x0F) - 8;
    const int x1 = (qs[j] >> 4) - 8;
    y[j] = float(x0) * d;
    y[j + 16] = float(x1) * d;
  }
}

template <class Y>
WS_HD void q4_1(const uint8_t* __restrict b, Y y) {
  const float d = f16(b), m = f16(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = float(qs[j] & 0x0F) * d + m;
    y[j + 16] = float(qs[j] >> 4) * d + m;
  }
}

template <class Y>
WS_HD void q5_0(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const uint32_t qh = uint32_t(b[2]) | (uint32_t(b[3]) << 8) | (uint32_t(b[4]) << 16) | (uint32_t(b[5]) << 24);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const uint8_t xh0 = uint8_t(((qh >> (j + 0)) << 4) & 0x10);
    const uint8_t xh1 = uint8_t(((qh >> (j + 12))) & 0x10);
    const int x0 = ((qs[j] & 0x0F) | xh0) - 16;
    const int x1 = ((qs[j] >> 4) | xh1) - 16;
    y[j] = float(x0) * d;
    y[j + 16] = float(x1) * d;
  }
}

template <class Y>
WS_HD void q5_1(const uint8_t* __restrict b, Y y) {
  const float d = f16(b), m = f16(b + 2);
  const uint32_t qh = uint32_t(b[4]) | (uint32_t(b[5]) << 8) | (uint32_t(b[6]) << 16) | (uint32_t(b[7]) << 24);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const uint8_t xh0 = uint8_t(((qh >> (j + 0)) << 4) & 0x10);
    const uint8_t xh1 = uint8_t(((qh >> (j + 12))) & 0x10);
    const int x0 = (qs[j] & 0x0F) | xh0;
    const int x1 = (qs[j] >> 4) | xh1;
    y[j] = float(x0) * d + m;
    y[j + 16] = float(x1) * d + m;
  }
}

template <class Y>
WS_HD void q8_0(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const int8_t* qs = reinterpret_cast<const int8_t*>(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = float(qs[j]) * d;
}

template <class Y>
WS_HD void q8_1(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const int8_t* qs = reinterpret_cast<const int8_t*>(b + 4);
  for (int j = 0; j < 32; ++j) y[j] = float(qs[j]) * d;
}

template <class Y>
WS_HD void q2_k(const uint8_t* __restrict b, Y y) {
  const uint8_t* scales = b;
  const uint8_t* q = b + 16;
  const float d = f16(b + 80), dmin = f16(b + 82);
  int is = 0;
  for (int n = 0; n < QK; n += 128) {
    int shift = 0;
    for (int j = 0; j < 4; ++j) {
      uint8_t sc = scales[is++];
      float dl = d * float(sc & 0xF), ml = dmin * float(sc >> 4);
      for (int l = 0; l < 16; ++l) *y++ = dl * float(int8_t((q[l] >> shift) & 3)) - ml;
      sc = scales[is++];
      dl = d * float(sc & 0xF);
      ml = dmin * float(sc >> 4);
      for (int l = 0; l < 16; ++l) *y++ = dl * float(int8_t((q[l + 16] >> shift) & 3)) - ml;
      shift += 2;
    }
    q += 32;
  }
}

template <class Y>
WS_HD void q3_k(const uint8_t* __restrict b, Y y) {
  const uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
  const uint8_t* hm = b;
  const uint8_t* q = b + 32;
  const float dAll = f16(b + 108);
  uint32_t aux[4];
  for (int k = 0; k < 3; ++k)
    aux[k] = uint32_t(b[96 + 4 * k]) | (uint32_t(b[97 + 4 * k]) << 8) | (uint32_t(b[98 + 4 * k]) << 16) | (uint32_t(b[99 + 4 * k]) << 24);
  const uint32_t tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
  aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
  aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
  aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
  int8_t scales[16];
  for (int k = 0; k < 16; ++k) scales[k] = int8_t((aux[k / 4] >> (8 * (k % 4))) & 0xFF);
  // Codes first (((q >> shift) & 3) - (hm & m ? 0 : 4), branch-free), then dl * code: the same
  // operations as ggml's loop, in two passes that vectorize.
  int8_t codes[QK];
  int8_t* c = codes;
  int hbit = 0;  // ggml's mask m = 1 << hbit
  for (int n = 0; n < QK; n += 128) {
    int shift = 0;
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 32; ++l) c[l] = int8_t(((q[l] >> shift) & 3) - 4 + 4 * ((hm[l] >> hbit) & 1));
      c += 32;
      shift += 2;
      ++hbit;
    }
    q += 32;
  }
  for (int g = 0; g < 16; ++g) {
    const float dl = dAll * float(scales[g] - 32);
    for (int l = 0; l < 16; ++l) y[g * 16 + l] = dl * float(codes[g * 16 + l]);
  }
}

WS_HD void scaleMinK4(int j, const uint8_t* q, uint8_t& d, uint8_t& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = uint8_t((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

// Q4_K sub-block `sub`'s (0-7, 32 values each) scale and min: value = scale x code - min. The
// 16-a-thread kernel body (kernel_threads.h) reads them the same way.
WS_HD void q4kSubScale(const uint8_t* b, int sub, float& scale, float& min) {
  uint8_t sc, m;
  scaleMinK4(sub, b + 4, sc, m);
  scale = f16(b) * float(sc);
  min = f16(b + 2) * float(m);
}

template <class Y>
WS_HD void q4_k(const uint8_t* __restrict b, Y y) {
  const uint8_t* q = b + 16;
  for (int sub = 0; sub < 8; sub += 2) {
    float d1, m1, d2, m2;
    q4kSubScale(b, sub, d1, m1);
    q4kSubScale(b, sub + 1, d2, m2);
    for (int l = 0; l < 32; ++l) *y++ = d1 * float(q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * float(q[l] >> 4) - m2;
    q += 32;
  }
}

template <class Y>
WS_HD void q5_k(const uint8_t* __restrict b, Y y) {
  const float d = f16(b), min = f16(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* ql = b + 48;
  int is = 0;
  uint8_t sc, m, u1 = 1, u2 = 2;
  for (int j = 0; j < QK; j += 64) {
    scaleMinK4(is + 0, scales, sc, m);
    const float d1 = d * float(sc), m1 = min * float(m);
    scaleMinK4(is + 1, scales, sc, m);
    const float d2 = d * float(sc), m2 = min * float(m);
    for (int l = 0; l < 32; ++l) *y++ = d1 * float((ql[l] & 0xF) + ((qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * float((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
    ql += 32;
    is += 2;
    u1 = uint8_t(u1 << 2);
    u2 = uint8_t(u2 << 2);
  }
}

template <class Y>
WS_HD void q6_k(const uint8_t* __restrict b, Y y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = f16(b + 208);
  for (int n = 0; n < QK; n += 128) {
    // ggml computes d * sc[is] * q left to right, i.e. (d * sc[is]) * q; is = l / 16 is constant
    // over each half of the 32 lanes, so the products are hoisted without changing a bit.
    for (int half = 0; half < 2; ++half) {
      const float d1 = d * float(sc[half + 0]), d2 = d * float(sc[half + 2]);
      const float d3 = d * float(sc[half + 4]), d4 = d * float(sc[half + 6]);
      for (int l = half * 16; l < half * 16 + 16; ++l) {
        const int q1 = ((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l + 0] = d1 * float(q1);
        y[l + 32] = d2 * float(q2);
        y[l + 64] = d3 * float(q3);
        y[l + 96] = d4 * float(q4);
      }
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

template <class Y>
WS_HD void q8_k(const uint8_t* __restrict b, Y y) {
  const float d = hdBitsToFloat(uint32_t(b[0]) | (uint32_t(b[1]) << 8) | (uint32_t(b[2]) << 16) | (uint32_t(b[3]) << 24));
  const int8_t* qs = reinterpret_cast<const int8_t*>(b + 4);
  for (int j = 0; j < QK; ++j) y[j] = d * float(qs[j]);
}

template <class Y>
WS_HD void iq4_nl(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float(hdIq4nl(qs[j] & 0xF));
    y[j + 16] = d * float(hdIq4nl(qs[j] >> 4));
  }
}

template <class Y>
WS_HD void iq4_xs(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const uint16_t scalesH = u16(b + 2);
  const uint8_t* scalesL = b + 4;
  const uint8_t* qs = b + 8;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const int ls = ((scalesL[ib / 2] >> 4 * (ib % 2)) & 0xF) | (((scalesH >> 2 * ib) & 3) << 4);
    const float dl = d * float(ls - 32);
    for (int j = 0; j < 16; ++j) {
      y[j + 0] = dl * float(hdIq4nl(qs[j] & 0xF));
      y[j + 16] = dl * float(hdIq4nl(qs[j] >> 4));
    }
    y += 32;
    qs += 16;
  }
}

// ik_llama.cpp's types (iqk/iqk_quantize.cpp dequantize_row_* at 8337e4c), operation for operation.
// IQ2_K: d (f16), `extra` (one bit per 16 values: the shifted half of iq2nl_values), 8 scale bytes of
// two 4-bit scales (minus 8), then 2-bit codes, each 128 values taking 32 bytes in four bit planes.
template <class Y>
WS_HD void iq2_k(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  uint32_t extra = u16(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qs = b + 12;
  int shift = 0;
  for (int ib32 = 0; ib32 < QK / 32; ++ib32) {
    const float dl1 = d * float(int(scales[ib32] & 0xF) - 8);
    const float dl2 = d * float(int(scales[ib32] >> 4) - 8);
    const uint32_t v1 = (extra & 1) ? 4 : 0, v2 = (extra & 2) ? 4 : 0;
    extra >>= 2;
    for (int j = 0; j < 16; ++j) {
      y[j + 0] = dl1 * float(hdIq2nl(v1 + ((qs[j + 0] >> shift) & 3)));
      y[j + 16] = dl2 * float(hdIq2nl(v2 + ((qs[j + 16] >> shift) & 3)));
    }
    y += 32;
    shift += 2;
    if (shift == 8) qs += 32, shift = 0;
  }
}

// IQ4_K: d (f16), `extra` (the shifted half of iq4k_values per 16 values), 6-bit scales (4 low bits
// in scales_l, 2 high in scales_h) minus 32, then 4-bit codes.
template <class Y>
WS_HD void iq4_k(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  uint32_t extra = u16(b + 2);
  const uint8_t* scalesH = b + 4;
  const uint8_t* scalesL = b + 8;
  const uint8_t* qs = b + 16;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const uint8_t sh = uint8_t(scalesH[ib / 2] >> 4 * (ib % 2));
    const float dl1 = d * float(int((scalesL[ib] & 0xF) | ((sh << 4) & 0x30)) - 32);
    const float dl2 = d * float(int((scalesL[ib] >> 4) | ((sh << 2) & 0x30)) - 32);
    const uint32_t v1 = (extra & 1) ? 16 : 0, v2 = (extra & 2) ? 16 : 0;
    extra >>= 2;
    for (int j = 0; j < 16; ++j) {
      y[j + 0] = dl1 * float(hdIq4k(v1 + (qs[j] & 0xF)));
      y[j + 16] = dl2 * float(hdIq4k(v2 + (qs[j] >> 4)));
    }
    y += 32;
    qs += 16;
  }
}

// IQ4_KS: the row's float scale d sits before its blocks (`meta`); each of 8 scale bytes gives
// (bits 1-7) - 127 times d, and bit 0 the shifted half of iq4k_values; then 4-bit codes.
template <class Y>
WS_HD void iq4_ks(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = hdLoad<float>(meta, 0);
  const uint8_t* scales = b;
  const uint8_t* qs = b + QK / 32;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const float dl = d * float(int(scales[ib] & 254) - 127);
    const uint32_t v = uint32_t(scales[ib] & 1) << 4;
    for (int j = 0; j < 16; ++j) {
      y[j] = dl * float(hdIq4k(v + (qs[j] & 0xF)));
      y[j + 16] = dl * float(hdIq4k(v + (qs[j] >> 4)));
    }
    y += 32;
    qs += 16;
  }
}

// Q6_0 (ggml-quants.c dequantize_row_q6_0): d (f16), qh[8] holding the 5th and 6th bits of two
// values each, qs[16]; codes minus 32.
template <class Y>
WS_HD void q6_0(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const uint8_t* qh = b + 2;
  const uint8_t* qs = b + 10;
  for (int j = 0; j < 16; ++j) {
    const uint8_t h = uint8_t(qh[j % 8] >> 4 * (j / 8));
    const int x0 = ((qs[j] & 0x0F) | ((h << 4) & 0x30)) - 32;
    const int x1 = ((qs[j] >> 4) | ((h << 2) & 0x30)) - 32;
    y[j] = float(x0) * d;
    y[j + 16] = float(x1) * d;
  }
}

// IQ3_K: d (f16), `extra` (shifted iq3nl_values half per 16), scales_h (a sign per 16), 4-bit
// scales (2s + 1), 2 low bits of each code in four planes of qs, the third bit in qh.
template <class Y>
WS_HD void iq3_k(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  uint32_t extra = u16(b + 2), sh = u16(b + 4);
  const uint8_t* scalesL = b + 6;
  const uint8_t* qs = b + 14;
  const uint8_t* qh = b + 78;
  for (int ib32 = 0; ib32 < QK / 32; ++ib32) {
    const float dl1 = d * float((2 * (scalesL[ib32] & 0xF) + 1) * ((sh & 1) ? -1 : 1));
    const float dl2 = d * float((2 * (scalesL[ib32] >> 4) + 1) * ((sh & 2) ? -1 : 1));
    sh >>= 2;
    const uint32_t v1 = (extra & 1) ? 8 : 0, v2 = (extra & 2) ? 8 : 0;
    extra >>= 2;
    const int shiftL = 2 * (ib32 % 4), shiftH = ib32 % 8;
    for (int j = 0; j < 16; ++j) {
      y[j + 0] = dl1 * float(hdIq3nl(v1 + (((qs[j + 0] >> shiftL) & 3) | (((qh[j + 0] >> shiftH) & 1) << 2))));
      y[j + 16] = dl2 * float(hdIq3nl(v2 + (((qs[j + 16] >> shiftL) & 3) | (((qh[j + 16] >> shiftH) & 1) << 2))));
    }
    y += 32;
    if (shiftL == 6) qs += 32;
  }
}

// IQ5_K: d (f16), `extra` (shifted iq5nl_values half per 16), 6-bit scales minus 32, 4 low bits of
// each code in qs, the fifth in qh.
template <class Y>
WS_HD void iq5_k(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  uint32_t extra = u16(b + 2);
  const uint8_t* sh = b + 4;
  const uint8_t* sl = b + 8;
  const uint8_t* qs = b + 16;
  const uint8_t* qh = b + 144;
  int shift = 0;
  for (int ib64 = 0; ib64 < QK / 64; ++ib64) {
    const float dl1 = d * float(((sl[2 * ib64 + 0] & 0xF) | ((sh[ib64] << 4) & 0x30)) - 32);
    const float dl2 = d * float(((sl[2 * ib64 + 0] >> 4) | ((sh[ib64] << 2) & 0x30)) - 32);
    const float dl3 = d * float(((sl[2 * ib64 + 1] & 0xF) | ((sh[ib64] >> 0) & 0x30)) - 32);
    const float dl4 = d * float(((sl[2 * ib64 + 1] >> 4) | ((sh[ib64] >> 2) & 0x30)) - 32);
    const uint32_t v1 = (extra & 1) << 5, v2 = (extra & 2) << 4, v3 = (extra & 4) << 3, v4 = (extra & 8) << 2;
    for (int j = 0; j < 16; ++j) {
      y[j + 0] = dl1 * float(hdIq5nl(v1 + ((qs[j + 0] & 0xF) | (((qh[j + 0] >> shift) & 1) << 4))));
      y[j + 16] = dl2 * float(hdIq5nl(v2 + ((qs[j + 16] & 0xF) | (((qh[j + 16] >> shift) & 1) << 4))));
      y[j + 32] = dl3 * float(hdIq5nl(v3 + ((qs[j + 0] >> 4) | (((qh[j + 0] >> shift) & 2) << 3))));
      y[j + 48] = dl4 * float(hdIq5nl(v4 + ((qs[j + 16] >> 4) | (((qh[j + 16] >> shift) & 2) << 3))));
    }
    y += 64;
    qs += 32;
    extra >>= 4;
    shift += 2;
    if (shift == 8) qh += 32, shift = 0;
  }
}

// IQ5_KS: the row's float scale d first (`meta`); scale bytes as IQ4_KS's, iq5nl_values, the fifth
// bit of each code in qh.
template <class Y>
WS_HD void iq5_ks(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = hdLoad<float>(meta, 0);
  const uint8_t* scales = b;
  const uint8_t* qs = b + 8;
  const uint8_t* qh = b + 136;
  for (int ib64 = 0; ib64 < QK / 64; ++ib64) {
    const float dl1 = d * float(int(scales[2 * ib64 + 0] & 254) - 127);
    const float dl2 = d * float(int(scales[2 * ib64 + 1] & 254) - 127);
    const uint32_t v1 = uint32_t(scales[2 * ib64 + 0] & 1) << 5, v2 = uint32_t(scales[2 * ib64 + 1] & 1) << 5;
    for (int j = 0; j < 32; ++j) {
      y[j] = dl1 * float(hdIq5nl(v1 + ((qs[j] & 0xF) | (((qh[j] >> (2 * ib64 + 0)) & 1) << 4))));
      y[j + 32] = dl2 * float(hdIq5nl(v2 + ((qs[j] >> 4) | (((qh[j] >> (2 * ib64 + 1)) & 1) << 4))));
    }
    y += 64;
    qs += 32;
  }
}

// IQ6_K: d (f16), `extra` (a shift of 1 per 16 values), 16 int8 scales, 4 low bits of each code
// in qs, 2 high in qh. to_float maps the 6-bit code through ik_llama.cpp's cubic
// A_IQ6K + q(B_IQ6K + q(-C_IQ6K + q D_IQ6K)) in float32 (its quantizer, CUDA dequantize_block_iq6_k
// and matrix kernels use iq6nl_values, the cubic rounded to integers, instead: within half a scale
// step of this). The cubic is the one formula here whose result depends on how ik_llama.cpp was
// compiled: GCC's default contraction with FMA available (-mfma, which GGML_NATIVE and GGML_AVX2
// builds enable; always on aarch64) fuses each step, as its libggml disassembly shows (60 vfmadd in
// dequantize_row_iq6_k at 8337e4c), and the unfused result differs in the last bit for about one
// value in two. The fused steps are written out, so this matches those builds on every machine.
WS_HD float iq6Curve(float q, float shift) { return fmaf(q, fmaf(q, fmaf(q, 0.0011972f, -0.11218f), 6.2568f), -127.f) + shift; }
template <class Y>
WS_HD void iq6_k(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  uint32_t extra = u16(b + 2);
  const uint8_t* sl = b + 4;
  const uint8_t* qs = b + 20;
  const uint8_t* qh = b + 148;
  int shift = 0;
  for (int ib64 = 0; ib64 < QK / 64; ++ib64) {
    float dl[4], m[4];
    for (int k = 0; k < 4; ++k) {
      dl[k] = d * float(int8_t(sl[4 * ib64 + k]));
      m[k] = (extra >> k) & 1 ? 1.f : 0.f;
    }
    for (int j = 0; j < 16; ++j) {
      const float q1 = float((qs[j + 0] & 0xF) | (((qh[j + 0] >> shift) & 0x03) << 4));
      const float q2 = float((qs[j + 16] & 0xF) | (((qh[j + 16] >> shift) & 0x03) << 4));
      const float q3 = float((qs[j + 0] >> 4) | (((qh[j + 0] >> shift) & 0x0C) << 2));
      const float q4 = float((qs[j + 16] >> 4) | (((qh[j + 16] >> shift) & 0x0C) << 2));
      y[j + 0] = dl[0] * iq6Curve(q1, m[0]);
      y[j + 16] = dl[1] * iq6Curve(q2, m[1]);
      y[j + 32] = dl[2] * iq6Curve(q3, m[2]);
      y[j + 48] = dl[3] * iq6Curve(q4, m[3]);
    }
    y += 64;
    qs += 32;
    extra >>= 4;
    shift += 4;
    if (shift == 8) qh += 32, shift = 0;
  }
}

// IQ2_KS: the row's f16 scale d first (`meta`); `extra` holds the shifted half of iq2nl_values per
// 32 values (bits 0-7) and the fifth bit of each 4-bit scale (bits 8-15); scales minus 16; 2-bit
// codes, each 128 values in 32 bytes of four bit planes.
template <class Y>
WS_HD void iq2_ks(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = f16(meta);
  uint32_t extra = u16(b);
  const uint8_t* scales = b + 2;
  const uint8_t* qs = b + 6;
  int shift = 0;
  for (int ib64 = 0; ib64 < QK / 64; ++ib64) {
    const float dl1 = d * float(int((scales[ib64] & 0xF) | ((extra >> 4) & 0x10)) - 16);
    const float dl2 = d * float(int((scales[ib64] >> 4) | ((extra >> 5) & 0x10)) - 16);
    const uint32_t v1 = (extra & 1) ? 4 : 0, v2 = (extra & 2) ? 4 : 0;
    extra >>= 2;
    for (int j = 0; j < 32; ++j) {
      y[j + 0] = dl1 * float(hdIq2nl(v1 + ((qs[j] >> shift) & 3)));
      y[j + 32] = dl2 * float(hdIq2nl(v2 + ((qs[j] >> (shift + 2)) & 3)));
    }
    y += 64;
    shift += 4;
    if (shift == 8) qs += 32, shift = 0;
  }
}

// IQ4_KSS: the row's float scale d first (`meta`); each 32 values are 8 uint16 words whose bit 0,
// over the 8 words, is IQ4_KS's scale byte, and whose other 15 bits, bit 0 cleared and x ^ (x >> 1)
// undone, are four 4-bit iq4k_values codes.
template <class Y>
WS_HD void iq4_kss(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = hdLoad<float>(meta, 0);
  for (int ib = 0; ib < QK / 32; ++ib) {
    const uint8_t* q = b + 16 * ib;
    uint8_t codes[16];
    int ls = 0;
    for (int k = 0; k < 8; ++k) {
      const uint16_t word = u16(q + 2 * k);
      uint16_t aux = uint16_t(word & 0xFFFE);
      aux = uint16_t(aux ^ (aux >> 1));
      codes[2 * k] = uint8_t(aux & 0xFF);
      codes[2 * k + 1] = uint8_t(aux >> 8);
      ls |= (word & 1) << k;
    }
    const uint32_t v = uint32_t(ls & 1) << 4;
    const float dl = d * float((ls & 254) - 127);
    for (int j = 0; j < 16; ++j) {
      y[j + 0] = dl * float(hdIq4k(v + (codes[j] & 0xF)));
      y[j + 16] = dl * float(hdIq4k(v + (codes[j] >> 4)));
    }
    y += 32;
  }
}

// IQ3_KS: the row's f16 scale d first (`meta`); `extra` holds each scale's fifth bit (bits 0-7) and
// the shifted half of iq3nl_values per 32 values (bits 8-15); 4-bit scales minus 16; the low 2
// bits of each code in four planes of qs, the third in qh.
template <class Y>
WS_HD void iq3_ks(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = f16(meta);
  const uint32_t extra = u16(b);
  const uint8_t* scales = b + 2;
  const uint8_t* qs = b + 6;
  const uint8_t* qh = b + 70;
  float dl[8];
  for (int j = 0; j < 4; ++j) {
    dl[j + 0] = d * float(int((scales[j] & 0xF) | (((extra >> (j + 0)) & 1) << 4)) - 16);
    dl[j + 4] = d * float(int((scales[j] >> 4) | (((extra >> (j + 4)) & 1) << 4)) - 16);
  }
  for (int i128 = 0; i128 < QK / 128; ++i128) {
    for (int ib = 0; ib < 4; ++ib) {
      const uint32_t v = ((extra >> (8 + 4 * i128 + ib)) & 1) << 3;
      for (int j = 0; j < 32; ++j)
        y[j] = dl[4 * i128 + ib] * float(hdIq3nl(v + (((qs[j] >> 2 * ib) & 3) | (((qh[j] >> (4 * i128 + ib)) & 1) << 2))));
      y += 32;
    }
    qs += 32;
  }
}

// IQ2_KL: the row's f16 scale d first (`meta`); 6-bit scales (4 low bits in scales_l, 2 high in
// scales_h) minus 32; each 5-bit code (4 bits in qs, the fifth in qh) picks a pair of values of
// iq2kl_values, written to two neighbouring outputs.
template <class Y>
WS_HD void iq2_kl(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = f16(meta);
  const uint32_t scalesH = u16(b);
  const uint8_t* scalesL = b + 2;
  const uint8_t* qs = b + 6;
  const uint8_t* qh = b + 70;
  for (int ib64 = 0; ib64 < QK / 64; ++ib64) {
    const float dl1 = d * float(int(((scalesL[(2 * ib64 + 0) % 4] >> 4 * (ib64 / 2)) & 0xF) | (((scalesH >> (4 * ib64 + 0)) & 3) << 4)) - 32);
    const float dl2 = d * float(int(((scalesL[(2 * ib64 + 1) % 4] >> 4 * (ib64 / 2)) & 0xF) | (((scalesH >> (4 * ib64 + 2)) & 3) << 4)) - 32);
    for (int j = 0; j < 16; ++j) {
      const uint32_t c1 = (qs[j] & 0xF) | (((qh[j] >> (2 * ib64 + 0)) & 1) << 4);
      const uint32_t c2 = (qs[j] >> 4) | (((qh[j] >> (2 * ib64 + 1)) & 1) << 4);
      y[2 * j + 0] = dl1 * float(hdIq2kl(c1, 0));
      y[2 * j + 1] = dl1 * float(hdIq2kl(c1, 1));
      y[2 * j + 32] = dl2 * float(hdIq2kl(c2, 0));
      y[2 * j + 33] = dl2 * float(hdIq2kl(c2, 1));
    }
    y += 64;
    qs += 16;
  }
}

// The KT ("trellis") types: a group of n values is generated from an index by ik_llama.cpp's integer
// trellis (QuantizerIQKT::set_values with is_int, as every KT quantizer is instantiated at
// 8337e4c): x = 0xCBAC1FED * x (mod 2^32) per value, starting from index + offset; the value is the
// sum of x's four bytes, each masked to 6 bits, minus 126 (its magnitude for IQ3_KT), times the
// block scale. kScale is 1 for the integer trellis.
template <class Y>
WS_HD void ktGroup(uint32_t index, uint32_t offset, bool magnitude, float scale, int n, Y y) {
  uint32_t x = index + offset;
  for (int k = 0; k < n; ++k) {
    x = 0xCBAC1FEDu * x;
    const uint32_t s = x & 0x3F3F3F3Fu;
    const float v = float(int(s & 0xFF) + int((s >> 8) & 0xFF) + int((s >> 16) & 0xFF) + int(s >> 24)) - 126.f;
    y[k] = scale * (magnitude && v < 0.f ? -v : v);
  }
}

// IQ1_KT: the row's float scale first (`meta`); per 32 values a 4-bit iq4k_values scale (low bits of
// sh) and 4 groups of 8 whose 13-bit index is 8 bits of ql, 4 of qh and one of sh's high bits.
template <class Y>
WS_HD void iq1_kt(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = hdLoad<float>(meta, 0);
  const uint8_t* sh = b;
  const uint8_t* ql = b + 8;
  const uint8_t* qh = b + 40;
  for (int ib = 0; ib < 8; ++ib) {
    const float sl = d * float(hdIq4k(sh[ib] & 0xF));
    for (int ig = 0; ig < 4; ++ig) {
      uint32_t idx = ql[ib * 4 + ig] | ((uint32_t(qh[(ib % 4) * 4 + ig]) << (8 - 4 * (ib / 4))) & 0xF00);
      idx |= (uint32_t(sh[ib]) << (8 - ig)) & 0x1000;
      ktGroup(idx, 4096, false, sl, 8, y);
      y += 8;
    }
  }
}

// IQ2_KT: the row's float scale first (`meta`); 4 scale bytes, two iq4k_values scales each (low
// nibble for the first half of the block, high for the second); one 16-bit index per group of 8.
template <class Y>
WS_HD void iq2_kt(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = hdLoad<float>(meta, 0);
  const uint8_t* ql = b + 4;
  const uint8_t* qh = ql + 32;
  Y yl = y;
  Y yh = y + QK / 2;
  for (int ib = 0; ib < 4; ++ib) {
    const float sl = d * float(hdIq4k(b[ib] & 0xF));
    const float sh = d * float(hdIq4k(b[ib] >> 4));
    for (int ig = 0; ig < 4; ++ig) {
      ktGroup(u16(ql + 2 * (4 * ib + ig)), 4096, false, sl, 8, yl);
      ktGroup(u16(qh + 2 * (4 * ib + ig)), 4096, false, sh, 8, yh);
      yl += 8;
      yh += 8;
    }
  }
}

// IQ3_KT: as IQ2_KT with plain 4-bit scales, magnitudes from the trellis, and a sign bit per value
// in qh (bit ib for the first half, ib + 4 for the second).
template <class Y>
WS_HD void iq3_kt(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = hdLoad<float>(meta, 0);
  const uint8_t* ql = b + 4;
  const uint8_t* qh = b + 68;
  Y yl = y;
  Y yh = y + QK / 2;
  for (int ib = 0; ib < 4; ++ib) {
    const float sl = d * float(b[ib] & 0xF);
    const float sh = d * float(b[ib] >> 4);
    const uint8_t lowMask = uint8_t(1 << ib), highMask = uint8_t(lowMask << 4);
    for (int ig = 0; ig < 4; ++ig) {
      ktGroup(u16(ql + 2 * (4 * ib + ig)), 4096, true, sl, 8, yl);
      ktGroup(u16(ql + 32 + 2 * (4 * ib + ig)), 4096, true, sh, 8, yh);
      for (int j = 0; j < 8; ++j) {
        if (qh[ig * 8 + j] & lowMask) yl[j] = -yl[j];
        if (qh[ig * 8 + j] & highMask) yh[j] = -yh[j];
      }
      yl += 8;
      yh += 8;
    }
  }
}

// IQ4_KT: the row's float scale first (`meta`); per 32 values a uint32 whose bits 1-7 are the scale
// (minus 64), bit 0 the trellis offset (4096 or 32768 + 4096) and bits 8-31 three high bits of each
// group's 15-bit index; groups of 4 values.
template <class Y>
WS_HD void iq4_kt(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = hdLoad<float>(meta, 0);
  const uint8_t* ql = b + 32;
  const uint8_t* qh = b + 96;
  for (int ib = 0; ib < 8; ++ib) {
    const uint32_t shb = hdLoad<uint32_t>(b, ib);
    const uint32_t offset = (shb & 1) ? 32768 + 4096 : 4096;
    const float sl = d * float(int((shb & 0xFF) >> 1) - 64);
    for (int ig = 0; ig < 8; ++ig) {
      const int jj = ib * 8 + ig;
      const uint32_t idx = ql[jj] | ((uint32_t(qh[jj % 32]) << (8 - 4 * (jj / 32))) & 0xF00) | (((shb >> (8 + 3 * ig)) & 7) << 12);
      ktGroup(idx, offset, false, sl, 4, y);
      y += 4;
    }
  }
}

// ik_llama.cpp's row-interleaved ("repacked") types, iqk/iqk_quantize.cpp dequantize_row_*_r4 /
// _r8 at 8337e4c: a group of R rows is stored as the R rows' meta, then for each column block the
// R rows' blocks merged into one. Each formula gives row k's block of the merged block `b`; `meta`
// is the group's start (R row scales where the type has them).

// The 4-bit codes of the _R4 types: value j = i + 4m of row k's 32-value block ib is a nibble of
// qs[64 ib + 4k + i + 16 (m >> 2) + 32 (m & 1)], the high one when m & 2. All 32 at once, as
// ik_llama.cpp reads them (four bytes of each quarter, both nibbles): the value loops then run in
// order.
WS_HD void r4Nibbles(const uint8_t* qs, int ib, int k, uint8_t* codes) {
  const uint8_t* q = qs + 64 * ib + 4 * k;
  for (int i = 0; i < 4; ++i) {
    codes[i + 0] = q[i] & 0xF, codes[i + 8] = q[i] >> 4;
    codes[i + 16] = q[i + 16] & 0xF, codes[i + 24] = q[i + 16] >> 4;
    codes[i + 4] = q[i + 32] & 0xF, codes[i + 12] = q[i + 32] >> 4;
    codes[i + 20] = q[i + 48] & 0xF, codes[i + 28] = q[i + 48] >> 4;
  }
}
// Their fifth bits (IQ5_K_R4, IQ5_KS_R4): value j = i + 4m's is bit (m >> 1) + 4 (m & 1) of
// qh[16 ib + 4k + i]; added to the codes as bit 4.
WS_HD void r4AddFifthBits(const uint8_t* qhAll, int ib, int k, uint8_t* codes) {
  const uint8_t* qh = qhAll + 16 * ib + 4 * k;
  for (int i = 0; i < 4; ++i) {
    const uint32_t h = qh[i];
    codes[i + 0] |= (h << 4) & 16, codes[i + 8] |= (h << 3) & 16, codes[i + 16] |= (h << 2) & 16, codes[i + 24] |= (h << 1) & 16;
    codes[i + 4] |= h & 16, codes[i + 12] |= (h >> 1) & 16, codes[i + 20] |= (h >> 2) & 16, codes[i + 28] |= (h >> 3) & 16;
  }
}
// Scale `is` of 6 bits: 4 in scales_l, 2 in scales_h (IQ4_K_R4, IQ5_K_R4, IQ4_XS_R8).
WS_HD int r4Scale6(const uint8_t* sl, const uint8_t* sh, int is) { return ((sl[is % 32] >> 4 * (is / 32)) & 0xF) | (((sh[is % 16] >> 2 * (is / 16)) & 3) << 4); }

// IQ4_K_R4: d[4] (f16), extra[8], scales_h[16], scales_l[32], qs[512].
template <class Y>
WS_HD void iq4_k_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k);
  const uint8_t *extra = b + 8, *sh = b + 16, *sl = b + 32, *qs = b + 64;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const float dl1 = d * float(r4Scale6(sl, sh, 8 * ib + k) - 32);
    const float dl2 = d * float(r4Scale6(sl, sh, 8 * ib + k + 4) - 32);
    const uint32_t v1 = (extra[k] >> ib) & 1 ? 16 : 0, v2 = (extra[k + 4] >> ib) & 1 ? 16 : 0;
    uint8_t c[32];
    r4Nibbles(qs, ib, k, c);
    for (int j = 0; j < 16; ++j) y[j] = dl1 * float(hdIq4k(v1 + c[j]));
    for (int j = 16; j < 32; ++j) y[j] = dl2 * float(hdIq4k(v2 + c[j]));
    y += 32;
  }
}

// IQ4_KS_R4: the 4 rows' float scales first (`meta`); scales[32] (IQ4_KS's bytes), qs[512].
template <class Y>
WS_HD void iq4_ks_r4(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const float d = hdLoad<float>(meta, uint64_t(k));
  const uint8_t *scales = b, *qs = b + 32;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const uint8_t sc = scales[4 * ib + k];
    const float dl = d * float(int(sc & 254) - 127);
    const uint32_t v = uint32_t(sc & 1) << 4;
    uint8_t c[32];
    r4Nibbles(qs, ib, k, c);
    for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq4k(v + c[j]));
    for (int j = 16; j < 32; ++j) y[j] = dl * float(hdIq4k(v + c[j]));
    y += 32;
  }
}

// IQ5_K_R4: d[4] (f16), extra[8], scales_h[16], scales_l[32], qs[512], qh[128].
template <class Y>
WS_HD void iq5_k_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k);
  const uint8_t *extra = b + 8, *sh = b + 16, *sl = b + 32, *qs = b + 64, *qh = b + 576;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const float dl1 = d * float(r4Scale6(sl, sh, 8 * ib + k) - 32);
    const float dl2 = d * float(r4Scale6(sl, sh, 8 * ib + k + 4) - 32);
    const uint32_t v1 = (extra[k] >> ib) & 1 ? 32 : 0, v2 = (extra[k + 4] >> ib) & 1 ? 32 : 0;
    uint8_t c[32];
    r4Nibbles(qs, ib, k, c);
    r4AddFifthBits(qh, ib, k, c);
    for (int j = 0; j < 16; ++j) y[j] = dl1 * float(hdIq5nl(v1 + c[j]));
    for (int j = 16; j < 32; ++j) y[j] = dl2 * float(hdIq5nl(v2 + c[j]));
    y += 32;
  }
}

// IQ5_KS_R4: the 4 rows' float scales first (`meta`); scales[32], qs[512], qh[128].
template <class Y>
WS_HD void iq5_ks_r4(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const float d = hdLoad<float>(meta, uint64_t(k));
  const uint8_t *scales = b, *qs = b + 32, *qh = b + 544;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const uint8_t sc = scales[4 * ib + k];
    const float dl = d * float(int(sc & 254) - 127);
    const uint32_t v = uint32_t(sc & 1) << 5;
    uint8_t c[32];
    r4Nibbles(qs, ib, k, c);
    r4AddFifthBits(qh, ib, k, c);
    for (int j = 0; j < 16; ++j) y[j] = dl * float(hdIq5nl(v + c[j]));
    for (int j = 16; j < 32; ++j) y[j] = dl * float(hdIq5nl(v + c[j]));
    y += 32;
  }
}

// IQ2_K_R4: d[4] (f16), extra[8], scales[32] (4-bit, minus 8), qs[256]: value j = i + 4s (+16 for
// the second half) of block ib is bits 2s..2s+1 of qs[32 ib + 4k + i (+16)].
template <class Y>
WS_HD void iq2_k_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k);
  const uint8_t *extra = b + 8, *scales = b + 16, *qs = b + 48;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const int is = 8 * ib + k;
    const float dl1 = d * float(((scales[is % 32] >> 4 * (is / 32)) & 0xF) - 8);
    const float dl2 = d * float(((scales[(is + 4) % 32] >> 4 * ((is + 4) / 32)) & 0xF) - 8);
    const uint32_t v1 = (extra[k] >> ib) & 1 ? 4 : 0, v2 = (extra[k + 4] >> ib) & 1 ? 4 : 0;
    const uint8_t* ql = qs + 32 * ib + 4 * k;
    for (int j = 0; j < 16; ++j) y[j] = dl1 * float(hdIq2nl(v1 + ((ql[j & 3] >> 2 * (j >> 2)) & 3)));
    for (int j = 16; j < 32; ++j) y[j] = dl2 * float(hdIq2nl(v2 + ((ql[16 + (j & 3)] >> 2 * ((j >> 2) & 3)) & 3)));
    y += 32;
  }
}

// IQ3_K_R4: d[4] (f16), extra[8], scales_h[8] (signs), scales_l[32] (2s + 1), qs[256] as
// IQ2_K_R4's, qh[128]: the third bit of value j = i + 4s (+16) is bit s (+4) of qh[16 ib + 4k + i].
template <class Y>
WS_HD void iq3_k_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k);
  const uint8_t *extra = b + 8, *sh = b + 16, *sl = b + 24, *qs = b + 56, *qhAll = b + 312;
  for (int ib = 0; ib < QK / 32; ++ib) {
    float dl[2];
    for (int h = 0; h < 2; ++h) {
      const int is = 8 * ib + k + 4 * h;
      dl[h] = d * float(2 * ((sl[is % 32] >> 4 * (is / 32)) & 0xF) + 1) * float(((sh[is % 8] >> (is / 8)) & 1) ? -1 : 1);
    }
    const uint32_t v[2] = {(extra[k] >> ib) & 1 ? 8u : 0u, (extra[k + 4] >> ib) & 1 ? 8u : 0u};
    const uint8_t *ql = qs + 32 * ib + 4 * k, *qh = qhAll + 16 * ib + 4 * k;
    uint8_t c[32];
    for (int i = 0; i < 4; ++i)
      for (int s = 0; s < 4; ++s) {
        c[i + 4 * s] = uint8_t(((ql[i] >> 2 * s) & 3) | (((qh[i] >> s) & 1) << 2));
        c[16 + i + 4 * s] = uint8_t(((ql[16 + i] >> 2 * s) & 3) | (((qh[i] >> (4 + s)) & 1) << 2));
      }
    for (int j = 0; j < 16; ++j) y[j] = dl[0] * float(hdIq3nl(v[0] + c[j]));
    for (int j = 16; j < 32; ++j) y[j] = dl[1] * float(hdIq3nl(v[1] + c[j]));
    y += 32;
  }
}

// Q4_K_R4: d[4] and dmin[4] (f16), scales_h[16], scales_l[32] (6-bit scale and min of each 32),
// qs[512]. GCC fuses ik_llama.cpp's dl * q - ml where FMA exists, which changes nothing here: dl is
// an f16 times a 6-bit scale and q 4 bits, so the product is exact (at most 21 significant bits).
template <class Y>
WS_HD void q4_k_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k), m = f16(b + 8 + 2 * k);
  const uint8_t *sh = b + 16, *sl = b + 32, *qs = b + 64;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const int is = 4 * ib + k;
    const uint8_t h = uint8_t(sh[is % 16] >> 4 * (is / 16));
    const float dl = d * float((sl[is] & 0xF) | ((h & 0x03) << 4));
    const float ml = m * float((sl[is] >> 4) | ((h & 0x0C) << 2));
    uint8_t c[32];
    r4Nibbles(qs, ib, k, c);
    for (int j = 0; j < 32; ++j) y[j] = dl * float(c[j]) - ml;
    y += 32;
  }
}

// Q6_K_R4: d[4] (f16), scales[64] (int8), qh[256], ql[512]: value j = i + 4m takes ql's nibble as
// r4Nibbles reads them (64 bytes a block), and two high bits, field (m >> 1 & 1) + 2 (m & 1), of
// qh[32 ib + 4k + i + 16 (m >> 2)]; minus 32.
template <class Y>
WS_HD void q6_k_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k);
  const uint8_t *scales = b + 8, *qhAll = b + 72, *ql = b + 328;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const float dl1 = d * float(int8_t(scales[8 * ib + k]));
    const float dl2 = d * float(int8_t(scales[8 * ib + k + 4]));
    const uint8_t* qh = qhAll + 32 * ib + 4 * k;
    uint8_t c[32];
    r4Nibbles(ql, ib, k, c);
    for (int i = 0; i < 4; ++i) {
      const uint32_t h1 = qh[i], h2 = qh[i + 16];
      c[i + 0] |= (h1 << 4) & 0x30, c[i + 8] |= (h1 << 2) & 0x30, c[i + 4] |= h1 & 0x30, c[i + 12] |= (h1 >> 2) & 0x30;
      c[i + 16] |= (h2 << 4) & 0x30, c[i + 24] |= (h2 << 2) & 0x30, c[i + 20] |= h2 & 0x30, c[i + 28] |= (h2 >> 2) & 0x30;
    }
    for (int j = 0; j < 16; ++j) y[j] = dl1 * float(int(c[j]) - 32);
    for (int j = 16; j < 32; ++j) y[j] = dl2 * float(int(c[j]) - 32);
    y += 32;
  }
}

// Q8_0_R8: d[8] (f16), qs[256] (int8): value j of row k is qs[128 (j >> 4) + 32 ((j >> 2) & 3) + 4k + (j & 3)].
template <class Y>
WS_HD void q8_0_r8(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float scale = f16(b + 2 * k);
  const uint8_t* qs = b + 16 + 4 * k;
  for (int l = 0; l < 4; ++l)
    for (int i = 0; i < 4; ++i) {
      y[4 * l + i] = scale * float(int8_t(qs[32 * l + i]));
      y[4 * l + i + 16] = scale * float(int8_t(qs[32 * l + i + 128]));
    }
}

// IQ4_XS_R8: d[8] (f16), scales_h[16], scales_l[32], qs[1024]: value j = 8l + i (+4 for the high
// nibble) of block ib is a nibble of qs[128 ib + 4k + i + 32 l], through iq4nl.
template <class Y>
WS_HD void iq4_xs_r8(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k);
  const uint8_t *sh = b + 16, *sl = b + 32, *qs = b + 64;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const float dl = d * float(r4Scale6(sl, sh, 8 * ib + k) - 32);
    const uint8_t* q = qs + 128 * ib + 4 * k;
    for (int l = 0; l < 4; ++l)
      for (int i = 0; i < 4; ++i) {
        y[8 * l + i] = dl * float(hdIq4k(q[32 * l + i] & 0xF));
        y[8 * l + i + 4] = dl * float(hdIq4k(q[32 * l + i] >> 4));
      }
    y += 32;
  }
}

// TQ1_0's trit: the top of 3 x the byte's fraction of 256 (the byte was multiplied by a power of 3
// first), minus 1.
WS_HD float tq1Trit(uint8_t q) { return float(int16_t((uint16_t(q) * 3) >> 8) - 1); }

template <class Y>
WS_HD void tq1_0(const uint8_t* __restrict b, Y y) {
  // block_tq1_0: qs[48] (5 trits a byte), qh[4] (4 trits a byte), d
  static const uint8_t pow3[6] = {1, 3, 9, 27, 81, 243};
  const uint8_t* qs = b;
  const uint8_t* qh = b + 48;
  const float d = f16(b + 52);
  for (int j = 0; j < 32; j += 32)
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 32; ++m) *y++ = tq1Trit(uint8_t(qs[j + m] * pow3[n])) * d;
  for (int j = 32; j < 48; j += 16)
    for (int n = 0; n < 5; ++n)
      for (int m = 0; m < 16; ++m) *y++ = tq1Trit(uint8_t(qs[j + m] * pow3[n])) * d;
  for (int n = 0; n < 4; ++n)
    for (int j = 0; j < 4; ++j) *y++ = tq1Trit(uint8_t(qh[j] * pow3[n])) * d;
}

template <class Y>
WS_HD void tq2_0(const uint8_t* __restrict b, Y y) {
  const uint8_t* qs = b;
  const float d = f16(b + 64);
  for (int j = 0; j < 64; j += 32)
    for (int l = 0; l < 4; ++l)
      for (int m = 0; m < 32; ++m) *y++ = float(int8_t((qs[j + m] >> (l * 2)) & 3) - 1) * d;
}

template <class Y>
WS_HD void mxfp4(const uint8_t* __restrict b, Y y) {
  const float d = hdGgmlE8m0Half(b[0]);
  const uint8_t* qs = b + 1;
  for (int j = 0; j < 16; ++j) {
    y[j] = float(hdMxfp4Doubled(qs[j] & 0x0F)) * d;
    y[j + 16] = float(hdMxfp4Doubled(qs[j] >> 4)) * d;
  }
}

template <class Y>
WS_HD void nvfp4(const uint8_t* __restrict b, Y y) {
  const uint8_t* qs = b + 4;
  for (int s = 0; s < 4; ++s) {
    const float d = hdGgmlUe4m3Half(b[s]);
    for (int j = 0; j < 8; ++j) {
      y[s * 16 + j] = float(hdMxfp4Doubled(qs[s * 8 + j] & 0x0F)) * d;
      y[s * 16 + j + 8] = float(hdMxfp4Doubled(qs[s * 8 + j] >> 4)) * d;
    }
  }
}

template <class Y>
WS_HD void q1_0(const uint8_t* __restrict b, Y y) {  // sign bits, LSB first: 1 -> +d, 0 -> -d
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 128; ++j) y[j] = float(int((qs[j >> 3] >> (j & 7)) & 1) * 2 - 1) * d;
}

template <class Y>
WS_HD void q2_0(const uint8_t* __restrict b, Y y) {  // 2-bit codes c, LSB first: (c - 1) * d
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 64; ++j) y[j] = float(int((qs[j >> 2] >> ((j & 3) * 2)) & 3) - 1) * d;
}



// ---- The I-quant codebook types (ggml-quants.c dequantize_row_iq2_xxs ... iq1_m). Each 8 (or 4)
// values come from one grid point (iq_grids.h) times a sub-block scale, with signs or a shift.

WS_HD uint32_t u32(const uint8_t* p) { return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24); }
WS_HD uint32_t gridByte(uint64_t point, int j) { return uint32_t(point >> (8 * j)) & 0xFF; }
// ggml's ksigns_iq2xs[i]: the 7 stored sign bits, and an eighth that makes the count of set bits
// even (the quantizer flips the smallest value to keep it so). Computed rather than tabled.
WS_HD uint32_t ksigns(uint32_t i) {
  uint32_t p = i ^ (i >> 4);
  p ^= p >> 2;
  p ^= p >> 1;
  return i | ((p & 1) << 7);
}
WS_HD float signOf(uint32_t signs, int j) { return (signs >> j) & 1 ? -1.f : 1.f; }
constexpr float kIq1sDelta = 0.125f;  // IQ1S_DELTA, IQ1M_DELTA
// IQ3: 8 values from two 4-coordinate grid points, signed by the 8 bits of `signs`.
template <class Y>
WS_HD void iq3Octet(Y y, float db, uint32_t grid1, uint32_t grid2, uint32_t signs) {
  for (int j = 0; j < 4; ++j) {
    y[j + 0] = db * float(gridByte(grid1, j)) * signOf(signs, j + 0);
    y[j + 4] = db * float(gridByte(grid2, j)) * signOf(signs, j + 4);
  }
}
// IQ1_M's fp16 block scale, kept in the top nibbles of its four scale words at byte 48.
WS_HD float iq1mD(const uint8_t* b) {
  const uint32_t sc0 = u16(b + 48), sc1 = u16(b + 50), sc2 = u16(b + 52), sc3 = u16(b + 54);
  return hdHalfToFloat(uint16_t((sc0 >> 12) | ((sc1 >> 8) & 0x00f0) | ((sc2 >> 4) & 0x0f00) | (sc3 & 0xf000)));
}

// block_iq2_xxs: d, qs[32] u16 - per 32 values two words: 4 grid indices, then 4 x 7 sign bits
// and a 4-bit scale
template <class Y>
WS_HD void iq2_xxs(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  for (int ib32 = 0; ib32 < QK / 32; ++ib32) {
    const uint8_t* q = b + 2 + 8 * ib32;
    const uint32_t aux1 = u32(q + 4);
    const float db = d * (0.5f + float(aux1 >> 28)) * 0.25f;
    for (int l = 0; l < 4; ++l) {
      const uint64_t grid = grids::hdIq2xxsGrid(q[l]);
      const uint32_t signs = ksigns((aux1 >> 7 * l) & 127);
      for (int j = 0; j < 8; ++j) y[j] = db * float(gridByte(grid, j)) * signOf(signs, j);
      y += 8;
    }
  }
}

// block_iq2_xs: d, qs[32] u16 (9-bit grid index, 7 sign bits), scales[8] (two 4-bit scales)
template <class Y>
WS_HD void iq2_xs(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const uint8_t* scales = b + 66;
  for (int ib32 = 0; ib32 < QK / 32; ++ib32) {
    const float db0 = d * (0.5f + float(scales[ib32] & 0xf)) * 0.25f;
    const float db1 = d * (0.5f + float(scales[ib32] >> 4)) * 0.25f;
    for (int l = 0; l < 4; ++l) {
      const uint32_t q = u16(b + 2 + 2 * (4 * ib32 + l));
      const uint64_t grid = grids::hdIq2xsGrid(q & 511);
      const uint32_t signs = ksigns(q >> 9);
      const float dl = l / 2 ? db1 : db0;
      for (int j = 0; j < 8; ++j) y[j] = dl * float(gridByte(grid, j)) * signOf(signs, j);
      y += 8;
    }
  }
}

// block_iq2_s: d, qs[64] (32 low index bytes, then 32 sign bytes), qh[8], scales[8]
template <class Y>
WS_HD void iq2_s(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  const uint8_t* signs = b + 2 + 32;
  const uint8_t* qh = b + 66;
  const uint8_t* scales = b + 74;
  for (int ib32 = 0; ib32 < QK / 32; ++ib32) {
    const float db0 = d * (0.5f + float(scales[ib32] & 0xf)) * 0.25f;
    const float db1 = d * (0.5f + float(scales[ib32] >> 4)) * 0.25f;
    for (int l = 0; l < 4; ++l) {
      const float dl = l / 2 ? db1 : db0;
      const uint64_t grid = grids::hdIq2sGrid(qs[l] | ((uint32_t(qh[ib32]) << (8 - 2 * l)) & 0x300));
      for (int j = 0; j < 8; ++j) y[j] = dl * float(gridByte(grid, j)) * signOf(signs[l], j);
      y += 8;
    }
    qs += 4;
    signs += 4;
  }
}

// block_iq3_xxs: d, qs[96] (64 grid index bytes, then per 32 values a word of 4 x 7 sign bits
// and a 4-bit scale)
template <class Y>
WS_HD void iq3_xxs(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  const uint8_t* scalesAndSigns = b + 2 + 64;
  for (int ib32 = 0; ib32 < QK / 32; ++ib32) {
    const uint32_t aux = u32(scalesAndSigns + 4 * ib32);
    const float db = d * (0.5f + float(aux >> 28)) * 0.5f;
    for (int l = 0; l < 4; ++l) {
      const uint32_t signs = ksigns((aux >> 7 * l) & 127);
      iq3Octet(y, db, grids::hdIq3xxsGrid(qs[2 * l + 0]), grids::hdIq3xxsGrid(qs[2 * l + 1]), signs);
      y += 8;
    }
    qs += 8;
  }
}

// block_iq3_s: d, qs[64], qh[8] (ninth index bits), signs[32], scales[4] (two 4-bit scales)
template <class Y>
WS_HD void iq3_s(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  const uint8_t* qh = b + 66;
  const uint8_t* signs = b + 74;
  const uint8_t* scales = b + 106;
  for (int ib32 = 0; ib32 < QK / 32; ib32 += 2) {
    const float db1 = d * float(1 + 2 * (scales[ib32 / 2] & 0xf));
    const float db2 = d * float(1 + 2 * (scales[ib32 / 2] >> 4));
    for (int half = 0; half < 2; ++half) {
      const float db = half ? db2 : db1;
      for (int l = 0; l < 4; ++l) {
        const uint32_t grid1 = grids::hdIq3sGrid(qs[2 * l + 0] | ((uint32_t(qh[half]) << (8 - 2 * l)) & 256));
        const uint32_t grid2 = grids::hdIq3sGrid(qs[2 * l + 1] | ((uint32_t(qh[half]) << (7 - 2 * l)) & 256));
        iq3Octet(y, db, grid1, grid2, signs[l]);
        y += 8;
      }
      qs += 8;
      signs += 4;
    }
    qh += 2;
  }
}

// block_iq1_s: d, qs[32] (low index bytes), qh[8] u16 (3 index bits x 4, a 3-bit scale, the
// delta's sign); grid coordinates are -1, 0, 1
template <class Y>
WS_HD void iq1_s(const uint8_t* __restrict b, Y y) {
  const float d = f16(b);
  const uint8_t* qs = b + 2;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const uint32_t qh = u16(b + 34 + 2 * ib);
    const float dl = d * float(2 * ((qh >> 12) & 7) + 1);
    const float delta = qh & 0x8000 ? -kIq1sDelta : kIq1sDelta;
    for (int l = 0; l < 4; ++l) {
      const uint64_t grid = grids::hdIq1sGrid(qs[l] | (((qh >> 3 * l) & 7) << 8));
      for (int j = 0; j < 8; ++j) y[j] = dl * (float(int8_t(gridByte(grid, j))) + delta);
      y += 8;
    }
    qs += 4;
  }
}

// block_iq1_m: qs[32], qh[16] (3 index bits and a delta sign per 8 values), scales[8] (four u16:
// 3-bit sub-block scales, and the fp16 block scale in their top nibbles)
template <class Y>
WS_HD void iq1_m(const uint8_t* __restrict b, Y y) {
  const uint8_t* qs = b;
  const uint8_t* qh = b + 32;
  uint32_t sc[4];
  for (int k = 0; k < 4; ++k) sc[k] = u16(b + 48 + 2 * k);
  const float d = iq1mD(b);
  for (int ib = 0; ib < QK / 32; ++ib) {
    const float dl1 = d * float(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 0x7) + 1);
    const float dl2 = d * float(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 0x7) + 1);
    const uint32_t idx[4] = {qs[0] | ((uint32_t(qh[0]) << 8) & 0x700), qs[1] | ((uint32_t(qh[0]) << 4) & 0x700),
                             qs[2] | ((uint32_t(qh[1]) << 8) & 0x700), qs[3] | ((uint32_t(qh[1]) << 4) & 0x700)};
    const float delta[4] = {qh[0] & 0x08 ? -kIq1sDelta : kIq1sDelta, qh[0] & 0x80 ? -kIq1sDelta : kIq1sDelta,
                            qh[1] & 0x08 ? -kIq1sDelta : kIq1sDelta, qh[1] & 0x80 ? -kIq1sDelta : kIq1sDelta};
    for (int l = 0; l < 4; ++l) {
      const float dl = l < 2 ? dl1 : dl2;
      const uint64_t grid = grids::hdIq1sGrid(idx[l]);
      for (int j = 0; j < 8; ++j) y[j] = dl * (float(int8_t(gridByte(grid, j))) + delta[l]);
      y += 8;
    }
    qs += 4;
    qh += 2;
  }
}

// ik_llama.cpp's ternary types (iqk/iqk_quantize.cpp at 8337e4c). Each row starts with its scale:
// IQ1_BN an f16, IQ2_BN an f32 (quantize_one_row_1bn / _2bn). The CPU to_float
// (dequantize_row_iq1_bn / _iq2_bn) returns the ternary values and never applies it; the CUDA
// dequantization (ggml-cuda/convert.cu dequantize_block_iq1_bn / _iq2_bn) multiplies by it. Values
// are d x (t - 1), t in 0..2: exact in float32 however formed (IQ2_BN's d * q + (-d) fused is
// d (q - 1) rounded once, which is exact).

// IQ1_BN: ql[12] hold five trits a byte (byte x 81, 27, 9, 3, 1 mod 256, then (v + v / 2) >> 7),
// `extra` the sixteenth of each 16 values.
WS_HD int bnTrit(uint8_t q, uint32_t mult) {
  const uint32_t v = uint8_t(q * mult);
  return int((v + (v >> 1)) >> 7);
}
template <class Y>
WS_HD void iq1_bn(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = f16(meta);
  const uint8_t* ql = b;
  const uint8_t extra = b[12];
  const uint32_t mult[5] = {81, 27, 9, 3, 1};
  for (int i16 = 0; i16 < 4; ++i16) {
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 5; ++j) *y++ = d * float(bnTrit(ql[3 * i16 + k], mult[j]) - 1);
    *y++ = d * float(bnTrit(extra, mult[i16]) - 1);
  }
}

// IQ2_BN: qs[16], value j + 16 s in bits 2s of qs[j].
template <class Y>
WS_HD void iq2_bn(const uint8_t* __restrict meta, const uint8_t* __restrict b, Y y) {
  const float d = hdLoad<float>(meta, 0);
  for (int s = 0; s < 4; ++s)
    for (int j = 0; j < 16; ++j) y[16 * s + j] = d * float(int((b[j] >> (2 * s)) & 3) - 1);
}

// IQ2_BN_R4 (dequantize_row_iq2_bn_r4): the 4 rows' f32 scales first; row k's value 16 l + i + 4 s
// in bits 2s of qs[4k + i + 16 l]. Its CPU to_float applies the scales.
template <class Y>
WS_HD void iq2_bn_r4(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const float d = hdLoad<float>(meta, uint64_t(k));
  for (int l = 0; l < 4; ++l)
    for (int i = 0; i < 4; ++i) {
      const uint8_t q = b[4 * k + i + 16 * l];
      for (int s = 0; s < 4; ++s) y[16 * l + i + 4 * s] = d * float(int((q >> (2 * s)) & 3) - 1);
    }
}

// Q4_0_R8 (dequantize_row_q4_0_r8): d[8] (f16), qs[128]: value 4l + i (+16 the high nibble) of row
// k is a nibble of qs[32 l + 4k + i], minus 8.
template <class Y>
WS_HD void q4_0_r8(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float scale = f16(b + 2 * k);
  const uint8_t* qs = b + 16 + 4 * k;
  for (int l = 0; l < 4; ++l)
    for (int i = 0; i < 4; ++i) {
      y[4 * l + i] = scale * float(int(qs[32 * l + i] & 0xF) - 8);
      y[4 * l + i + 16] = scale * float(int(qs[32 * l + i] >> 4) - 8);
    }
}

// IQ4_NL_R4 (dequantize_row_iq4_nl_r4): d[4] (f16), qs[64] in the _R4 nibble order, through iq4nl
// (ik's iq4k_values, whose first half it is).
template <class Y>
WS_HD void iq4_nl_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float scale = f16(b + 2 * k);
  const uint8_t* qs = b + 8 + 4 * k;
  for (int h = 0; h < 4; ++h)  // qs quarter h holds values 16 (h & 1) + 4 (h >> 1) + i, +8 the high nibble
    for (int i = 0; i < 4; ++i) {
      const int at = 16 * (h & 1) + 4 * (h >> 1) + i;
      y[at] = scale * float(hdIq4nl(qs[16 * h + i] & 0xF));
      y[at + 8] = scale * float(hdIq4nl(qs[16 * h + i] >> 4));
    }
}

// Q5_0_R4 / Q6_0_R4 (dequantize_row_q5_0_r4 / _q6_0_r4): d[4] (f16), qh, qs[64]. Value
// ll + i (+8 the high nibble), ll = 16 (l % 2) + 4 (l / 2), is the nibble of qs[4k + i + 16 l]
// with its high bits from qh; d * code + (-16 d or -32 d), each product exact (an 11-bit scale
// times a 6-bit code), so fused or not the one rounding is the same.
template <class Y>
WS_HD void q5_0_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k), m = -16 * d;
  const uint8_t *qh = b + 8, *qs = b + 24;
  for (int l = 0; l < 4; ++l) {
    const int ll = 16 * (l % 2) + 4 * (l / 2);
    for (int i = 0; i < 4; ++i) {
      const uint32_t q = qs[4 * k + i + 16 * l], h = qh[4 * k + i];
      y[i + ll] = d * float((q & 0xF) | (((h >> l) & 1) << 4)) + m;
      y[i + ll + 8] = d * float((q >> 4) | (((h >> (l + 4)) & 1) << 4)) + m;
    }
  }
}
template <class Y>
WS_HD void q6_0_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k), m = -32 * d;
  const uint8_t *qh = b + 8, *qs = b + 40;
  for (int l = 0; l < 4; ++l) {
    const int ll = 16 * (l % 2) + 4 * (l / 2);
    for (int i = 0; i < 4; ++i) {
      const uint32_t q = qs[4 * k + i + 16 * l], h = qh[4 * k + i + 16 * (l % 2)];
      y[i + ll] = d * float((q & 0xF) | (((h >> (2 * (l / 2))) & 3) << 4)) + m;
      y[i + ll + 8] = d * float((q >> 4) | (((h >> (2 * (l / 2) + 4)) & 3) << 4)) + m;
    }
  }
}

// MXFP4_R8 (dequantize_row_mxfp4_r8): e[8] (E8M0), qs[128]: value 4j + i (+16 the high nibble) of
// row k is a nibble of qs[32 j + 4k + i], through the doubled E2M1 table times half the exponent.
template <class Y>
WS_HD void mxfp4_r8(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = hdGgmlE8m0Half(b[k]);
  const uint8_t* qs = b + 8 + 4 * k;
  uint8_t c[16];
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) c[4 * j + i] = qs[32 * j + i];
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float(hdMxfp4Doubled(c[j] & 0x0F));
    y[j + 16] = d * float(hdMxfp4Doubled(c[j] >> 4));
  }
}

// Q8_K_R8 (dequantize_row_q8_k_r8): d[8] (f16), qs[2048] (int8): value 4 ib + i of row k is
// qs[32 ib + 4k + i].
template <class Y>
WS_HD void q8_k_r8(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k);
  const uint8_t* qs = b + 16 + 4 * k;
  for (int ib = 0; ib < QK / 4; ++ib)
    for (int i = 0; i < 4; ++i) y[4 * ib + i] = d * float(int8_t(qs[32 * ib + i]));
}

// Q8_K_R16 (dequantize_row_q8_k_r16): d[16] (f16), qs[4096] read unsigned: value 4 ib + i of row k
// is d * qs[64 ib + 4k + i] - 128 d (the product exact, as Q5_0_R4's).
template <class Y>
WS_HD void q8_k_r16(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k), m = -128.f * d;
  const uint8_t* qs = b + 32 + 4 * k;
  for (int ib = 0; ib < QK / 4; ++ib)
    for (int i = 0; i < 4; ++i) y[4 * ib + i] = d * float(qs[64 * ib + i]) + m;
}

// BF16_R16 (repack_bf16, iqk/iqk_quantize.cpp; ik_llama.cpp registers no to_float): 16 rows'
// values in pairs, value 2p + j of row k at bf16 [32 p + 2 k + j]. ik's block is one value of 2
// bytes, so block i's address in the group's merged blocks, group + 32 i, is its pair's start for
// an even i and 32 bytes past it for an odd one.
template <class Y>
WS_HD void bf16_r16(const uint8_t* __restrict group, const uint8_t* __restrict b, int k, Y y) {
  const bool odd = ((b - group) / 32) % 2;
  y[0] = hdBf16ToFloat(hdLoad<uint16_t>(b - (odd ? 30 : 0) + 4 * k, 0));
}

// Q8_KV_R8 (dequantize_row_q8_KV_r8): the 8 rows' f32 scales first; per 16 columns 128 bytes, value
// 16 h + 4 l + i of row k at qs[128 h + 32 l + 4k + i] (int8). A 32-column block is two of them.
template <class Y>
WS_HD void q8_kv_r8(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const float d = hdLoad<float>(meta, uint64_t(k));
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 4; ++l)
      for (int i = 0; i < 4; ++i) y[16 * h + 4 * l + i] = d * float(int8_t(b[128 * h + 32 * l + 4 * k + i]));
}

// The K-quant repacks (dequantize_row_q2_k_r4 / _q3_k_r4 / _q5_k_r4). Their dl * q - ml fuse or
// not alike: every product is exact (an f16 times a scale of at most 6 bits times a code of at
// most 5 bits is at most 22 significant bits).
// Q2_K_R4: d[4] and m[4] (f16), scales[64] (4-bit scale, 4-bit min), qs[256]: value i + 4s
// (+16) of block ib is bits 2s of qs[32 ib + 4k + i] (+16).
template <class Y>
WS_HD void q2_k_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k), m = f16(b + 8 + 2 * k);
  const uint8_t *scales = b + 16, *qs = b + 80;
  for (int ib = 0; ib < QK / 32; ++ib) {
    for (int half = 0; half < 2; ++half) {
      const uint8_t sc = scales[8 * ib + k + 4 * half];
      const float dl = d * float(sc & 0xF), ml = m * float(sc >> 4);
      const uint8_t* q = qs + 32 * ib + 4 * k + 16 * half;
      for (int s = 0; s < 4; ++s)
        for (int i = 0; i < 4; ++i) y[16 * half + 4 * s + i] = dl * float((q[i] >> (2 * s)) & 3) - ml;
    }
    y += 32;
  }
}

// Q3_K_R4: d[4] (f16), scales_h[16], scales_l[32] (6-bit scales minus 32), qh[128], qs[256]: value
// i + 4s (+16) of block ib is bits 2s of qs[32 ib + 4k + i] (+16) with bit s (+4) of
// qh[16 ib + 4k + i] above them, minus 4.
template <class Y>
WS_HD void q3_k_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k);
  const uint8_t *sh = b + 8, *sl = b + 24, *qhAll = b + 56, *qs = b + 184;
  for (int ib = 0; ib < QK / 32; ++ib) {
    for (int half = 0; half < 2; ++half) {
      const float dl = d * float(r4Scale6(sl, sh, 8 * ib + k + 4 * half) - 32);
      const uint8_t* q = qs + 32 * ib + 4 * k + 16 * half;
      const uint8_t* qh = qhAll + 16 * ib + 4 * k;
      for (int s = 0; s < 4; ++s)
        for (int i = 0; i < 4; ++i) {
          const int code = int(((q[i] >> (2 * s)) & 3) | (((qh[i] >> (s + 4 * half)) & 1) << 2)) - 4;
          y[16 * half + 4 * s + i] = dl * float(code);
        }
    }
    y += 32;
  }
}

// Q5_K_R4: Q4_K_R4's d, dmin, scales and nibbles (qs[1024] after qh[128]), each code's fifth bit in
// qh[16 ib + 4k + i]: bits 0 1 2 3 4 5 6 7 for values i + 0, 8, 4, 12, 16, 24, 20, 28 (not IQ5_K_R4's order).
template <class Y>
WS_HD void q5_k_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k), m = f16(b + 8 + 2 * k);
  const uint8_t *sh = b + 16, *sl = b + 32, *qhAll = b + 64, *qs = b + 192;
  const int bitOf[8] = {0, 2, 1, 3, 4, 6, 5, 7};  // value i + 4 s's bit, s = 0..7
  for (int ib = 0; ib < QK / 32; ++ib) {
    const int is = 4 * ib + k;
    const uint8_t h = uint8_t(sh[is % 16] >> 4 * (is / 16));
    const float dl = d * float((sl[is] & 0xF) | ((h & 0x03) << 4));
    const float ml = m * float((sl[is] >> 4) | ((h & 0x0C) << 2));
    uint8_t c[32];
    r4Nibbles(qs, ib, k, c);
    const uint8_t* qh = qhAll + 16 * ib + 4 * k;
    for (int s = 0; s < 8; ++s)
      for (int i = 0; i < 4; ++i) c[4 * s + i] |= uint8_t(((qh[i] >> bitOf[s]) & 1) << 4);
    for (int j = 0; j < 32; ++j) y[j] = dl * float(c[j]) - ml;
    y += 32;
  }
}

// The I-quant repacks (dequantize_row_iq2_xxs_r4 ... _iq1_m_r4): the grids of the plain types, each
// row's indices, scales and signs interleaved by fours. Values are scale x grid x sign, as ggml's.

// IQ2_XXS_R4 / IQ3_XXS_R4: d[4] (f16), sas[128] (a word a row and 32 values: the scale in bit 0 of
// each byte, the signs in the rest, decoded as w & 0xfefefefe, then w ^ w >> 1), then the indices.
WS_HD uint32_t r4SasScale(uint32_t w) { return (w & 1) | ((w >> 7) & 2) | ((w >> 14) & 4) | ((w >> 21) & 8); }
WS_HD uint32_t r4SasSigns(uint32_t w) {
  w &= 0xfefefefeu;
  return w ^ (w >> 1);
}
// kPoint values a grid point: 8 for IQ2_XXS_R4 (iq2xxs_grid, d x 1/8), 4 for IQ3_XXS_R4
// (iq3xxs_grid, d x 1/4); 32 / kPoint indices a row and block, at qs[4 n ib + n k + i].
template <int kPoint, class Y>
WS_HD void sasR4(const uint8_t* __restrict b, int k, Y y) {
  constexpr int n = 32 / kPoint;
  const float d = (kPoint == 8 ? 0.125f : 0.25f) * f16(b + 2 * k);
  const uint8_t *sas = b + 8, *qs = b + 136;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const uint32_t w = u32(sas + 4 * (4 * ib + k)), signs = r4SasSigns(w);
    const float dl = d * float(2 * r4SasScale(w) + 1);
    for (int i = 0; i < n; ++i) {
      const uint8_t index = qs[4 * n * ib + n * k + i];
      const uint64_t grid = kPoint == 8 ? grids::hdIq2xxsGrid(index) : grids::hdIq3xxsGrid(index);
      for (int j = 0; j < kPoint; ++j) y[kPoint * i + j] = dl * float(int8_t(gridByte(grid, j))) * signOf(signs >> (kPoint * i), j);
    }
    y += 32;
  }
}
template <class Y>
WS_HD void iq2_xxs_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) { sasR4<8>(b, k, y); }
template <class Y>
WS_HD void iq3_xxs_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) { sasR4<4>(b, k, y); }

// IQ2_XS_R4: d[4] (f16), qs[128] (u16: a 9-bit index, 7 sign bits s decoded as s ^ s << 1),
// scales[32] (two 4-bit scales, 2s + 1).
template <class Y>
WS_HD void iq2_xs_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = 0.125f * f16(b + 2 * k);
  const uint8_t *qs = b + 8, *scales = b + 264;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const float dl1 = d * float(2 * (scales[4 * ib + k] & 0xF) + 1), dl2 = d * float(2 * (scales[4 * ib + k] >> 4) + 1);
    for (int i = 0; i < 4; ++i) {
      const uint32_t q = u16(qs + 2 * (16 * ib + 4 * k + i)), s7 = q >> 9, signs = s7 ^ (s7 << 1);
      const uint64_t grid = grids::hdIq2xsGrid(q & 511);
      const float dl = i < 2 ? dl1 : dl2;
      for (int j = 0; j < 8; ++j) y[8 * i + j] = dl * float(int8_t(gridByte(grid, j))) * signOf(signs, j);
    }
    y += 32;
  }
}

// IQ2_S_R4: d[4] (f16), qs[128], qh[32] (2 more index bits each), signs[128], scales[32].
template <class Y>
WS_HD void iq2_s_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = 0.125f * f16(b + 2 * k);
  const uint8_t *qs = b + 8, *qh = b + 136, *signs = b + 168, *scales = b + 296;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const float dl1 = d * float(2 * (scales[4 * ib + k] & 0xF) + 1), dl2 = d * float(2 * (scales[4 * ib + k] >> 4) + 1);
    for (int i = 0; i < 4; ++i) {
      const uint32_t index = qs[16 * ib + 4 * k + i] | ((uint32_t(qh[4 * ib + k]) << (8 - 2 * i)) & 0x300);
      const uint64_t grid = grids::hdIq2sGrid(index);
      const float dl = i < 2 ? dl1 : dl2;
      for (int j = 0; j < 8; ++j) y[8 * i + j] = dl * float(int8_t(gridByte(grid, j))) * signOf(signs[16 * ib + 4 * k + i], j);
    }
    y += 32;
  }
}

// IQ3_S_R4: d[4] (f16), qs[256], qh[32] (a ninth index bit each), signs[128], scales[16]
// (4-bit, 2s + 1): values 4i + j and 16 + 4i + j from two grid points, their signs bits i and
// i + 4 of signs[16 ib + 4k + j].
template <class Y>
WS_HD void iq3_s_r4(const uint8_t* __restrict, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(b + 2 * k);
  const uint8_t *qs = b + 8, *qh = b + 264, *signs = b + 296, *scales = b + 424;
  for (int ib = 0; ib < QK / 32; ++ib) {
    const int l = 4 * ib + k;
    const float dl = d * float(1 + 2 * ((scales[l % 16] >> 4 * (l / 16)) & 0xF));
    const uint32_t h = qh[4 * ib + k];
    for (int i = 0; i < 4; ++i) {
      const uint32_t grid1 = grids::hdIq3sGrid(qs[32 * ib + k + 8 * i] + ((h << (8 - i)) & 0x100));
      const uint32_t grid2 = grids::hdIq3sGrid(qs[32 * ib + k + 8 * i + 4] + ((h << (4 - i)) & 0x100));
      for (int j = 0; j < 4; ++j) {
        const uint32_t sg = signs[16 * ib + 4 * k + j];
        y[4 * i + j] = dl * float(gridByte(grid1, j)) * signOf(sg, i);
        y[4 * i + 16 + j] = dl * float(gridByte(grid2, j)) * signOf(sg, i + 4);
      }
    }
    y += 32;
  }
}

// IQ1_S_R4 / IQ1_M_R4: the 4 rows' f16 scales first (`meta`); blocks of 32.
// IQ1_S_R4: qs[16], qh[4] (u16: 3 index bits per 8 values, a 3-bit scale 2s + 1, the delta's sign).
template <class Y>
WS_HD void iq1_s_r4(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const uint32_t qh = u16(b + 16 + 2 * k);
  const float shift = qh & 0x8000 ? -kIq1sDelta : kIq1sDelta;
  const float dl = f16(meta + 2 * k) * float(2 * ((qh >> 12) & 7) + 1);
  for (int i = 0; i < 4; ++i) {
    const uint64_t grid = grids::hdIq1sGrid(b[4 * i + k] | (((qh >> 3 * i) & 7) << 8));
    for (int j = 0; j < 8; ++j) y[8 * i + j] = dl * (float(int8_t(gridByte(grid, j))) + shift);
  }
}
// IQ1_M_R4: qs[16], qh[8] (3 index bits and a delta sign per 8 values), scales[4] (two 4-bit
// scales, taken as they are - not 2s + 1 as IQ1_M's).
template <class Y>
WS_HD void iq1_m_r4(const uint8_t* __restrict meta, const uint8_t* __restrict b, int k, Y y) {
  const float d = f16(meta + 2 * k);
  const uint8_t *qs = b, *qh = b + 16;
  const uint8_t sc = b[24 + k];
  for (int i = 0; i < 2; ++i) {
    const float dl = d * float(i ? sc >> 4 : sc & 0xF);
    const uint32_t h = qh[4 * i + k];
    const uint64_t grid1 = grids::hdIq1sGrid(qs[8 * i + k] | ((h & 0x07) << 8));
    const uint64_t grid2 = grids::hdIq1sGrid(qs[8 * i + k + 4] | ((h & 0x70) << 4));
    const float delta1 = h & 0x08 ? -kIq1sDelta : kIq1sDelta, delta2 = h & 0x80 ? -kIq1sDelta : kIq1sDelta;
    for (int j = 0; j < 8; ++j) y[16 * i + j] = dl * (float(int8_t(gridByte(grid1, j))) + delta1);
    for (int j = 0; j < 8; ++j) y[16 * i + j + 8] = dl * (float(int8_t(gridByte(grid2, j))) + delta2);
  }
}

}  // namespace ws::num::blocks
