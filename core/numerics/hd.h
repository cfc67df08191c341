// Scalar helpers that compile for the CPU and, under nvcc, for the GPU (__host__ __device__):
// the exact conversions the block decoders need, without std:: calls device code lacks. Each is
// checked against core/numerics/float_formats.h on every input (tests/tst_dequant.cpp).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define WS_HD __host__ __device__ __forceinline__
#else
#define WS_HD static inline __attribute__((always_inline))
#endif

namespace ws::num {

WS_HD float hdBitsToFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

WS_HD uint32_t hdFloatToBits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

// IEEE binary16 -> binary32, exact for every input.
WS_HD float hdHalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  if (exp == 0) {
    const float v = float(mant) * 0x1p-24f;
    return mant == 0 ? hdBitsToFloat(sign) : (sign ? -v : v);
  }
  if (exp == 31) return hdBitsToFloat(sign | 0x7F800000u | (mant << 13));
  return hdBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

WS_HD float hdBf16ToFloat(uint16_t b) { return hdBitsToFloat(uint32_t(b) << 16); }

// OCP E4M3 (float8_e4m3fn): normal codes by moving the bias in the exponent field, subnormal
// codes as m * 2^-9 (never a subnormal binary32 intermediate), S.1111.111 NaN.
WS_HD float hdE4m3ToFloat(uint8_t x) {
  const uint32_t mag = x & 0x7Fu;
  if (mag == 0x7F) return hdBitsToFloat(0x7FC00000u);
  const float v = (x & 0x78) == 0 ? float(mag & 7) * 0x1p-9f : hdBitsToFloat((mag << 20) + (120u << 23));
  return (x & 0x80) ? -v : v;
}

WS_HD float hdE5m2ToFloat(uint8_t x) { return hdHalfToFloat(uint16_t(uint16_t(x) << 8)); }

// E8M0: 2^(e-127); 0xFF NaN.
WS_HD float hdE8m0ToFloat(uint8_t e) {
  if (e == 0xFF) return hdBitsToFloat(0x7FC00000u);
  return e == 0 ? hdBitsToFloat(0x00400000u) : hdBitsToFloat(uint32_t(e) << 23);
}

WS_HD float hdE2m1(uint32_t code) {
  const float t[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  const float v = t[code & 7];
  return (code & 8) ? -v : v;
}

// ggml_e8m0_to_fp32_half: 2^(x-128).
WS_HD float hdGgmlE8m0Half(uint8_t x) { return hdBitsToFloat(x < 2 ? (0x00200000u << x) : (uint32_t(x - 1) << 23)); }

// ggml_ue4m3_to_fp32 (block_nvfp4 scales): 0 and 0x7F give 0; halved.
WS_HD float hdGgmlUe4m3Half(uint8_t x) {
  if (x == 0 || x == 0x7F) return 0.0f;
  const uint32_t exp = (x >> 3) & 0xF, mant = x & 7;
  const float raw = exp == 0 ? float(mant) * 0x1p-9f : hdBitsToFloat(((exp + 120u) << 23) | (mant << 20));
  return raw * 0.5f;
}

WS_HD int hdMxfp4Doubled(uint32_t code) {
  const int8_t t[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  return t[code & 15];
}

WS_HD int hdIq4nl(uint32_t code) {
  const int8_t t[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  return t[code & 15];
}

}  // namespace ws::num
