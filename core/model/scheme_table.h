// The quant-scheme registry: one row per scheme a logical tensor can have, like the DType table
// for storage types. Every question about a scheme - which decoder, whether it is quantized, how
// its scale bytes are encoded, whether scales may be signed, its block geometry, the load-peak
// multiplier, whether the GPU kernels decode it - is answered by its row and nowhere else.
// quant_scheme.cpp decides which row a logical tensor gets; a new scheme is one row here plus its
// decoder (core/numerics/dequant.cpp) and, for the GPU, its device description (docs/architecture.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ws {

struct DType;

enum class Scheme : uint8_t {
  Plain,           // stored values (BF16, F32, I64 ...): named after the dtype
  GgufBlock,       // a ggml block type (Q4_K, MXFP4 ...), scales inline: "gguf-" + the type
  Fp8Unscaled,     // FP8 codes with no scale tensor
  Fp8Tensor,       // FP8 with one scale for the tensor
  Fp8Channel,      // FP8 with one scale per output row
  Fp8Block,        // FP8 with a 2-D grid of block scales (DeepSeek-V3 weight_scale_inv)
  Nvfp4,           // E2M1 codes, E4M3 scales per 16, F32 global scale (ModelOpt)
  Mxfp4,           // E2M1 codes, E8M0 scales per 32 (gpt-oss _blocks/_scales)
  Nvfp4Ct,         // compressed-tensors nvfp4-pack-quantized: weight_packed, E4M3 per 16, divided by weight_global_scale
  Mxfp4Ct,         // compressed-tensors mxfp4-pack-quantized: weight_packed [rows, cols/2], U8 E8M0 per 32
  Int4Ct,          // compressed-tensors pack-quantized int4 in int32 words
  Int8Ct,          // compressed-tensors pack-quantized int8 in int32 words
  RawInt4,         // KTransformers RAWINT4: U8/I8 bytes of two int4 codes, group scales
  MlxAffine4,      // MLX affine 4-bit: u32 words, scales and biases per group
  MlxAffine8,      // MLX affine 8-bit
  MlxAffineOther,  // MLX affine of a bit width the decoders do not read (or cannot tell)
  KtInt8,          // KTransformers NUMA expert blob, one byte a weight
  KtInt4,          // KTransformers NUMA expert blob, half a byte a weight
  Gptq,            // GPTQ (AutoGPTQ, GPTQModel, optimum): qweight packed along the input, qzeros, scales, g_idx
  Awq,             // AWQ GEMM (AutoAWQ): qweight packed along the output in AWQ's interleaved order, qzeros, scales
  BnbNf4,          // bitsandbytes 4-bit NormalFloat: byte pairs of codes, absmax per block (nested or not), quant_map
  BnbFp4,          // bitsandbytes 4-bit float: the same layout with bitsandbytes' FP4 code map
  BnbInt8,         // bitsandbytes LLM.int8(): int8 rows, SCB (each row's absmax) / 127
  kCount
};

// Which CPU decoder (and device description) reads the scheme.
enum class DecoderKind : uint8_t { Plain, GgufBlocks, Fp8Scaled, Nvfp4, MxfpBlocks, PackedInt, Kt, GptqAwq, Bnb4, Int8Rows, Unsupported };

// How the bytes of the scheme's scale tensors are read.
enum class ScaleEncoding : uint8_t {
  None,      // no scale tensors
  AsStored,  // the scale tensor's own dtype (F32, BF16, F16, F8_E4M3 ...)
  E8M0,      // power-of-two exponents; U8 storage is read as F8_E8M0
  Inline,    // inside the weight's blocks (GGUF d, dmin, sub-block scales)
};

// What a global scale does to the block scales: ModelOpt's weight_scale_2 multiplies them,
// compressed-tensors' weight_global_scale divides them.
enum class GlobalScale : uint8_t { None, Multiplies, Divides };

struct SchemeInfo {
  Scheme id;
  std::string_view name;         // the fixed name; empty: named after the weight's dtype
  DecoderKind decoder;
  bool quantized;                // codes that need a formula (and usually scales) to become values
  bool needsScale;               // the weight cannot be decoded without its scale tensor
  ScaleEncoding scales;
  bool signedScales;             // scales may be negative by design (GGUF d and sub-block mins)
  uint32_t blockRows, blockCols; // elements one scale covers; 0 = taken from the shapes or config
  uint32_t bits;                 // bits per code; 0 = the dtype's own
  double peakMultiplier;         // the seed runtime's load-peak heuristic (1.3x NVFP4, 1.5x FP8)
  bool gpuKernel;                // kernels/ decodes it on the device
  // The largest magnitude a code decodes to before its scales multiply it (FP8 448, int4 8,
  // E2M1 6): scale x this is the largest weight the scale can produce, which the plausibility rule
  // (WS-V010) judges. -1: the FP8 weight dtype's largest finite value. 0: not judged (no scale
  // tensors; GGUF's inline d multiplies per-type sub-scales; MLX adds a bias).
  double largestCode;
  GlobalScale global;
};

const SchemeInfo& schemeInfo(Scheme s);

// The name reports show ("fp8-block", "bf16", "gguf-q4_k", "mlx-affine3", "gptq-int4").
// `weightDtype` names the rows that are named after their storage; `bits` names MlxAffineOther and
// the GPTQ and AWQ widths.
std::string schemeDisplayName(Scheme s, const DType* weightDtype, uint32_t bits = 0);

// The dtype to read a scale tensor of this scheme with: E8M0 schemes store exponents in U8.
// nullptr: the stored bytes are not the scales' values (bitsandbytes' nested absmax codes).
const DType* scaleReadDtype(Scheme s, const DType* stored);

// Whether the scheme's scales are E8M0 exponents (MX formats; a NaN is then the 0xFF code).
bool scalesAreE8M0(Scheme s, const DType* weightDtype);

// schemeInfo(s).largestCode resolved for the weight's dtype; 0 when the scheme is not judged.
double largestCodeOf(Scheme s, const DType* weightDtype);
// The checkpoint-wide load-peak multiplier over the schemes present: the most compressed scheme
// present names the checkpoint's format (an NVFP4 checkpoint with FP8 layers is NVFP4), so the
// smallest multiplier above 1 wins; 1.0 when none has one.
double peakMultiplierOf(const bool (&present)[size_t(Scheme::kCount)]);

}  // namespace ws
