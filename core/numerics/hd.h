// Scalar helpers that compile for the CPU and, under nvcc, for the GPU (__host__ __device__):
// the exact conversions the block decoders need, without std:: calls device code lacks. Each is
// checked against each format's definition on every input (tests/tst_dequant.cpp); float_formats.h
// gives them their CPU-side names.
#pragma once

#include <cstdint>
#include <cstring>

// WS_HD: small formulas, always inlined (the CPU block loops need them inlined into their AVX2
// clones). WS_HD_FN: the larger dispatchers (a switch over every kind or block type); forcing
// those inline into every caller made the compiler's memory and time explode, so on the CPU they
// are ordinary inline functions.
#if defined(__CUDACC__)
#define WS_HD __host__ __device__ __forceinline__
#define WS_HD_FN __host__ __device__ inline
#else
#define WS_HD static inline __attribute__((always_inline))
#define WS_HD_FN inline
#endif
// Member functions of the small types the formulas write through (always inlined too; `static`
// cannot apply to them).
#if defined(__CUDACC__)
#define WS_HD_MEMBER __host__ __device__ __forceinline__
#else
#define WS_HD_MEMBER inline __attribute__((always_inline))
#endif
// Unrolled on the device, so the 16 codes and outputs of a 16-values-a-thread body stay in
// registers (an indexed array would live in local memory); the CPU compiler unrolls as it likes -
// the arithmetic is the same.
#if defined(__CUDACC__)
#define WS_UNROLL _Pragma("unroll")
#else
#define WS_UNROLL
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

// A binary32's class from its magnitude (its bits without the sign), as every statistic counts
// it: compares, not branches or std::fpclassify, so the loops over them vectorize. One definition
// for the CPU statistics (stats.cpp) and the GPU's (stats_threads.h).
WS_HD uint32_t hdMagnitude(float x) { return hdFloatToBits(x) & 0x7FFFFFFFu; }
WS_HD bool hdNanMagnitude(uint32_t m) { return m > 0x7F800000u; }
WS_HD bool hdInfMagnitude(uint32_t m) { return m == 0x7F800000u; }
WS_HD bool hdFiniteMagnitude(uint32_t m) { return m < 0x7F800000u; }
WS_HD bool hdSubnormalMagnitude(uint32_t m) { return m - 1u < 0x007FFFFFu; }  // nonzero, exponent zero
WS_HD bool hdNonzeroFiniteMagnitude(uint32_t m) { return m - 1u < 0x7F7FFFFFu; }  // one compare

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

// E2M1 (FP4): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives, built from the bits rather than
// looked up (a table inside a device function lives in each thread's local memory).
WS_HD float hdE2m1(uint32_t code) {
  const uint32_t e = (code >> 1) & 3, m = code & 1;
  const float v = e == 0 ? (m ? 0.5f : 0.0f) : hdBitsToFloat(((e + 126u) << 23) | (m << 22));
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

// ggml's kvalues_mxfp4: twice the E2M1 value, as an integer.
WS_HD int hdMxfp4Doubled(uint32_t code) {
  const uint32_t e = (code >> 1) & 3, m = code & 1;
  const int v = e == 0 ? int(m) : int((2 + m) << (e - 1));
  return (code & 8) ? -v : v;
}

// ggml's kvalues_iq4nl: irregular, so a table - in constant memory on the device (one copy,
// broadcast to the threads that read it), a plain array on the CPU.
#if defined(__CUDACC__)
static __constant__ int8_t kIq4nlDevice[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
#endif
inline constexpr int8_t kIq4nlHost[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

WS_HD int hdIq4nl(uint32_t code) {
#if defined(__CUDA_ARCH__)
  return kIq4nlDevice[code & 15];
#else
  return kIq4nlHost[code & 15];
#endif
}

// ik_llama.cpp's iq4k_values (IQ4_K, IQ4_KS: the second half is the first shifted) and
// iq2nl_values (IQ2_K), ggml-common.h at 8337e4c: tables, so in constant memory on the device.
#if defined(__CUDACC__)
static __constant__ int8_t kIq4kDevice[32] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
                                              -123, -100, -79, -61, -45, -31, -18, -6,  5, 17, 29, 42, 57, 73, 93, 117};
static __constant__ int8_t kIq2nlDevice[8] = {-31, -13, 1, 17, -26, -8, 6, 22};
#endif
inline constexpr int8_t kIq4kHost[32] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
                                         -123, -100, -79, -61, -45, -31, -18, -6,  5, 17, 29, 42, 57, 73, 93, 117};
inline constexpr int8_t kIq2nlHost[8] = {-31, -13, 1, 17, -26, -8, 6, 22};

// iq3nl_values (IQ3_K) and iq5nl_values (IQ5_K, IQ5_KS), the same file.
#define WS_IQ5NL                                                                                                        \
  {-126, -114, -103, -92, -83, -74, -65, -57, -50, -43, -36, -30, -24, -18, -12, -6, -1, 5, 11, 17, 23, 29, 36, 43, 51, 59, \
   68,   77,   87,   97,  109, 121, -124, -112, -101, -90, -81, -72, -63, -55, -48, -41, -34, -28, -22, -16, -10, -4, 1, 7,  \
   13,   19,   25,   31,  38,  45,  53,   61,   70,   79,  89,  99,  111, 123}
#if defined(__CUDACC__)
static __constant__ int8_t kIq3nlDevice[16] = {-63, -40, -23, -10, 1, 13, 28, 47, -59, -36, -19, -6, 5, 17, 32, 51};
static __constant__ int8_t kIq5nlDevice[64] = WS_IQ5NL;
#endif
inline constexpr int8_t kIq3nlHost[16] = {-63, -40, -23, -10, 1, 13, 28, 47, -59, -36, -19, -6, 5, 17, 32, 51};
inline constexpr int8_t kIq5nlHost[64] = WS_IQ5NL;
#undef WS_IQ5NL

WS_HD int hdIq3nl(uint32_t i) {
#if defined(__CUDA_ARCH__)
  return kIq3nlDevice[i & 15];
#else
  return kIq3nlHost[i & 15];
#endif
}
WS_HD int hdIq5nl(uint32_t i) {
#if defined(__CUDA_ARCH__)
  return kIq5nlDevice[i & 63];
#else
  return kIq5nlHost[i & 63];
#endif
}

WS_HD int hdIq4k(uint32_t i) {
#if defined(__CUDA_ARCH__)
  return kIq4kDevice[i & 31];
#else
  return kIq4kHost[i & 31];
#endif
}
WS_HD int hdIq2nl(uint32_t i) {
#if defined(__CUDA_ARCH__)
  return kIq2nlDevice[i & 7];
#else
  return kIq2nlHost[i & 7];
#endif
}

// iq2kl_values (IQ2_KL), the same file: 32 pairs of int8 values, each pair a uint16 whose low byte
// is the first value (ik_llama.cpp reads a pair through an int8_t pointer, little-endian).
#define WS_IQ2KL                                                                                                        \
  {0xe9c1, 0x0dc1, 0xc1d8, 0xf6d8, 0x0dd8, 0x2fd8, 0xd8e9, 0xe9e9, 0x01e9, 0x0de9, 0x1ce9, 0xc1f6, 0x01f6, 0x0df6, 0x2ff6, \
   0xe901, 0xf601, 0x0101, 0x0d01, 0x1c01, 0xd80d, 0xe90d, 0xf60d, 0x010d, 0x0d0d, 0xc11c, 0xe91c, 0x011c, 0x1c1c, 0x2f1c, \
   0xe92f, 0x0d2f}
#if defined(__CUDACC__)
static __constant__ uint16_t kIq2klDevice[32] = WS_IQ2KL;
#endif
inline constexpr uint16_t kIq2klHost[32] = WS_IQ2KL;
#undef WS_IQ2KL

// Value `half` (0 or 1) of IQ2_KL pair i.
WS_HD int hdIq2kl(uint32_t i, int half) {
#if defined(__CUDA_ARCH__)
  const uint16_t pair = kIq2klDevice[i & 31];
#else
  const uint16_t pair = kIq2klHost[i & 31];
#endif
  return int8_t(uint8_t(pair >> (8 * half)));
}

// bitsandbytes' NF4 code map (functional.get_4bit_type("nf4"), bitsandbytes 0.50.1): the Python
// floats torch.tensor turns into float32, so each entry is its double literal rounded once.
#define WS_BNB_NF4                                                                                                       \
  {float(-1.0), float(-0.6961928009986877), float(-0.5250730514526367), float(-0.39491748809814453),                     \
   float(-0.28444138169288635), float(-0.18477343022823334), float(-0.09105003625154495), float(0.0),                     \
   float(0.07958029955625534), float(0.16093020141124725), float(0.24611230194568634), float(0.33791524171829224),        \
   float(0.44070982933044434), float(0.5626170039176941), float(0.7229568362236023), float(1.0)}
#if defined(__CUDACC__)
static __constant__ float kBnbNf4Device[16] = WS_BNB_NF4;
#endif
inline constexpr float kBnbNf4Host[16] = WS_BNB_NF4;
#undef WS_BNB_NF4

WS_HD float hdBnbNf4(uint32_t code) {
#if defined(__CUDA_ARCH__)
  return kBnbNf4Device[code & 15];
#else
  return kBnbNf4Host[code & 15];
#endif
}

// bitsandbytes' FP4 code map (get_4bit_type("fp4")): [0, 0.0625, 8, 12, 4, 6, 2, 3], bit 3 the
// sign, divided by 12 in float32 - built from the code, like hdE2m1. Code 8 is the list's integer
// -0, which is 0: positive zero, not -0.0.
WS_HD float hdBnbFp4(uint32_t code) {
  const uint32_t m = code & 7;
  const float raw = m == 0 ? 0.0f : m == 1 ? 0.0625f : float((m & 1 ? 3u : 2u) << (3u - (m >> 1)));
  return ((code & 8) && m ? -raw : raw) / 12.0f;
}

}  // namespace ws::num

namespace ws::num {

// AMD FNUZ float8 forms: bias 8 / 16, no negative zero, 0x80 the only NaN.
WS_HD float hdE4m3fnuzToFloat(uint8_t x) {
  if (x == 0x80) return hdBitsToFloat(0x7FC00000u);
  const uint32_t mag = x & 0x7Fu;
  const float v = (x & 0x78) == 0 ? float(mag & 7) * 0x1p-10f : hdBitsToFloat((mag << 20) + (119u << 23));
  return (x & 0x80) ? -v : v;
}

WS_HD float hdE5m2fnuzToFloat(uint8_t x) {
  if (x == 0x80) return hdBitsToFloat(0x7FC00000u);
  const uint32_t mag = x & 0x7Fu;
  const float v = (x & 0x7C) == 0 ? float(mag & 3) * 0x1p-17f : hdBitsToFloat((mag << 21) + (111u << 23));
  return (x & 0x80) ? -v : v;
}

// How to read one element of a stored tensor as float (the ElementReader kinds).
enum class ElemKind : uint8_t { F32, F16, BF16, F64, E4M3, E5M2, E4M3Fnuz, E5M2Fnuz, E8M0, F4, I8, U8, I16, U16, I32, U32, I64, U64, Bool, None };

template <class T>
WS_HD T hdLoad(const uint8_t* p, uint64_t i) {
  T v;
  memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

WS_HD_FN float hdReadElem(ElemKind k, const uint8_t* p, uint64_t i) {
  switch (k) {
    case ElemKind::F32: return hdLoad<float>(p, i);
    case ElemKind::F16: return hdHalfToFloat(hdLoad<uint16_t>(p, i));
    case ElemKind::BF16: return hdBf16ToFloat(hdLoad<uint16_t>(p, i));
    case ElemKind::F64: return float(hdLoad<double>(p, i));
    case ElemKind::E4M3: return hdE4m3ToFloat(p[i]);
    case ElemKind::E5M2: return hdE5m2ToFloat(p[i]);
    case ElemKind::E4M3Fnuz: return hdE4m3fnuzToFloat(p[i]);
    case ElemKind::E5M2Fnuz: return hdE5m2fnuzToFloat(p[i]);
    case ElemKind::E8M0: return hdE8m0ToFloat(p[i]);
    case ElemKind::F4: return hdE2m1((p[i / 2] >> (4 * (i & 1))) & 0xF);
    case ElemKind::I8: return float(int8_t(p[i]));
    case ElemKind::U8: return float(p[i]);
    case ElemKind::I16: return float(hdLoad<int16_t>(p, i));
    case ElemKind::U16: return float(hdLoad<uint16_t>(p, i));
    case ElemKind::I32: return float(hdLoad<int32_t>(p, i));
    case ElemKind::U32: return float(hdLoad<uint32_t>(p, i));
    case ElemKind::I64: return float(hdLoad<int64_t>(p, i));
    case ElemKind::U64: return float(hdLoad<uint64_t>(p, i));
    case ElemKind::Bool: return p[i] ? 1.0f : 0.0f;
    default: return 0.0f;
  }
}

}  // namespace ws::num

namespace ws::num {

// The quarter-octave log2 bin of |x| (floor(4 * log2|x|)) computed exactly from the bits, so the
// CPU histogram and the GPU kernel put every value in the same bin. x must be finite and nonzero.
WS_HD int hdQuarterOctave(float x) {
  uint32_t u = hdFloatToBits(x) & 0x7FFFFFFFu;
  int e = int(u >> 23) - 127;
  uint32_t mant = u & 0x7FFFFF;
  if ((u >> 23) == 0) {  // subnormal: normalise the mantissa
    e = -126;
    while (!(mant & 0x800000)) mant <<= 1, --e;
    mant &= 0x7FFFFF;
  }
  // 1 + mant / 2^23 >= 2^(k/4) as integers: mant >= ceil((2^(k/4) - 1) * 2^23). 2^(1/4), 2^(1/2)
  // and 2^(3/4) are irrational, so no mantissa lies on a bin edge; tst_stats holds these
  // thresholds to the comparison in doubles for every mantissa. Branch-free, so a batch of
  // values vectorizes (Histogram::add).
  const int q = int(mant >= 1587185u) + int(mant >= 3474676u) + int(mant >= 5719293u);
  return 4 * e + q;
}

// num::Histogram::log2Fine(): quarter-octave bins over every finite float magnitude, 2^-152 to
// 2^132; a value's bin is hdQuarterOctave(x) + kStatsBinOffset.
constexpr int kStatsBins = 284 * 4;
constexpr int kStatsBinOffset = 152 * 4;

}  // namespace ws::num

namespace ws::num {

// binary32 -> bfloat16, round to nearest even. A NaN's sign and payload are not part of any
// formula and differ between the CPU (x86's default NaN is 0xFFC00000) and the GPU (0x7FFFFFFF),
// so every NaN becomes the one quiet NaN 0x7FC0: BF16 output is then bit-identical on both.
WS_HD uint16_t hdToBf16Rne(float f) {
  const uint32_t u = hdFloatToBits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC0;
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// binary32 -> binary16, round to nearest even, as PyTorch's float -> half cast does (the GPTQ and
// AWQ writers multiply in half precision); overflow gives infinity, NaN the quiet NaN 0x7E00.
WS_HD uint16_t hdToF16Rne(float f) {
  const uint32_t u = hdFloatToBits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t mag = u & 0x7FFFFFFFu;
  if (mag > 0x7F800000u) return 0x7E00;
  if (mag >= 0x477FF000u) return sign | 0x7C00u;  // 65520 and above: past the largest half, 65504
  if (mag < 0x38800000u) {                         // below 2^-14: a subnormal half (units of 2^-24), or zero
    if (mag < 0x33000000u) return sign;            // below 2^-25: rounds to zero
    const uint32_t shift = 126u - (mag >> 23), m = (mag & 0x7FFFFFu) | 0x800000u;
    const uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    return uint16_t(sign | (q + uint32_t(rem > half || (rem == half && (q & 1u)))));
  }
  const uint32_t q = (mag - 0x38000000u) >> 13, rem = mag & 0x1FFFu;  // exponent rebiased 127 -> 15
  return uint16_t(sign | (q + uint32_t(rem > 0x1000u || (rem == 0x1000u && (q & 1u)))));
}
WS_HD float hdRoundToHalf(float f) { return hdHalfToFloat(hdToF16Rne(f)); }
WS_HD float hdRoundToBf16(float f) { return hdBf16ToFloat(hdToBf16Rne(f)); }

// Where a GGUF block formula writes, for BF16 output: y[k] = v, *y++ = v, y += n, y + n and y[k]
// read back as on a float*, each value rounded to nearest even as it is stored - so a BF16 block decode needs no
// float array of the block (a 1 KiB per-thread stack frame on the device).
struct Bf16Out {
  uint16_t* p;
  struct Slot {
    uint16_t* p;
    WS_HD_MEMBER void operator=(float v) const { *p = hdToBf16Rne(v); }
    // Read back (IQ3_KT negates stored values): -round(v) rounds to itself and equals round(-v),
    // so the BF16 stored is the one the float path's value rounds to.
    WS_HD_MEMBER operator float() const { return hdBf16ToFloat(*p); }
  };
  WS_HD_MEMBER Slot operator[](int64_t k) const { return {p + k}; }
  WS_HD_MEMBER Slot operator*() const { return {p}; }
  WS_HD_MEMBER Bf16Out operator++(int) { return {p++}; }
  WS_HD_MEMBER Bf16Out& operator+=(int64_t n) {
    p += n;
    return *this;
  }
  WS_HD_MEMBER Bf16Out operator+(int64_t n) const { return {p + n}; }
};

}  // namespace ws::num
