#include "core/numerics/dequant.h"

#include <algorithm>
#include <cstring>

#include "core/model/naming.h"
#include "core/model/weight_shape.h"
#include "core/numerics/code_extremes.h"
#include "core/numerics/element_reader.h"
#include "core/numerics/float_formats.h"
#include "core/numerics/remote_reads.h"
#include "core/numerics/gguf_blocks.h"
#include "core/numerics/library_decoders.h"
#include "core/numerics/stored_views.h"
#include "core/util/checked.h"

namespace ws::num {

namespace {

class PlainDecoder : public RowDecoder {
 public:
  PlainDecoder(const Checkpoint& c, const TensorRecord& t) : w_(c, t) {
    if (!reader_.init(t.dtype)) mismatch(c, t, "dtype " + std::string(t.dtype->name) + " cannot be shown as numbers");
    setShape(t.shape);
    elemBits_ = t.dtype->blockBytes * 8 / t.dtype->blockElems;
  }
  void decode(uint64_t row, uint64_t n, float* out) const override {
    reader_.run(w_.mapped, row * cols_, n * cols_, out);
    count(n * cols_ * elemBits_ / 8);
  }
  // BF16 and F16 are sign and magnitude, so a value's order follows its code's within each sign
  // (Code16Bounds gives both runs' ends), and NaN and infinite codes have the largest magnitudes
  // of their sign: present, one is an end. So finite ends tell the extremes of finite values
  // only; otherwise the run is decoded. Converting a BF16 tensor to floats and reducing them was
  // the last decode of a warm INT4 validate (its dense weights; perf).
  uint64_t extent(uint64_t row, uint64_t n, Extent& e, ExtentScratch& scratch) const override {
    const ElemKind kind = reader_.kind();
    if (kind != ElemKind::BF16 && kind != ElemKind::F16) return RowDecoder::extent(row, n, e, scratch);
    const uint64_t values = n * cols_;
    const uint8_t* codes = w_.staged(row * cols_ * 2, values * 2, scratch.codes, scratch.pread);
    count(values * 2);
    if (!values) return 0;
    Code16Bounds b;
    widenCode16Bounds(codes, values, b);
    auto valueOf = [&](uint16_t code) {
      const uint8_t le[2] = {uint8_t(code), uint8_t(code >> 8)};
      return reader_.at(le, 0);
    };
    const float lo = valueOf(b.anyNegative() ? b.umax : b.umin), hi = valueOf(uint16_t(b.anyPositive() ? b.smax : b.smin));
    if (std::isfinite(lo) && std::isfinite(hi)) {
      e.addFinite(values, lo, hi);
      return values;
    }
    float* v = scratch.valuesFor(values);
    reader_.run(codes, 0, values, v);
    e.add(v, values);
    return 0;
  }
  DecodeDesc describe() const override {
    DecodeDesc d;
    d.kind = DescKind::Plain;
    d.rows = rows_, d.cols = cols_;
    d.w = Region{w_.mapped, rows_ * cols_ * elemBits_ / 8, rows_ * cols_, reader_.kind()};
    return d;
  }

 private:
  StoredBytes w_;
  ElementReader reader_;
  uint64_t elemBits_;
};

class GgufBlockDecoder : public RowDecoder {
 public:
  GgufBlockDecoder(const Checkpoint& c, const TensorRecord& t) : p_(dataOf(c, t)), type_(*t.dtype) {
    if (!ggufBlockTypeSupported(type_))
      fail(ErrorCode::UnknownDtype,
           "dequantization of " + std::string(type_.name) + (type_.ikLlama ? " (ik_llama.cpp's type " + std::to_string(type_.ggmlId) + ")" : std::string{}) + " is not implemented",
           c.files[t.file].path, t.offset, t.name);
    setShape(t.shape);
    rowBytes_ = type_.rowMetaBytes + cols_ / type_.blockElems * type_.blockBytes;
    if (rows_ % type_.rowInterleave)
      fail(ErrorCode::TensorInvalidInfo,
           std::string(type_.name) + " stores rows in interleaved groups of " + std::to_string(type_.rowInterleave) + "; the tensor's " + std::to_string(rows_) +
               " rows are not whole groups",
           c.files[t.file].path, t.offset, t.name);
  }
  void decode(uint64_t row, uint64_t n, float* out) const override {
    if (type_.rowInterleave > 1) dequantizeGgufInterleavedRows(type_, p_, row, n, cols_, out);
    else dequantizeGgufRows(type_, p_ + row * rowBytes_, n, cols_, out);
    count(n * rowBytes_);
  }
  DecodeDesc describe() const override {
    DecodeDesc d;
    d.kind = DescKind::GgufBlocks;
    d.rows = rows_, d.cols = cols_;
    d.w = Region{p_, rows_ * rowBytes_, 0, ElemKind::None};
    d.ggmlId = type_.ggmlId;
    d.blockElems = type_.blockElems;
    d.blockBytes = type_.blockBytes;
    d.rowMeta = type_.rowMetaBytes;
    d.rowInterleave = type_.rowInterleave;
    return d;
  }

 private:
  const uint8_t* p_;
  const DType& type_;
  uint64_t rowBytes_;
};

// F8 weights times F32 (or any float) scales: per tensor, per output channel, or per 128x128 block
// on a ceil-div grid (the squeezed 1-D form included: only the element count must match).
// y[j] = value(code[j]) * s[j]: a table lookup and one multiply, built for AVX2 and the baseline.
__attribute__((target_clones("avx2", "default"))) void scaleRun(const float* lut, const uint8_t* q, uint64_t n, const float* sv, float* y) {
  for (uint64_t j = 0; j < n; ++j) y[j] = lut[q[j]] * sv[j];
}

// The same for E4M3 without a table, so it vectorizes, and without ever forming a subnormal
// binary32 (subnormal operands make x86 multiplies take a slow assist): normal codes become
// 2^(e-7) * (1 + m/8) by adding the bias difference (120) to the exponent field; the subnormal
// codes (e == 0) are m * 2^-9; 0x7F / 0xFF are NaN. Bit-identical to the table.
__attribute__((target_clones("avx2", "default"))) void scaleRunE4m3(const uint8_t* q, uint64_t n, const float* sv, float* y) {
  for (uint64_t j = 0; j < n; ++j) {
    const uint32_t x = q[j];
    const uint32_t mag = x & 0x7F;
    const uint32_t normal = (mag << 20) + (120u << 23);
    const uint32_t sub = num::floatToBits(float(mag & 7) * 0x1p-9f);
    const uint32_t isSub = 0u - uint32_t((x & 0x78) == 0);
    const float v = num::bitsToFloat(((normal & ~isSub) | (sub & isSub)) | ((x & 0x80) << 24));
    const uint32_t nan = 0u - uint32_t(mag == 0x7F);
    y[j] = num::bitsToFloat((num::floatToBits(v * sv[j]) & ~nan) | (0x7FC00000u & nan));
  }
}

class Fp8ScaledDecoder : public RowDecoder {
 public:
  enum class Mode { Tensor, Channel, Block };
  Fp8ScaledDecoder(const Checkpoint& c, const TensorRecord& w, const TensorRecord& s, Mode mode)
      : w_(c, w), mode_(mode) {
    reader_.init(w.dtype);
    e4m3_ = w.dtype->name == "F8_E4M3";
    scale_.init(c, s);
    setShape(w.shape);
    M_ = w.shape.size() >= 2 ? w.shape[w.shape.size() - 2] : 1;
    B_ = rows_ / M_;
    const auto& bs = c.model.quant.blockSize;
    bm_ = bs.size() == 2 && bs[0] > 0 ? uint64_t(bs[0]) : 128;
    bn_ = bs.size() == 2 && bs[1] > 0 ? uint64_t(bs[1]) : 128;
    gm_ = ceilDiv(M_, bm_);
    gn_ = ceilDiv(cols_, bn_);
    uint64_t want = mode == Mode::Block ? B_ * gm_ * gn_ : mode == Mode::Channel ? B_ * M_ : 1;
    if (scale_.n != want && !(mode == Mode::Tensor && scale_.n == B_))
      mismatch(c, s, "has " + std::to_string(scale_.n) + " scales but the weight needs " + std::to_string(want));
  }
  void decode(uint64_t row, uint64_t n, float* out) const override {
    decodeRows(row, n, out);
    count(bytesOf(row, n));
  }
  // Per run of rows under one scale key, per column block: the E4M3 codes' extremes times the
  // block's scale (monotone: a product rounds monotonically; a negative scale swaps the ends); the
  // run is decoded when an end's product is not finite (a NaN code, a NaN, infinite or huge scale).
  uint64_t extent(uint64_t row, uint64_t n, Extent& e, ExtentScratch& scratch) const override {
    if (!e4m3_) return RowDecoder::extent(row, n, e, scratch);
    const uint8_t* codes = w_.staged(row * cols_, n * cols_, scratch.codes, scratch.pread);
    const float* lut = byteFloatTable(reader_.dtype());
    const uint64_t width = mode_ == Mode::Block ? bn_ : cols_, blocks = ceilDiv(cols_, width);
    std::vector<E4m3Range> ranges(blocks);
    uint64_t told = 0;
    for (uint64_t r = row, end; r < row + n; r = end) {
      end = std::min(row + n, scaleKeyEnd(r));
      const uint64_t key = scaleKey(r);
      std::fill(ranges.begin(), ranges.end(), E4m3Range{});
      e4m3Ranges(codes + (r - row) * cols_, end - r, cols_, width, ranges.data());
      Extent run;
      bool fromCodes = true;
      for (uint64_t jb = 0; jb < blocks && fromCodes; ++jb) {
        const float s = scale_.at(mode_ == Mode::Block ? key * gn_ + jb : key);
        const float a = lut[ranges[jb].least()] * s, z = lut[ranges[jb].greatest()] * s;
        fromCodes = std::isfinite(a) && std::isfinite(z);  // not so for a NaN code (an end), or a NaN, infinite or huge scale
        if (fromCodes) run.addFinite((end - r) * (std::min(cols_, (jb + 1) * width) - jb * width), std::min(a, z), std::max(a, z));
      }
      if (fromCodes) {
        e.merge(run);
        told += (end - r) * cols_;
      } else {
        float* v = scratch.valuesFor((end - r) * cols_);
        decodeRows(r, end - r, v);
        e.add(v, (end - r) * cols_);
      }
    }
    // The scales were read and counted by the scale rules just before when the scratch keeps
    // them (the value pass): only the codes are this read's (measured: validate --distributed's
    // kernel count, mpi_distributed.py).
    const bool scalesKept = scratch.kept.file == scale_.bytes.file && scratch.kept.offset == scale_.bytes.offset && !scratch.kept.bytes.empty();
    count(scalesKept ? n * cols_ : bytesOf(row, n));
    return told;
  }
  DecodeDesc describe() const override {
    DecodeDesc d;
    d.kind = DescKind::Fp8Scaled;
    d.rows = rows_, d.cols = cols_;
    d.w = Region{w_.mapped, rows_ * cols_, rows_ * cols_, reader_.kind()};
    d.mode = mode_ == Mode::Tensor ? 0 : mode_ == Mode::Channel ? 1 : 2;
    d.M = M_, d.bm = bm_, d.bn = bn_, d.gm = gm_, d.gn = gn_;
    d.s = scale_.region();
    return d;
  }

 private:
  // The scale entry (or block row of entries) row r uses.
  uint64_t scaleKey(uint64_t r) const {
    const uint64_t b = r / M_, i = r % M_;
    return mode_ == Mode::Block ? (b * gm_ + i / bm_) : mode_ == Mode::Channel ? r : (scale_.n == 1 ? 0 : b);
  }
  // The first row after r whose scale key may differ: the end of r's block row, of r itself, or
  // of r's matrix.
  uint64_t scaleKeyEnd(uint64_t r) const {
    const uint64_t b = r / M_, i = r % M_;
    return mode_ == Mode::Block ? b * M_ + std::min(M_, (i / bm_ + 1) * bm_) : mode_ == Mode::Channel ? r + 1 : (b + 1) * M_;
  }
  void decodeRows(uint64_t row, uint64_t n, float* out) const {
    const float* lut = byteFloatTable(reader_.dtype());
    // Each column's scale, expanded once per block row (128 rows share it): the inner loop is
    // then one lookup and one multiply per element.
    std::vector<float> colScale(cols_);
    uint64_t expandedFor = UINT64_MAX;
    for (uint64_t r = row; r < row + n; ++r) {
      const uint64_t key = scaleKey(r);
      if (key != expandedFor) {
        for (uint64_t j = 0; j < cols_; ++j) colScale[j] = scale_.at(mode_ == Mode::Block ? key * gn_ + j / bn_ : key);
        expandedFor = key;
      }
      const uint8_t* q = w_.mapped + r * cols_;
      float* y = out + (r - row) * cols_;
      if (e4m3_) scaleRunE4m3(q, cols_, colScale.data(), y);
      else scaleRun(lut, q, cols_, colScale.data(), y);
    }
  }
  // Weight bytes of the rows, plus each scale entry they use once.
  uint64_t bytesOf(uint64_t row, uint64_t n) const {
    uint64_t scalesUsed = 1;
    if (mode_ == Mode::Channel) scalesUsed = n;
    if (mode_ == Mode::Block) scalesUsed = ((row + n - 1) / bm_ - row / bm_ + 1) * gn_;  // block rows touched (B == 1 case)
    return n * cols_ + scalesUsed * scale_.t->dtype->blockBytes;
  }

  StoredBytes w_;  // the codes
  ElementReader reader_;
  ScaleView scale_;
  Mode mode_;
  bool e4m3_ = false;
  uint64_t M_, B_, bm_, bn_, gm_, gn_;
};

// NVFP4: E2M1 codes (element 2k in the low nibble), one E4M3 scale per 16 elements, an F32 global
// scale. ModelOpt: value = e2m1 * (scale * global). compressed-tensors: value = e2m1 * (scale /
// global), in F32 as its decompressor computes it (scale_table.h: GlobalScale).
class Nvfp4Decoder : public RowDecoder {
 public:
  Nvfp4Decoder(const Checkpoint& c, const TensorRecord& w, const TensorRecord& s, const TensorRecord* g, bool globalDivides)
      : p_(dataOf(c, w)), divides_(globalDivides) {
    auto shape = w.shape;
    if (w.dtype->name == "U8" || w.dtype->name == "I8") shape.back() *= 2;  // bytes of two codes
    setShape(shape);
    scale_.init(c, s);
    if (g) global_.init(c, *g);
    if (cols_ % 16 || scale_.n != rows_ * (cols_ / 16)) mismatch(c, s, "NVFP4 needs one scale per 16 elements (" + std::to_string(rows_ * (cols_ / 16)) + "), found " + std::to_string(scale_.n));
    M_ = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
  }
  void decode(uint64_t row, uint64_t n, float* out) const override {
    for (uint64_t r = row; r < row + n; ++r) {
      const float g = global_.t ? global_.at(global_.n == 1 ? 0 : std::min(global_.n - 1, r / M_)) : 1.0f;
      const uint8_t* q = p_ + r * cols_ / 2;
      float* y = out + (r - row) * cols_;
      for (uint64_t j = 0; j < cols_; j += 16) {
        const float s = divides_ ? scale_.at(r * (cols_ / 16) + j / 16) / g : scale_.at(r * (cols_ / 16) + j / 16) * g;
        for (uint64_t k = 0; k < 16; k += 2) {
          const uint8_t b = q[(j + k) / 2];
          y[j + k] = kE2m1[b & 0xF] * s;
          y[j + k + 1] = kE2m1[b >> 4] * s;
        }
      }
    }
    count(n * (cols_ / 2 + cols_ / 16));
  }
  DecodeDesc describe() const override {
    DecodeDesc d;
    d.kind = DescKind::Nvfp4;
    d.rows = rows_, d.cols = cols_;
    d.w = Region{p_, rows_ * cols_ / 2, rows_ * cols_, ElemKind::None};
    d.s = scale_.region();
    d.g = global_.region();
    d.M = M_;
    d.mode = divides_ ? 1 : 0;
    return d;
  }

 private:
  const uint8_t* p_;
  bool divides_;
  ScaleView scale_, global_;
  uint64_t M_;
};

// MXFP4: element 2k in the low nibble, one E8M0 scale per 32. gpt-oss stores [..., nb, 16] bytes;
// compressed-tensors' weight_packed and DeepSeek-V4's experts are [..., cols/2] - the same bytes in
// the same order.
class MxfpBlocksDecoder : public RowDecoder {
 public:
  MxfpBlocksDecoder(const Checkpoint& c, const TensorRecord& w, const TensorRecord& s, bool packedRows) : p_(dataOf(c, w)) {
    std::vector<uint64_t> shape;
    if (packedRows) {
      if (w.shape.empty()) mismatch(c, w, "MXFP4 weight_packed needs a shape");
      shape = w.shape;
      shape.back() *= 2;
    } else {
      if (w.shape.size() < 2 || w.shape.back() != 16) mismatch(c, w, "MXFP4 blocks must end in a dimension of 16 bytes");
      shape.assign(w.shape.begin(), w.shape.end() - 2);
      shape.push_back(w.shape[w.shape.size() - 2] * 32);
    }
    if (shape.back() % 32) mismatch(c, w, "MXFP4 rows of " + std::to_string(shape.back()) + " codes are not whole blocks of 32");
    setShape(shape);
    scale_.init(c, s, s.dtype->name == "U8" ? dtypeFromSafetensors("F8_E8M0") : nullptr);
    if (scale_.n != rows_ * (cols_ / 32)) mismatch(c, s, "MXFP4 needs one scale per block of 32 (" + std::to_string(rows_ * cols_ / 32) + "), found " + std::to_string(scale_.n));
  }
  void decode(uint64_t row, uint64_t n, float* out) const override {
    for (uint64_t r = row; r < row + n; ++r) {
      const uint8_t* q = p_ + r * cols_ / 2;
      float* y = out + (r - row) * cols_;
      for (uint64_t blk = 0; blk < cols_ / 32; ++blk) {
        const float s = scale_.at(r * (cols_ / 32) + blk);  // E8M0: 2^(e-127), NaN for 0xFF
        for (uint64_t k = 0; k < 16; ++k) {
          const uint8_t b = q[blk * 16 + k];
          y[blk * 32 + 2 * k] = kE2m1[b & 0xF] * s;
          y[blk * 32 + 2 * k + 1] = kE2m1[b >> 4] * s;
        }
      }
    }
    count(n * (cols_ / 2 + cols_ / 32));
  }
  DecodeDesc describe() const override {
    DecodeDesc d;
    d.kind = DescKind::MxfpBlocks;
    d.rows = rows_, d.cols = cols_;
    d.w = Region{p_, rows_ * cols_ / 2, rows_ * cols_, ElemKind::None};
    d.s = scale_.region();
    return d;
  }

 private:
  const uint8_t* p_;
  ScaleView scale_;
};

// Integer codes packed little end first, with group scales and optional zero points:
// compressed-tensors pack-quantized (int32 words, int4/int8), RAWINT4 (bytes, int4) and MLX affine
// (u32 words, value = scale * q + bias).
__attribute__((target_clones("avx2", "default"))) void unpackCodes(const uint8_t* q, uint64_t n, unsigned bits, int* codes) {
  if (bits == 8) {
    for (uint64_t j = 0; j < n; ++j) codes[j] = q[j];
  } else {
    // A byte at a time, low nibble first: no per-element shift amount, so it vectorizes.
    const uint64_t pairs = n / 2;
    for (uint64_t k = 0; k < pairs; ++k) {
      codes[2 * k] = q[k] & 0xF;
      codes[2 * k + 1] = q[k] >> 4;
    }
    if (n & 1) codes[n - 1] = q[pairs] & 0xF;
  }
}

// (code - zero) * scale over a row of `group`-wide groups, each with its own zero and scale: one
// call a row, not one a group (Kimi-K2's 32-wide groups made the call the larger part).
__attribute__((target_clones("avx2", "default"))) void groupedOffsetRow(const int* c, uint64_t cols, uint64_t group, const int* zero, const float* scale,
                                                                        float* y) {
  for (uint64_t g = 0, j0 = 0; j0 < cols; ++g, j0 += group) {
    const uint64_t j1 = std::min(cols, j0 + group);
    const int z = zero[g];
    const float s = scale[g];
    for (uint64_t j = j0; j < j1; ++j) y[j] = float(c[j] - z) * s;
  }
}
// scale * code + bias (MLX).
__attribute__((target_clones("avx2", "default"))) void affineRun(const int* c, uint64_t n, float s, float b, float* y) {
  for (uint64_t j = 0; j < n; ++j) y[j] = s * float(c[j]) + b;
}

class PackedIntDecoder : public RowDecoder {
 public:
  enum class Kind { CompressedTensors, RawInt4, Mlx };
  PackedIntDecoder(const Checkpoint& c, const LogicalTensor& l, const TensorRecord& w, Kind kind, unsigned bits) : kind_(kind), bits_(bits) {
    w_ = StoredBytes(c, w);
    wordBytes_ = w.dtype->blockBytes;
    const uint64_t perWord = wordBytes_ * 8 / bits;
    if (w.shape.empty()) mismatch(c, w, "packed integer weight is a scalar");
    std::vector<uint64_t> shape = w.shape;
    shape.back() *= perWord;
    const TensorRecord *s = nullptr, *zp = nullptr, *gidx = nullptr, *shp = nullptr;
    for (uint32_t m : l.members) {
      const auto& t = c.tensors[m];
      if (t.component == Component::Scale) s = &t;
      if (t.component == Component::ZeroPoint) zp = &t;
      if (t.component == Component::GIdx) gidx = &t;
      if (t.component == Component::Shape) shp = &t;
    }
    if (shp) {  // weight_shape: the unpacked shape (codes past it are padding)
      auto dims = readWeightShape(c, *shp);
      if (!dims) mismatch(c, *shp, "weight_shape is not 1 to 8 I32/I64 entries");
      if (!weightShapeFits(*dims, w.shape, perWord)) mismatch(c, *shp, "weight_shape does not fit the packed tensor");
      shape.assign(dims->begin(), dims->end());
    }
    packedCols_ = w.shape.back();
    setShape(shape);
    M_ = shape.size() >= 2 ? shape[shape.size() - 2] : 1;
    scale_.init(c, *s);
    groups_ = s->shape.empty() ? 1 : s->shape.back();
    if (scale_.n == 1) groups_ = 1;
    else if (scale_.n != rows_ * groups_) mismatch(c, *s, "has " + std::to_string(scale_.n) + " scales for " + std::to_string(rows_) + " rows");
    group_ = groups_ == 1 ? cols_ : (c.model.quant.groupSize > 0 && ceilDiv(cols_, uint64_t(c.model.quant.groupSize)) == groups_ ? uint64_t(c.model.quant.groupSize) : ceilDiv(cols_, groups_));
    if (zp) {
      zp_.init(c, *zp);
      zpPacked_ = zp->dtype->name == "I32" && kind_ == Kind::CompressedTensors;
      zpData_ = dataOf(c, *zp);
    }
    if (gidx) {
      gidx_.init(c, *gidx);
      if (gidx_.n != cols_) mismatch(c, *gidx, "g_idx must hold one group index per input column (" + std::to_string(cols_) + ")");
    }
  }

  void decode(uint64_t row, uint64_t n, float* out) const override {
    decodeRows(row, n, out);
    count(bytesOf(n));
  }
  // Per row: each group's least and greatest code, minus its zero, times its scale, are the
  // group's extremes (monotone in the code); the row is decoded when one of those products is not
  // finite. Offset schemes without g_idx, codes of whole bytes per group; the rest decode.
  uint64_t extent(uint64_t row, uint64_t n, Extent& e, ExtentScratch& scratch) const override {
    const uint64_t groupBytes = group_ * bits_ / 8, rowBytes = packedCols_ * wordBytes_;
    const bool wholeGroups = group_ && groups_ * group_ == cols_ && group_ * bits_ % 8 == 0;
    if (kind_ == Kind::Mlx || gidx_.t || (bits_ != 4 && bits_ != 8) || !wholeGroups) return RowDecoder::extent(row, n, e, scratch);
    const uint8_t* codes = w_.staged(row * rowBytes, n * rowBytes, scratch.codes, scratch.pread);
    std::vector<float>& scales = scratch.groupScales;  // the rows' group scales
    scales.resize(scale_.n == 1 ? groups_ : n * groups_);
    bool keptScales = false;  // read by the scale rules already: not counted twice
    const uint8_t* storedScales = nullptr;
    if (scale_.n == 1) std::fill(scales.begin(), scales.end(), scale_.at(0));
    else storedScales = scale_.stored(row * groups_, n * groups_, scratch.scales, scratch.pread, &scratch.kept, &keptScales);
    count(bytesOf(n) - (keptScales ? n * groups_ * scale_.t->dtype->blockBytes : 0));
    const int offset = 1 << (bits_ - 1);
    const bool oneZero = !zp_.t && bits_ == 4;  // int4ProductRange: no per-group buffers
    // The chunk's rows as one run of groups when they lie back to back with a scale each: a call
    // a row spent as much on its set-up and final reduction as on a short row's groups (perf
    // annotate). BF16 scales are taken as stored. A run whose products are not all finite goes
    // row by row below.
    const bool bf16Scales = scale_.r.kind() == ElemKind::BF16;
    if (storedScales && !bf16Scales) scale_.r.run(storedScales, 0, n * groups_, scales.data());
    if (oneZero && storedScales && rowBytes == groups_ * groupBytes) {
      const GroupScales given = bf16Scales ? GroupScales::storedBf16(storedScales) : GroupScales(scales.data());
      const ProductRange all = int4ProductRange(codes, n * groups_, groupBytes, offset, given, {e.least(), e.greatest()});
      if (all.finite) {
        e.addFinite(n * cols_, all.lo, all.hi);
        return n * cols_;
      }
    }
    if (storedScales && bf16Scales) scale_.r.run(storedScales, 0, n * groups_, scales.data());
    std::vector<uint8_t> lo(oneZero ? 0 : groups_), hi(oneZero ? 0 : groups_);
    std::vector<float> ends(oneZero ? 0 : 2 * groups_);
    uint64_t told = 0;
    for (uint64_t r = row; r < row + n; ++r) {
      const uint8_t* q = codes + (r - row) * rowBytes;
      const float* s = scales.data() + (scale_.n == 1 ? 0 : (r - row) * groups_);
      ProductRange spanned;  // every value lies between its group's two ends, which are values too
      if (oneZero) {
        spanned = int4ProductRange(q, groups_, groupBytes, offset, s, {e.least(), e.greatest()});  // vectorized
      } else {
        groupCodeRanges(q, groups_, groupBytes, bits_, lo.data(), hi.data());
        for (uint64_t g = 0; g < groups_; ++g) {
          const int z = zeroCode(r, g, offset);
          ends[2 * g] = float(int(lo[g]) - z) * s[g];
          ends[2 * g + 1] = float(int(hi[g]) - z) * s[g];
        }
        Extent ex;
        ex.add(ends.data(), ends.size());
        spanned = {float(ex.min()), float(ex.max()), !ex.nan && !ex.inf};
      }
      if (spanned.finite) {
        e.addFinite(cols_, spanned.lo, spanned.hi);
        told += cols_;
      } else {
        float* v = scratch.valuesFor(cols_);
        decodeRows(r, 1, v);
        e.add(v, cols_);
      }
    }
    return told;
  }
  DecodeDesc describe() const override {
    DecodeDesc d;
    d.kind = DescKind::PackedInt;
    d.rows = rows_, d.cols = cols_;
    d.w = Region{w_.mapped, rows_ * packedCols_ * wordBytes_, 0, ElemKind::None};
    d.intKind = kind_ == Kind::CompressedTensors ? 0 : kind_ == Kind::RawInt4 ? 1 : 2;
    d.bits = bits_, d.wordBytes = wordBytes_;
    d.packedCols = packedCols_, d.groups = groups_, d.group = group_, d.M = M_;
    d.s = scale_.region();
    d.zp = zp_.region();
    d.zpPacked = zpPacked_;
    d.gidx = gidx_.region();
    return d;
  }

  void decodeRows(uint64_t row, uint64_t n, float* out) const {
    // Codes are packed little end first in little-endian words, so code j of a row sits in byte
    // j*bits/8 whatever the word size: one byte stream serves int32, uint32 and byte packings.
    const int offset = kind_ == Kind::Mlx ? 0 : 1 << (bits_ - 1);
    const uint64_t rowBytes = packedCols_ * wordBytes_;
    std::vector<int> codes(cols_), zeros(groups_);
    std::vector<float> scales(groups_);
    for (uint64_t r = row; r < row + n; ++r) {
      const uint8_t* q = w_.mapped + r * rowBytes;
      float* y = out + (r - row) * cols_;
      unpackCodes(q, cols_, bits_, codes.data());
      if (gidx_.t) {
        for (uint64_t j = 0; j < cols_; ++j) {
          const uint64_t g = uint64_t(gidx_.at(j));
          y[j] = kind_ == Kind::Mlx ? scale_.at(r * groups_ + g) * float(codes[j]) + zp_.at(r * groups_ + g)
                                    : float(codes[j] - zeroCode(r, g, offset)) * scale_.at(r * groups_ + g);
        }
        continue;
      }
      if (kind_ == Kind::Mlx) {
        for (uint64_t g = 0; g < groups_; ++g) {
          const uint64_t j0 = g * group_, j1 = std::min(cols_, j0 + group_);
          affineRun(codes.data() + j0, j1 - j0, scale_.n == 1 ? scale_.at(0) : scale_.at(r * groups_ + g), zp_.at(r * groups_ + g), y + j0);
        }
        continue;
      }
      if (scale_.n == 1) std::fill(scales.begin(), scales.end(), scale_.at(0));
      else scale_.r.run(scale_.bytes.mapped, r * groups_, groups_, scales.data());  // the row's group scales, contiguous
      for (uint64_t g = 0; g < groups_; ++g) zeros[g] = zeroCode(r, g, offset);
      groupedOffsetRow(codes.data(), cols_, group_, zeros.data(), scales.data(), y);
    }
  }
  uint64_t bytesOf(uint64_t n) const { return n * (packedCols_ * wordBytes_ + groups_ * scale_.t->dtype->blockBytes); }

  // The unsigned code that stands for zero: 2^(bits-1) when symmetric, else the zero point
  // (compressed-tensors packs zero points along dim 0 with the same +2^(bits-1) offset).
  int zeroCode(uint64_t r, uint64_t g, int offset) const {
    if (!zp_.t) return offset;
    if (!zpPacked_) return int(zp_.at(r * groups_ + g)) + offset;
    const uint32_t perWord = 32 / bits_;
    const uint64_t b = r / M_, i = r % M_;
    const uint64_t packedRows = ceilDiv(M_, perWord);
    uint32_t word;
    std::memcpy(&word, zpData_ + ((b * packedRows + i / perWord) * groups_ + g) * 4, 4);
    return int((word >> ((i % perWord) * bits_)) & ((1u << bits_) - 1));
  }

  Kind kind_;
  unsigned bits_;
  StoredBytes w_;  // the packed codes
  const uint8_t* zpData_ = nullptr;
  uint32_t wordBytes_ = 4;
  uint64_t packedCols_ = 0, M_ = 1, groups_ = 1, group_ = 1;
  bool zpPacked_ = false;
  ScaleView scale_, zp_, gidx_;
};

// KTransformers NUMA shards: node k holds a contiguous slice of the output rows (our reading,
// docs/formats-decisions.md); INT8 codes, or INT4 two per byte low nibble first biased by 8; a
// float scale per row (or per group along the row).
class KtDecoder : public RowDecoder {
 public:
  KtDecoder(const Checkpoint& c, const LogicalTensor& l, bool int4) : int4_(int4) {
    for (uint32_t m : l.members) {
      const auto& t = c.tensors[m];
      size_t k = size_t(t.numaNode);
      if (parts_.size() <= k) parts_.resize(k + 1);
      if (t.component == Component::Weight) parts_[k].w = &t, parts_[k].p = dataOf(c, t);
      if (t.component == Component::Scale) parts_[k].s.init(c, t);
    }
    const TensorRecord& first = c.tensors[uint32_t(l.weight)];
    const ModelDescription& md = c.model;
    uint64_t out = 0, in = 0;
    if (md.hiddenSize > 0 && md.expertIntermediateSize > 0) {
      const bool down = first.projection == Projection::Down;
      out = uint64_t(down ? md.hiddenSize : md.expertIntermediateSize);
      in = uint64_t(down ? md.expertIntermediateSize : md.hiddenSize);
    } else if (first.shape.size() == 2) {
      out = first.shape[0] * parts_.size();
      in = first.shape[1] * (int4 ? 2 : 1);
    } else {
      mismatch(c, first, "KTransformers weights need hidden_size and moe_intermediate_size from config.json");
    }
    for (const auto& part : parts_)
      if (!part.w || !part.s.t) mismatch(c, first, "a NUMA node lacks its weight or scale");
    if (out % parts_.size()) mismatch(c, first, "output rows do not split evenly over the NUMA nodes");
    rowsPerPart_ = out / parts_.size();
    setShape({out, in});
    for (const auto& part : parts_) {
      if (part.w->bytes != rowsPerPart_ * in / (int4 ? 2 : 1)) mismatch(c, *part.w, "holds " + std::to_string(part.w->bytes) + " bytes, expected " + std::to_string(rowsPerPart_ * in / (int4 ? 2 : 1)));
      if (part.s.n % rowsPerPart_) mismatch(c, *part.s.t, "scale count is not a multiple of the rows of this node");
    }
  }
  void decode(uint64_t row, uint64_t n, float* out) const override {
    for (uint64_t r = row; r < row + n; ++r) {
      const Part& part = parts_[r / rowsPerPart_];
      const uint64_t i = r % rowsPerPart_;
      const uint64_t perRow = part.s.n / rowsPerPart_, group = cols_ / perRow;
      float* y = out + (r - row) * cols_;
      for (uint64_t j = 0; j < cols_; ++j) {
        const float s = part.s.at(i * perRow + j / group);
        int q;
        if (int4_) {
          const uint8_t b = part.p[(i * cols_ + j) / 2];
          q = int(((j & 1) ? b >> 4 : b & 0xF)) - 8;
        } else {
          q = int8_t(part.p[i * cols_ + j]);
        }
        y[j] = float(q) * s;
      }
    }
    count(n * (int4_ ? cols_ / 2 : cols_));
  }
  DecodeDesc describe() const override {
    DecodeDesc d;
    d.kind = DescKind::Kt;
    d.rows = rows_, d.cols = cols_;
    d.parts = uint32_t(parts_.size());  // the device side refuses more than kMaxNuma
    for (uint32_t k = 0; k < d.parts && k < uint32_t(kMaxNuma); ++k) {
      d.ktW[k] = regionOf(parts_[k].p, *parts_[k].w);
      d.ktS[k] = parts_[k].s.region();
    }
    d.rowsPerPart = rowsPerPart_;
    d.int4 = int4_;
    return d;
  }

 private:
  struct Part {
    const TensorRecord* w = nullptr;
    const uint8_t* p = nullptr;
    ScaleView s;
  };
  std::vector<Part> parts_;
  bool int4_;
  uint64_t rowsPerPart_ = 1;
};

std::unique_ptr<RowDecoder> build(const Checkpoint& c, uint32_t li) {
  const LogicalTensor& l = c.logical[li];
  const TensorRecord& first = c.tensors[l.members.front()];
  const TensorRecord& w = l.weight >= 0 ? c.tensors[uint32_t(l.weight)] : first;
  const TensorRecord *scale = nullptr, *global = nullptr;
  for (uint32_t m : l.members) {
    if (c.tensors[m].component == Component::Scale && !scale) scale = &c.tensors[m];
    if (c.tensors[m].component == Component::GlobalScale) global = &c.tensors[m];
  }
  const SchemeInfo& info = schemeInfo(l.scheme);
  if (w.dtype->isBlockQuant()) return std::make_unique<GgufBlockDecoder>(c, w);
  // Schemes read from the names alone (gpt-oss "_blocks") can lack their scales in a damaged file.
  // (KT blobs carry one scale per NUMA part, checked by their decoder.)
  if (info.needsScale && !scale && info.decoder != DecoderKind::Kt)
    mismatch(c, w, l.schemeName + " weight has no scale tensor");
  switch (info.decoder) {
    case DecoderKind::Fp8Scaled: {
      const auto mode = l.scheme == Scheme::Fp8Block     ? Fp8ScaledDecoder::Mode::Block
                        : l.scheme == Scheme::Fp8Channel ? Fp8ScaledDecoder::Mode::Channel
                                                         : Fp8ScaledDecoder::Mode::Tensor;
      return std::make_unique<Fp8ScaledDecoder>(c, w, *scale, mode);
    }
    case DecoderKind::Nvfp4: return std::make_unique<Nvfp4Decoder>(c, w, *scale, global, info.global == GlobalScale::Divides);
    case DecoderKind::MxfpBlocks:
      // Packed rows - [..., cols / 2] codes beside [..., cols / 32] scales, a scale per row's block
      // (compressed-tensors, DeepSeek-V4's experts) - or gpt-oss's [..., nb, 16] beside [..., nb].
      return std::make_unique<MxfpBlocksDecoder>(c, w, *scale, l.scheme == Scheme::Mxfp4Ct || scale->shape.size() == w.shape.size());
    case DecoderKind::PackedInt: {
      const auto kind = l.scheme == Scheme::RawInt4 ? PackedIntDecoder::Kind::RawInt4
                        : (l.scheme == Scheme::MlxAffine4 || l.scheme == Scheme::MlxAffine8) ? PackedIntDecoder::Kind::Mlx
                                                                                                : PackedIntDecoder::Kind::CompressedTensors;
      return std::make_unique<PackedIntDecoder>(c, l, w, kind, int(info.bits));
    }
    case DecoderKind::Kt: return std::make_unique<KtDecoder>(c, l, l.scheme == Scheme::KtInt4);
    case DecoderKind::GptqAwq: return makeGptqAwqDecoder(c, l);
    case DecoderKind::Bnb4: return makeBnb4Decoder(c, l);
    case DecoderKind::Int8Rows: return makeInt8RowsDecoder(c, l);
    case DecoderKind::Unsupported: mismatch(c, w, "MLX weights of a bit width the decoders do not read (" + l.schemeName + ")");
    case DecoderKind::Plain:
    case DecoderKind::GgufBlocks: break;
  }
  return std::make_unique<PlainDecoder>(c, w);
}

}  // namespace

uint64_t RowDecoder::extent(uint64_t firstRow, uint64_t count, Extent& e, ExtentScratch& scratch) const {
  float* v = scratch.valuesFor(count * cols_);
  decode(firstRow, count, v);
  e.add(v, count * cols_);
  return 0;
}

void RowDecoder::setShape(std::vector<uint64_t> s) {
  shape_ = std::move(s);
  cols_ = shape_.empty() ? 1 : shape_.back();
  rows_ = cols_ ? product(shape_) / cols_ : 0;
  if (shape_.empty()) rows_ = 1;
  // No elements: 0 x 0 whatever the dims say, so nobody sizes a buffer from one dimension
  // ([0, 2^50] is a valid safetensors tensor; the fuzzer made the value rules ask for 4 PiB).
  if (rows_ == 0) cols_ = 0;
}

// A remote checkpoint's mirror holds headers only: a tensor nobody fetched reads as zeros, so a
// decoder of one is refused rather than built (remote_reads.h fetches what a decode needs).
void requireFetched(const Checkpoint& c, const TensorRecord& t) {
  if (c.remote && t.bytes && !c.remote->touched(c.files[t.file].path, t.offset, t.bytes))
    fail(ErrorCode::Remote, "the bytes of this tensor were not fetched from " + c.remote->location() + " (this command reads only headers of a remote checkpoint)",
         c.files[t.file].path, t.offset, t.name);
}

Result<std::unique_ptr<RowDecoder>> makeDecoder(const Checkpoint& c, uint32_t logical) {
  return capture([&]() -> std::unique_ptr<RowDecoder> {
    if (logical >= c.logical.size()) fail(ErrorCode::Usage, "no such logical tensor");
    for (uint32_t m : c.logical[logical].members) requireFetched(c, c.tensors[m]);
    return build(c, logical);
  });
}

Result<std::unique_ptr<RowDecoder>> makeLayoutDecoder(const Checkpoint& c, uint32_t logical) {
  return capture([&]() -> std::unique_ptr<RowDecoder> {
    if (logical >= c.logical.size()) fail(ErrorCode::Usage, "no such logical tensor");
    return build(c, logical);  // no byte is read: a remote checkpoint's headers suffice
  });
}

Result<std::vector<uint64_t>> decodedShape(const Checkpoint& c, uint32_t logical) {
  auto d = makeLayoutDecoder(c, logical);
  if (!d) return d.error();
  return d.value()->shape();
}

Result<std::unique_ptr<RowDecoder>> makeStoredDecoder(const Checkpoint& c, const TensorRecord& t) {
  return capture([&]() -> std::unique_ptr<RowDecoder> {
    requireFetched(c, t);
    if (t.dtype->isBlockQuant()) mismatch(c, t, "a block-quantized companion has no plain values");
    return std::make_unique<PlainDecoder>(c, t);
  });
}

Result<uint32_t> findLogical(const Checkpoint& c, const std::string& name) {
  if (const TensorRecord* t = c.find(name)) return t->logical;
  for (uint32_t i = 0; i < c.logical.size(); ++i)
    if (c.logical[i].name == name) return i;
  return Error{ErrorCode::Usage, "no tensor named '" + name + "' (try `weightscope inspect --filter`)", c.root, std::nullopt, name};
}

Selection selectRows(const RowDecoder& d, const DequantRequest& req, const std::string& name) {
  std::vector<uint64_t> shape = d.shape();
  uint64_t base = 0, rows = d.rows();
  if (req.expert >= 0) {
    if (shape.size() < 3) fail(ErrorCode::Usage, "--expert needs a stacked or fused [E, rows, cols] tensor", {}, std::nullopt, name);
    if (uint64_t(req.expert) >= shape[0])
      fail(ErrorCode::Usage, "expert " + std::to_string(req.expert) + " is out of range [0, " + std::to_string(shape[0]) + ")", {}, std::nullopt, name);
    rows = d.rows() / shape[0];
    base = uint64_t(req.expert) * rows;
    shape.erase(shape.begin());
  }
  const uint64_t end = std::min(req.rowEnd, rows);
  if (req.rowBegin > end) fail(ErrorCode::Usage, "row range starts past its end (" + std::to_string(rows) + " rows)", {}, std::nullopt, name);
  Selection sel;
  sel.firstRow = base + req.rowBegin;
  sel.rows = end - req.rowBegin;
  sel.shape = sel.rows == rows ? shape : std::vector<uint64_t>{sel.rows, d.cols()};  // a row range flattens leading dims
  return sel;
}

Result<DequantOutput> dequantize(const Checkpoint& c, const DequantRequest& req) {
  return capture([&]() -> DequantOutput {
    fetchForDecode(c, req);  // a remote checkpoint: only the bytes of the rows decoded
    auto dec = makeDecoder(c, req.logical);
    if (!dec) throw CoreError(dec.error());
    RowDecoder& d = *dec.value();
    ByteCounter counter;
    d.setCounter(&counter);
    const Selection sel = selectRows(d, req, c.logical[req.logical].name);
    const uint64_t n = sel.rows;
    const std::string& name = c.logical[req.logical].name;
    DequantOutput out;
    out.shape = sel.shape;
    auto total = checkedMul(n, d.cols());
    if (!total || *total > (uint64_t(1) << 34)) fail(ErrorCode::Usage, "selection is too large to hold in memory; pick rows with --rows", {}, std::nullopt, name);
    out.values.resize(*total);
    d.decode(sel.firstRow, n, out.values.data());
    applyNumerics(req.numerics, d, sel.firstRow, n, out.values.data());
    out.bytesRead = counter.bytes.load();
    return out;
  });
}

}  // namespace ws::num
