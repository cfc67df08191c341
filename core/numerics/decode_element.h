// One element of a described tensor (DecodeDesc), and one GGUF block: the formulas the CUDA
// kernels run, compiled for the CPU too so tests prove them equal to the CPU decoders on every
// fixture without a GPU. Each line mirrors the matching CPU loop in dequant.cpp operation for
// operation; keep the two in step.
#pragma once

#include "core/numerics/decode_desc.h"
#include "core/numerics/gguf_run_formulas.h"

namespace ws::num {

WS_HD float scaleAt(const Region& r, uint64_t i) { return hdReadElem(r.kind, r.data, i); }

WS_HD_FN int zeroCodeAt(const DecodeDesc& d, uint64_t r, uint64_t g, int offset) {
  if (!d.zp.data) return offset;
  if (!d.zpPacked) return int(scaleAt(d.zp, r * d.groups + g)) + offset;
  const uint32_t perWord = 32 / d.bits;
  const uint64_t b = r / d.M, i = r % d.M;
  const uint64_t packedRows = (d.M + perWord - 1) / perWord;
  const uint32_t word = hdLoad<uint32_t>(d.zp.data, (b * packedRows + i / perWord) * d.groups + g);
  return int((word >> ((i % perWord) * d.bits)) & ((1u << d.bits) - 1));
}

// What the values of a row share over a run of columns, for NVFP4, MXFP4 and packed integers: the
// scale, and the zero code or (MLX) bias. decodeElement computes it per element; the 16-a-thread
// body (kernel_threads.h) once per run of 16 columns within one group - the same expressions.
struct CodeParams {
  float s = 1.0f, bias = 0.0f;
  int zero = 0;
};

WS_HD_FN CodeParams codeParams(const DecodeDesc& d, uint64_t r, uint64_t j) {
  const uint64_t cols = d.cols;
  CodeParams p;
  if (d.kind == DescKind::Nvfp4) {
    const float g = d.g.data ? scaleAt(d.g, d.g.count == 1 ? 0 : (r / d.M < d.g.count - 1 ? r / d.M : d.g.count - 1)) : 1.0f;
    // mode 1: compressed-tensors divides by its global scale, ModelOpt multiplies.
    p.s = d.mode == 1 ? scaleAt(d.s, r * (cols / 16) + j / 16) / g : scaleAt(d.s, r * (cols / 16) + j / 16) * g;
  } else if (d.kind == DescKind::MxfpBlocks) {
    p.s = scaleAt(d.s, r * (cols / 32) + j / 32);
  } else {  // PackedInt
    const uint64_t g = d.gidx.data ? uint64_t(scaleAt(d.gidx, j)) : j / d.group;
    p.s = d.s.count == 1 ? scaleAt(d.s, 0) : scaleAt(d.s, r * d.groups + g);
    if (d.intKind == 2) p.bias = scaleAt(d.zp, r * d.groups + g);
    else p.zero = zeroCodeAt(d, r, g, 1 << (d.bits - 1));
  }
  return p;
}

// An E2M1 code's value (NVFP4, MXFP4), and a packed integer code's (MLX: scale x code + bias).
WS_HD_FN float fp4Value(const CodeParams& p, uint32_t code) { return hdE2m1(code) * p.s; }
WS_HD_FN float intValue(const DecodeDesc& d, const CodeParams& p, uint32_t u) {
  return d.intKind == 2 ? p.s * float(u) + p.bias : float(int(u) - p.zero) * p.s;
}

// Code k of a stream of `bits`-bit codes packed little end first into 32-bit little-endian words
// `stride` words apart: GPTQ packs each output column's codes down the column (3-bit codes straddle
// two words), its zeros and AWQ's along a row (stride 1).
WS_HD uint32_t streamCode(const uint8_t* words, uint64_t stride, uint64_t k, uint32_t bits) {
  const uint64_t bit = k * bits, w = bit / 32;
  const uint32_t shift = uint32_t(bit % 32);
  uint64_t v = hdLoad<uint32_t>(words, w * stride);
  if (shift + bits > 32) v |= uint64_t(hdLoad<uint32_t>(words, (w + 1) * stride)) << 32;
  return uint32_t(v >> shift) & ((1u << bits) - 1u);
}

// GPTQ's zero for output column r of a group's packed row. v1 (mode 0) stores each zero one below
// the real one; GPTQModel 7.7.0 reads it back as its writer made it (utils/model.py
// convert_gptq_v1_to_v2_format_module): 2-, 4- and 8-bit words get one added to every field at
// once, so the borrow a real zero of 0 left in the next field is carried back; 3-bit fields, which
// straddle words, get one added each, modulo 2^3 (model_dequant.py _shift_gptq_qzeros).
WS_HD uint32_t gptqZero(const uint8_t* row, uint64_t r, uint32_t bits, int mode) {
  if (mode != 0) return streamCode(row, 1, r, bits);
  if (bits == 3) return (streamCode(row, 1, r, 3) + 1u) & 7u;
  const uint32_t ones = bits == 2 ? 0x55555555u : bits == 4 ? 0x11111111u : 0x01010101u;
  const uint64_t bit = r * bits;
  return ((hdLoad<uint32_t>(row, bit / 32) + ones) >> (bit % 32)) & ((1u << bits) - 1u);
}

// AWQ GEMM's interleave: column 8c + o of a word sits in nibble slot (o >> 1) | ((o & 1) << 2)
// (AutoAWQ packing_utils AWQ_REVERSE_ORDER = [0, 4, 1, 5, 2, 6, 3, 7]).
WS_HD uint32_t awqNibble(const uint8_t* words, uint64_t word, uint64_t col) {
  const uint32_t o = uint32_t(col & 7);
  return (hdLoad<uint32_t>(words, word) >> (4u * ((o >> 1) | ((o & 1u) << 2)))) & 0xFu;
}

// AWQ GEMV's order: element k of a row sits in nibble k % 8 of the row's word k / 8, low first
// (AutoAWQ 0.2.7.post3 WQLinear_GEMV.from_linear, order_map [0..7]).
WS_HD uint32_t sequentialNibble(const uint8_t* words, uint64_t word, uint64_t k) { return (hdLoad<uint32_t>(words, word) >> (4u * uint32_t(k & 7))) & 0xFu; }

// AutoAWQ 0.2.7.post3 gemv.py calculate_zeros_width: the words of a GEMV qzeros row, the groups
// packed eight a word, rounded up to 4 (group 32), 2 (group 64) or 1 (128 and up); 0 for any
// other group size, which AutoAWQ refuses.
inline uint64_t awqGemvZerosWidth(uint64_t groups, uint64_t group) {
  const uint64_t multiple = group >= 128 ? 1 : group == 64 ? 2 : group == 32 ? 4 : 0;
  const uint64_t words = (groups + 7) / 8;
  return multiple ? (words + multiple - 1) / multiple * multiple : 0;
}

// Where group g of output row r has its scale: [groups, out] for GPTQ and AWQ GEMM, [out, 8 W]
// for AWQ GEMV (mode 3; W the qzeros row words).
WS_HD uint64_t awqGptqScaleIndex(int mode, uint64_t rows, uint64_t zpRowWords, uint64_t r, uint64_t g) { return mode == 3 ? r * zpRowWords * 8 + g : g * rows + r; }

// bitsandbytes' 1/127: the Python float 7.874015718698502e-3 that int8_vectorwise_dequant multiplies
// a float32 tensor by, so float32's nearest (the double literal rounded once).
constexpr float kInv127 = float(7.874015718698502e-3);

// A value rounded to the writer's output dtype (DecodeDesc::roundTo).
WS_HD float roundedTo(ElemKind k, float v) { return k == ElemKind::F16 ? hdRoundToHalf(v) : k == ElemKind::BF16 ? hdRoundToBf16(v) : v; }

// GPTQ / AWQ element (r, j): output channel r, input j. (code - zero) x scale, rounded to the
// scales' dtype as PyTorch's int-by-half product is.
WS_HD_FN float gptqAwqElement(const DecodeDesc& d, uint64_t r, uint64_t j) {
  uint64_t g;
  uint32_t q, z;
  if (d.mode == 3) {  // AWQ GEMV: qweight [out, in / 8], qzeros [out, W]
    g = j / d.group;
    q = sequentialNibble(d.w.data, r * d.packedCols + j / 8, j);
    z = sequentialNibble(d.zp.data, r * d.zpRowWords + g / 8, g);
  } else if (d.mode == 2) {  // AWQ GEMM: qweight [in, out / 8], qzeros [groups, out / 8]
    g = j / d.group;
    q = awqNibble(d.w.data, j * d.packedCols + r / 8, r);
    z = d.zp.data ? awqNibble(d.zp.data, g * d.zpRowWords + r / 8, r) : 0u;
  } else {  // GPTQ: qweight [in x bits / 32, out], qzeros [groups, out x bits / 32]
    g = d.gidx.data ? uint64_t(scaleAt(d.gidx, j)) : j / d.group;
    q = streamCode(d.w.data + r * 4, d.packedCols, j, d.bits);
    z = gptqZero(d.zp.data + g * d.zpRowWords * 4, r, d.bits, d.mode);
  }
  return roundedTo(d.roundTo, float(int(q) - int(z)) * scaleAt(d.s, awqGptqScaleIndex(d.mode, d.rows, d.zpRowWords, r, g)));
}

// bitsandbytes 4-bit element (r, j): flat element i's code (high nibble first) times its block's
// absmax - the nested absmax first decoded (code map x nested absmax, plus the offset) - in
// float32, then cast to the quant state's dtype (bitsandbytes backends/cpu/ops.py).
WS_HD_FN float bnb4Element(const DecodeDesc& d, uint64_t r, uint64_t j) {
  const uint64_t i = r * d.cols + j, b = i / d.group;
  const uint8_t byte = d.w.data[i / 2];
  const uint32_t code = (i & 1) ? byte & 0xFu : byte >> 4;
  const float absmax = d.g.data ? scaleAt(d.nestedMap, d.s.data[b]) * scaleAt(d.g, b / d.bn) + d.offset : scaleAt(d.s, b);
  return roundedTo(d.roundTo, (d.mode == 1 ? hdBnbFp4(code) : hdBnbNf4(code)) * absmax);
}

// Element (r, j) of a non-GGUF tensor.
WS_HD_FN float decodeElement(const DecodeDesc& d, uint64_t r, uint64_t j) {
  const uint64_t cols = d.cols;
  switch (d.kind) {
    case DescKind::Plain: return hdReadElem(d.w.kind, d.w.data, r * cols + j);
    case DescKind::Fp8Scaled: {
      const uint64_t b = r / d.M, i = r % d.M;
      float s;
      if (d.mode == 2) s = scaleAt(d.s, (b * d.gm + i / d.bm) * d.gn + j / d.bn);
      else if (d.mode == 1) s = scaleAt(d.s, r);
      else s = scaleAt(d.s, d.s.count == 1 ? 0 : b);
      return hdReadElem(d.w.kind, d.w.data, r * cols + j) * s;
    }
    case DescKind::Nvfp4:
    case DescKind::MxfpBlocks: {
      const uint8_t byte = d.w.data[r * cols / 2 + j / 2];
      return fp4Value(codeParams(d, r, j), (j & 1) ? byte >> 4 : byte & 0xF);
    }
    case DescKind::PackedInt: {
      const uint8_t* q = d.w.data + r * d.packedCols * d.wordBytes;
      const uint32_t u = d.bits == 8 ? q[j] : (q[j >> 1] >> ((j & 1) * 4)) & 0xF;
      return intValue(d, codeParams(d, r, j), u);
    }
    case DescKind::Kt: {
      const uint32_t part = uint32_t(r / d.rowsPerPart);
      const uint64_t i = r % d.rowsPerPart;
      const uint64_t perRow = d.ktS[part].count / d.rowsPerPart, group = cols / perRow;
      const float s = scaleAt(d.ktS[part], i * perRow + j / group);
      int q;
      if (d.int4) {
        const uint8_t byte = d.ktW[part].data[(i * cols + j) / 2];
        q = int((j & 1) ? byte >> 4 : byte & 0xF) - 8;
      } else {
        q = int8_t(d.ktW[part].data[i * cols + j]);
      }
      return float(q) * s;
    }
    case DescKind::GptqAwq: return gptqAwqElement(d, r, j);
    case DescKind::Bnb4: return bnb4Element(d, r, j);
    // bitsandbytes int8_vectorwise_dequant: code x SCB, then x float32(1/127), in float32.
    case DescKind::Int8Rows: return float(int8_t(d.w.data[r * cols + j])) * scaleAt(d.s, r) * kInv127;
    default: return 0.0f;
  }
}

// GGUF block `index` of the tensor into y: blockElems floats, or any output the block formulas can
// write through (Bf16Out: rounded to BF16 as each value is made, with no block-sized array).
template <class Y>
WS_HD_FN void decodeGgufBlock(const DecodeDesc& d, uint64_t index, Y y) {
  if (d.rowInterleave > 1) {  // row k of its group of R: the group's meta, then merged blocks of R
    const uint64_t perRow = d.cols / d.blockElems, row = index / perRow, R = d.rowInterleave;
    const uint8_t* group = d.w.data + (row / R) * R * (d.rowMeta + perRow * d.blockBytes);
    const uint8_t* b = group + R * d.rowMeta + (index % perRow) * R * d.blockBytes;
    const int k = int(row % R);
    switch (d.ggmlId) {
      case 208: blocks::q8_0_r8(group, b, k, y); break;
      case 212: blocks::q4_k_r4(group, b, k, y); break;
      case 214: blocks::q6_k_r4(group, b, k, y); break;
      case 223: blocks::iq4_xs_r8(group, b, k, y); break;
      case 337: blocks::iq2_k_r4(group, b, k, y); break;
      case 338: blocks::iq3_k_r4(group, b, k, y); break;
      case 339: blocks::iq4_k_r4(group, b, k, y); break;
      case 340: blocks::iq5_k_r4(group, b, k, y); break;
      case 344: blocks::iq4_ks_r4(group, b, k, y); break;
      case 352: blocks::iq5_ks_r4(group, b, k, y); break;
      case 202: blocks::q4_0_r8(group, b, k, y); break;
      case 206: blocks::q5_0_r4(group, b, k, y); break;
      case 220: blocks::iq4_nl_r4(group, b, k, y); break;
      case 233: blocks::q6_0_r4(group, b, k, y); break;
      case 335: blocks::iq2_bn_r4(group, b, k, y); break;
      case 353: blocks::mxfp4_r8(group, b, k, y); break;
      case 397: blocks::q8_k_r16(group, b, k, y); break;
      case 230: blocks::bf16_r16(group, b, k, y); break;
      case 398: blocks::q8_kv_r8(group, b, k, y); break;
      case 399: blocks::q8_k_r8(group, b, k, y); break;
      case 210: blocks::q2_k_r4(group, b, k, y); break;
      case 211: blocks::q3_k_r4(group, b, k, y); break;
      case 213: blocks::q5_k_r4(group, b, k, y); break;
      case 216: blocks::iq2_xxs_r4(group, b, k, y); break;
      case 217: blocks::iq2_xs_r4(group, b, k, y); break;
      case 218: blocks::iq3_xxs_r4(group, b, k, y); break;
      case 219: blocks::iq1_s_r4(group, b, k, y); break;
      case 221: blocks::iq3_s_r4(group, b, k, y); break;
      case 222: blocks::iq2_s_r4(group, b, k, y); break;
      case 229: blocks::iq1_m_r4(group, b, k, y); break;
      default: break;
    }
    return;
  }
  if (d.rowMeta) {  // the row's meta bytes first, then its blocks
    const uint64_t perRow = d.cols / d.blockElems, row = index / perRow;
    const uint8_t* meta = d.w.data + row * (d.rowMeta + perRow * d.blockBytes);
    const uint8_t* b = meta + d.rowMeta + (index % perRow) * d.blockBytes;
    blocks::rowBlockFromRuns(d.ggmlId, meta, b, y);  // every such type is written as runs
    return;
  }
  // Every plain type is written as runs of 16 (gguf_run_formulas.h): its blocks are made from
  // them, as the device's 16-values-a-thread bodies make them (so the block kernel keeps no
  // block-sized array, such as Q3_K's staged codes, on its stack).
  blocks::blockFromRuns(d.ggmlId, d.w.data + index * d.blockBytes, y);
}

}  // namespace ws::num
