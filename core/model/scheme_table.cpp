#include "core/model/scheme_table.h"

#include <array>
#include <cctype>
#include <utility>

#include "core/model/dtype.h"

namespace ws {

namespace {

using D = DecoderKind;
using S = ScaleEncoding;
using G = GlobalScale;

// One row per scheme, in enum order (checked below). Block geometry: FP8 block grids come from the
// scale shape and config, compressed-tensors and MLX groups from the shapes; NVFP4 and MXFP4 fix it.
// MLX affine scales are signed by design: MLX quantizes each group from whichever end of its
// range has the larger magnitude. GPTQ and AWQ take their width from the config or the shapes
// (bits 0) and are not judged by WS-V010: an asymmetric zero point moves the largest code. The
// bitsandbytes code maps' largest magnitude is 1 (absmax times it is the block's largest weight),
// and an int8 row's SCB is its largest magnitude (code 127 x SCB / 127).
constexpr std::array<SchemeInfo, size_t(Scheme::kCount)> kTable = {{
    //  id                     name            decoder       quant  needsScale scales       signed  bRows bCols bits peak  gpu  largestCode global
    {Scheme::Plain,          "",             D::Plain,       false, false, S::None,     false, 0, 0,  0, 1.0, true,   0, G::None},
    {Scheme::GgufBlock,      "",             D::GgufBlocks,  true,  false, S::Inline,   true,  1, 0,  0, 1.0, true,   0, G::None},
    {Scheme::Fp8Unscaled,    "fp8",          D::Plain,       true,  false, S::None,     false, 0, 0,  8, 1.5, true,   0, G::None},
    {Scheme::Fp8Tensor,      "fp8-tensor",   D::Fp8Scaled,   true,  true,  S::AsStored, false, 0, 0,  8, 1.5, true,  -1, G::None},
    {Scheme::Fp8Channel,     "fp8-channel",  D::Fp8Scaled,   true,  true,  S::AsStored, false, 1, 0,  8, 1.5, true,  -1, G::None},
    {Scheme::Fp8Block,       "fp8-block",    D::Fp8Scaled,   true,  true,  S::AsStored, false, 0, 0,  8, 1.5, true,  -1, G::None},
    {Scheme::Nvfp4,          "nvfp4",        D::Nvfp4,       true,  true,  S::AsStored, false, 1, 16, 4, 1.3, true,   6, G::Multiplies},
    {Scheme::Mxfp4,          "mxfp4",        D::MxfpBlocks,  true,  true,  S::E8M0,     false, 1, 32, 4, 1.0, true,   6, G::None},
    {Scheme::Nvfp4Ct,        "nvfp4-ct",     D::Nvfp4,       true,  true,  S::AsStored, false, 1, 16, 4, 1.3, true,   6, G::Divides},
    {Scheme::Mxfp4Ct,        "mxfp4-ct",     D::MxfpBlocks,  true,  true,  S::E8M0,     false, 1, 32, 4, 1.0, true,   6, G::None},
    {Scheme::Int4Ct,         "int4-ct",      D::PackedInt,   true,  true,  S::AsStored, false, 1, 0,  4, 1.0, true,   8, G::None},
    {Scheme::Int8Ct,         "int8-ct",      D::PackedInt,   true,  true,  S::AsStored, false, 1, 0,  8, 1.0, true, 128, G::None},
    {Scheme::RawInt4,        "rawint4",      D::PackedInt,   true,  true,  S::AsStored, false, 1, 0,  4, 1.0, true,   8, G::None},
    {Scheme::MlxAffine4,     "mlx-affine4",  D::PackedInt,   true,  true,  S::AsStored, true,  1, 0,  4, 1.0, true,   0, G::None},
    {Scheme::MlxAffine8,     "mlx-affine8",  D::PackedInt,   true,  true,  S::AsStored, true,  1, 0,  8, 1.0, true,   0, G::None},
    {Scheme::MlxAffineOther, "mlx-affine",   D::Unsupported, true,  true,  S::AsStored, true,  1, 0,  0, 1.0, false,   0, G::None},
    {Scheme::KtInt8,         "kt-int8",      D::Kt,          true,  true,  S::AsStored, false, 1, 0,  8, 1.0, true,   0, G::None},
    {Scheme::KtInt4,         "kt-int4",      D::Kt,          true,  true,  S::AsStored, false, 1, 0,  4, 1.0, true,   0, G::None},
    {Scheme::Gptq,           "gptq",         D::GptqAwq,     true,  true,  S::AsStored, false, 1, 0,  0, 1.0, true,   0, G::None},
    {Scheme::Awq,            "awq",          D::GptqAwq,     true,  true,  S::AsStored, false, 1, 0,  0, 1.0, true,   0, G::None},
    {Scheme::BnbNf4,         "bnb-nf4",      D::Bnb4,        true,  true,  S::AsStored, false, 1, 0,  4, 1.0, true,   1, G::None},
    {Scheme::BnbFp4,         "bnb-fp4",      D::Bnb4,        true,  true,  S::AsStored, false, 1, 0,  4, 1.0, true,   1, G::None},
    {Scheme::BnbInt8,        "bnb-int8",     D::Int8Rows,    true,  true,  S::AsStored, false, 1, 0,  8, 1.0, true,   1, G::None},
}};

constexpr bool inEnumOrder() {
  for (size_t i = 0; i < kTable.size(); ++i)
    if (size_t(kTable[i].id) != i) return false;
  return true;
}
static_assert(inEnumOrder(), "kTable rows must follow the Scheme enum");

std::string lower(std::string_view s) {
  std::string r(s);
  for (auto& ch : r) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}

}  // namespace

double largestCodeOf(Scheme s, const DType* weightDtype) {
  const double code = schemeInfo(s).largestCode;
  if (code >= 0) return code;
  // The FP8 formats' largest finite values (formats.md 3.1).
  static constexpr std::pair<std::string_view, double> kFp8Max[] = {
      {"F8_E4M3", 448}, {"F8_E4M3FN", 448}, {"F8_E4M3FNUZ", 240}, {"F8_E5M2", 57344}, {"F8_E5M2FNUZ", 57344}};
  for (const auto& [name, max] : kFp8Max)
    if (weightDtype && weightDtype->name == name) return max;
  return 0;
}

const SchemeInfo& schemeInfo(Scheme s) { return kTable[size_t(s) < kTable.size() ? size_t(s) : 0]; }

std::string schemeDisplayName(Scheme s, const DType* weightDtype, uint32_t bits) {
  const SchemeInfo& info = schemeInfo(s);
  const std::string dtype = weightDtype ? lower(weightDtype->name) : std::string("?");
  if (s == Scheme::GgufBlock) return "gguf-" + dtype;
  if (s == Scheme::MlxAffineOther && bits) return std::string(info.name) + std::to_string(bits);
  if (info.decoder == DecoderKind::GptqAwq && bits) return std::string(info.name) + "-int" + std::to_string(bits);
  return info.name.empty() ? dtype : std::string(info.name);
}

const DType* scaleReadDtype(Scheme s, const DType* stored) {
  // bitsandbytes' nested absmax: U8 codes of a second quantization, values only through the
  // weight's decoder (their own absmax and code map). No scale statistics read them as numbers.
  if (schemeInfo(s).decoder == DecoderKind::Bnb4 && stored && stored->name == "U8") return nullptr;
  if (schemeInfo(s).scales == ScaleEncoding::E8M0 && stored && stored->name == "U8") return dtypeFromSafetensors("F8_E8M0");
  return stored;
}

bool scalesAreE8M0(Scheme s, const DType* weightDtype) {
  // ggml's MXFP4 block holds one E8M0 exponent inline.
  return schemeInfo(s).scales == ScaleEncoding::E8M0 || (s == Scheme::GgufBlock && weightDtype && weightDtype->name == "MXFP4");
}

double peakMultiplierOf(const bool (&present)[size_t(Scheme::kCount)]) {
  double m = 0;
  for (size_t i = 0; i < kTable.size(); ++i)
    if (present[i] && kTable[i].peakMultiplier > 1.0 && (m == 0 || kTable[i].peakMultiplier < m)) m = kTable[i].peakMultiplier;
  return m > 0 ? m : 1.0;
}

}  // namespace ws
