// Scalar conversions of every small float format the schemes use, written to be exact: each
// returns the value the format's definition gives (formats.md 3, 4, 6 and 2.6), with no rounding
// except where a function name says so (toBf16Rne).
#pragma once

#include <cstdint>

#include "core/numerics/hd.h"

namespace ws::num {

// The conversions themselves live once, in hd.h, shared with the CUDA kernels; these are the
// CPU-side names the decoders and tests use.
inline float bitsToFloat(uint32_t u) { return hdBitsToFloat(u); }
inline uint32_t floatToBits(float f) { return hdFloatToBits(f); }

// IEEE binary16 -> binary32, every value (subnormals, inf, NaN) exact.
inline float halfToFloat(uint16_t h) { return hdHalfToFloat(h); }
inline float bf16ToFloat(uint16_t b) { return hdBf16ToFloat(b); }

// Equal bits, or both NaN (payloads are not part of any formula): how outputs are compared.
inline bool sameBitsOrNan(float a, float b) { return (a != a && b != b) || floatToBits(a) == floatToBits(b); }

// binary32 -> bfloat16 with round-to-nearest-even; every NaN becomes the one quiet NaN 0x7FC0.
inline uint16_t toBf16Rne(float f) { return hdToBf16Rne(f); }

// OCP FP8 E4M3 (torch float8_e4m3fn): bias 7, no infinities, S.1111.111 is NaN, max 448.
inline float e4m3ToFloat(uint8_t x) { return hdE4m3ToFloat(x); }
// OCP FP8 E5M2: bias 15, IEEE-like infinities and NaNs (it is the top byte of a binary16).
inline float e5m2ToFloat(uint8_t x) { return hdE5m2ToFloat(x); }
// FNUZ variants (AMD): bias 8 / 16, no negative zero, 0x80 is the only NaN, no infinities.
inline float e4m3fnuzToFloat(uint8_t x) { return hdE4m3fnuzToFloat(x); }
inline float e5m2fnuzToFloat(uint8_t x) { return hdE5m2fnuzToFloat(x); }
// E8M0 (MX scales): 2^(e-127); 0xFF is NaN. e = 0 gives 2^-127, a binary32 subnormal (exact).
inline float e8m0ToFloat(uint8_t e) { return hdE8m0ToFloat(e); }

// E2M1 (FP4) code -> value; bit 3 is the sign.
inline constexpr float kE2m1[16] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// ggml's unsigned E4M3 scale of block_nvfp4 (ggml-impl.h ggml_ue4m3_to_fp32): bias 7, inputs 0
// and 0x7F give 0, and the result is halved because ggml's FP4 table holds doubled values.
inline float ggmlUe4m3ToFloatHalf(uint8_t x) { return hdGgmlUe4m3Half(x); }

// ggml_e8m0_to_fp32_half: 2^(x-128), the half-scale that cancels kvalues_mxfp4's doubling.
inline float ggmlE8m0ToFloatHalf(uint8_t x) { return hdGgmlE8m0Half(x); }

// ggml's FP4 table: E2M1 values doubled (kvalues_mxfp4).
inline constexpr int8_t kMxfp4Doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// IQ4_NL / IQ4_XS non-linear table (kvalues_iq4nl).
inline constexpr int8_t kIq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

}  // namespace ws::num
