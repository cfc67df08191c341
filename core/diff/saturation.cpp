#include "core/diff/saturation.h"

#include "core/numerics/decode_element.h"

namespace ws::diff {

namespace {

std::optional<bool> fp8Extreme(num::ElemKind k, uint8_t code) {
  const uint8_t mag = code & 0x7F;
  switch (k) {
    case num::ElemKind::E4M3: return mag == 0x7E;       // 448 (0x7F is NaN)
    case num::ElemKind::E5M2: return mag == 0x7B;       // 57344 (above: Inf, NaN)
    case num::ElemKind::E4M3Fnuz:
    case num::ElemKind::E5M2Fnuz: return mag == 0x7F;   // 240 / 57344
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<bool> codeAtExtreme(const num::DecodeDesc& d, uint64_t r, uint64_t j) {
  const uint64_t cols = d.cols;
  switch (d.kind) {
    case num::DescKind::Plain:
    case num::DescKind::Fp8Scaled: return fp8Extreme(d.w.kind, d.w.data[r * cols + j]);
    case num::DescKind::Nvfp4:
    case num::DescKind::MxfpBlocks: {
      const uint8_t byte = d.w.data[r * cols / 2 + j / 2];
      return (((j & 1) ? byte >> 4 : byte) & 0x7) == 0x7;  // |e2m1| = 6
    }
    case num::DescKind::PackedInt: {
      const uint8_t* q = d.w.data + r * d.packedCols * d.wordBytes;
      const int u = d.bits == 8 ? int(q[j]) : int((q[j >> 1] >> ((j & 1) * 4)) & 0xF);
      return u == 0 || u == (1 << d.bits) - 1;
    }
    case num::DescKind::Kt: {
      const uint32_t part = uint32_t(r / d.rowsPerPart);
      const uint64_t i = r % d.rowsPerPart;
      if (d.int4) {
        const uint8_t byte = d.ktW[part].data[(i * cols + j) / 2];
        const int u = (j & 1) ? byte >> 4 : byte & 0xF;
        return u == 0 || u == 15;
      }
      const int8_t q = int8_t(d.ktW[part].data[i * cols + j]);
      return q == 127 || q == -128;
    }
    case num::DescKind::GptqAwq: {
      const uint32_t u = d.mode == 3   ? num::sequentialNibble(d.w.data, r * d.packedCols + j / 8, j)
                         : d.mode == 2 ? num::awqNibble(d.w.data, j * d.packedCols + r / 8, r)
                                       : num::streamCode(d.w.data + r * 4, d.packedCols, j, d.bits);
      return u == 0 || u == (1u << d.bits) - 1;
    }
    case num::DescKind::Bnb4: {  // the code maps' ends, -1 and 1 (NF4 codes 0 and 15; FP4 +-12/12, codes 3 and 11)
      const uint64_t i = r * cols + j;
      const uint32_t code = (i & 1) ? d.w.data[i / 2] & 0xFu : d.w.data[i / 2] >> 4;
      return d.mode == 1 ? (code & 7) == 3 : code == 0 || code == 15;
    }
    case num::DescKind::Int8Rows: {
      const int8_t q = int8_t(d.w.data[r * cols + j]);
      return q == 127 || q == -127 || q == -128;
    }
    case num::DescKind::GgufBlocks: {
      if (d.ggmlId != 8) return std::nullopt;  // Q8_0: fp16 scale, then 32 int8 codes
      const uint64_t k = r * cols + j;
      const int8_t q = int8_t(d.w.data[(k / 32) * d.blockBytes + 2 + k % 32]);
      return q == 127 || q == -127 || q == -128;
    }
  }
  return std::nullopt;
}

}  // namespace ws::diff
