#include "core/numerics/library_decoders.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/numerics/decode_element.h"
#include "core/numerics/stored_views.h"

namespace ws::num {

namespace {

const TensorRecord* memberOf(const Checkpoint& c, const LogicalTensor& l, Component comp, std::string_view suffix = {}) {
  for (uint32_t m : l.members) {
    const TensorRecord& t = c.tensors[m];
    if (t.component == comp && (suffix.empty() || t.name.ends_with(suffix))) return &t;
  }
  return nullptr;
}

std::string dims(const TensorRecord& t) {
  std::string s = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

// The dtype a writer's values come out in, from the element kind of its scales or its quant
// state's dtype name; F32 leaves the product as is.
ElemKind roundingOf(ElemKind k) { return k == ElemKind::F16 || k == ElemKind::BF16 ? k : ElemKind::F32; }

// GPTQ: qweight [in x bits / 32, out] packs each output column's input codes down the column;
// qzeros [groups, out x bits / 32] packs a group's zeros along the row; scales [groups, out];
// g_idx [in] the group of each input (act-order), else input k is in group k / group_size.
// The v1 format stores each zero one below the real one (AutoGPTQ's pack does zeros -= 1); GPTQModel
// 7.7.0 writes v1 from its internal v2 by subtracting one from every field of a word at once, and
// reads it back by the inverse (gptqZero in decode_element.h), which we follow: AutoGPTQ 0.7.1's
// torch path (qlinear_cuda.py) masks each field and adds 1, which differs only where a real zero
// of 0 borrowed from its neighbour. v2 ("gptq_v2") stores the zeros as they are.
// AWQ GEMM: qweight [in, out / 8] packs 8 output columns a word in the interleaved order,
// qzeros [groups, out / 8] the same, scales [groups, out], no offset on the zeros (AutoAWQ 0.2.9
// packing_utils.dequantize_gemm). AWQ GEMV (AutoAWQ 0.2.7.post3 WQLinear_GEMV.from_linear):
// qweight [out, in / 8] with input 8c + i in nibble i of word c, qzeros [out, W] and scales
// [out, 8 W] holding group 8c + i the same way, W padded (awqGemvZerosWidth). All multiply int
// (code - zero) by the half scales: the product is rounded to the scales' dtype (for GEMV as its
// gemmv2 kernel rounds it, AutoAWQ_kernels c7b0e88 gemm_cuda_gen.cu:614; its batch-1 gemv kernel
// keeps the float32 product, which the half holds to within its last bit).
class GptqAwqDecoder : public RowDecoder {
 public:
  GptqAwqDecoder(const Checkpoint& c, const LogicalTensor& l) {
    const QuantConfig& q = c.model.quant;
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    const TensorRecord* s = memberOf(c, l, Component::Scale);
    const TensorRecord* zp = memberOf(c, l, Component::ZeroPoint);
    const TensorRecord* gidx = memberOf(c, l, Component::GIdx);
    const bool awq = l.scheme == Scheme::Awq;
    const char* who = awq ? "AWQ" : "GPTQ";
    if (w.shape.size() != 2 || (w.dtype->name != "I32" && w.dtype->name != "U32")) mismatch(c, w, std::string(who) + " qweight must be 2-D int32 words, not " + std::string(w.dtype->name) + " " + dims(w));
    const bool gemv = awq && q.awqVersion == "gemv";
    if (!s || s->shape.size() != 2 || !s->shape[0] || !s->shape[1]) mismatch(c, w, std::string(who) + " weight needs its scales " + (gemv ? "[out, groups padded]" : "[groups, out]"));
    uint64_t groups = s->shape[0], out = s->shape[1];
    uint64_t in = 0;
    if (gemv) {
      // AutoAWQ's GEMV packing keeps every tensor by output row, the groups padded to a width its
      // kernels read in pairs of words, so the scales cannot tell the group size (gemv_cuda.cu).
      out = w.shape[0];
      in = w.shape[1] * 8;
      if (q.groupSize <= 0 || in % uint64_t(q.groupSize)) mismatch(c, w, "AWQ GEMV needs quantization_config.group_size dividing its " + std::to_string(in) + " inputs (the padded scales do not tell it)");
      groups = in / uint64_t(q.groupSize);
      const uint64_t width = awqGemvZerosWidth(groups, uint64_t(q.groupSize));
      if (!width) mismatch(c, w, "AWQ GEMV group size " + std::to_string(q.groupSize) + " is none AutoAWQ packs (32, 64 or 128 and up)");
      if (s->shape[0] != out || s->shape[1] != width * 8)
        mismatch(c, *s, "AWQ GEMV scales " + dims(*s) + " are not [" + std::to_string(out) + ", " + std::to_string(width * 8) + "] for " + std::to_string(groups) + " groups padded");
      if (!zp) mismatch(c, w, "AWQ GEMV weight has no qzeros (AutoAWQ always packs them)");
      zpRowWords_ = width;
      bits_ = 4;
      mode_ = 3;
    } else if (awq) {
      // AutoAWQ's gemv_fast keeps int16 tiles and marlin its own permutation; neither has a
      // dequantization in AutoAWQ to hold a decoder to.
      if (!q.awqVersion.empty() && q.awqVersion != "gemm") mismatch(c, w, "AWQ version \"" + q.awqVersion + "\" is not decoded (gemm's and gemv's packings are)");
      if (w.shape[1] * 8 != out) mismatch(c, w, "AWQ GEMM qweight " + dims(w) + " does not hold 8 codes a word for the " + std::to_string(out) + " columns of its scales");
      in = w.shape[0];
      bits_ = 4;
      mode_ = 2;
    } else {
      if (w.shape[1] != out) mismatch(c, w, "GPTQ qweight " + dims(w) + " and scales " + dims(*s) + " differ in output columns");
      const std::string& format = !q.checkpointFormat.empty() ? q.checkpointFormat : q.format;  // optimum 2 says "format"
      if (!format.empty() && format != "gptq" && format != "gptq_v2")
        mismatch(c, w, "GPTQ checkpoint format \"" + format + "\" is not decoded (gptq and gptq_v2 are)");
      mode_ = format == "gptq_v2" ? 1 : 0;
      bits_ = q.bits > 0 ? uint32_t(q.bits) : 0;
      if (!bits_ && gidx && gidx->elements() && (w.shape[0] * 32) % gidx->elements() == 0) bits_ = uint32_t(w.shape[0] * 32 / gidx->elements());
      if (bits_ != 2 && bits_ != 3 && bits_ != 4 && bits_ != 8)
        mismatch(c, w, "GPTQ width " + (bits_ ? std::to_string(bits_) + " bits is not 2, 3, 4 or 8" : std::string("unknown: config.json has no quantization_config.bits and no g_idx tells it")));
      in = w.shape[0] * 32 / bits_;
      if (w.shape[0] * 32 % bits_) mismatch(c, w, "GPTQ qweight rows " + std::to_string(w.shape[0]) + " are not a whole number of " + std::to_string(bits_) + "-bit codes");
      if (gidx && gidx->elements() != in) mismatch(c, *gidx, "g_idx holds " + std::to_string(gidx->elements()) + " groups for the " + std::to_string(in) + " inputs qweight packs");
    }
    group_ = q.groupSize > 0 ? uint64_t(q.groupSize) : ceilDiv(in, groups);
    if (ceilDiv(in, group_) != groups && !gidx && !gemv)
      mismatch(c, *s, "scales hold " + std::to_string(groups) + " groups, but " + std::to_string(in) + " inputs in groups of " + std::to_string(group_) + " make " + std::to_string(ceilDiv(in, group_)));
    // 3-bit codes straddle words: a zero row that is not whole words would end mid-code.
    if (bits_ == 3 && out % 32) mismatch(c, w, "3-bit GPTQ needs output columns in 32s (the zeros pack 32 to 3 words), not " + std::to_string(out));
    if (!gemv) zpRowWords_ = ceilDiv(out * bits_, 32);
    const uint64_t zpRows = gemv ? out : groups;
    if (zp) {
      if (zp->shape.size() != 2 || zp->shape[0] != zpRows || zp->shape[1] != zpRowWords_ || zp->dtype->blockBytes != 4)
        mismatch(c, *zp, "qzeros " + std::string(zp->dtype->name) + " " + dims(*zp) + " does not pack " + std::to_string(bits_) + "-bit zeros of " + std::to_string(groups) + " groups x " + std::to_string(out) + " columns");
      zp_ = StoredBytes(c, *zp);
    } else if (!awq) {
      mismatch(c, w, "GPTQ weight has no qzeros");
    }
    scale_.init(c, *s);
    roundTo_ = roundingOf(scale_.r.kind());
    if (gidx) {
      gidx_.init(c, *gidx);
      // A group index past the scales would read past them: checked once, here.
      for (uint64_t k = 0; k < in; ++k)
        if (const float g = gidx_.at(k); !(g >= 0 && g < float(groups)))
          mismatch(c, *gidx, "g_idx[" + std::to_string(k) + "] = " + std::to_string(g) + " is not one of the " + std::to_string(groups) + " groups");
    }
    w_ = StoredBytes(c, w);
    packedCols_ = w.shape[1];
    groups_ = groups;
    setShape({out, in});
  }

  void decode(uint64_t row, uint64_t n, float* out) const override {
    std::vector<uint32_t> column(mode_ >= 2 ? 0 : ceilDiv(cols_ * bits_, 32) + 1);
    std::vector<int> zeros(groups_);
    std::vector<float> scales(groups_);
    for (uint64_t r = row; r < row + n; ++r) {
      for (uint64_t g = 0; g < groups_; ++g) {
        zeros[g] = zeroOf(r, g);
        scales[g] = scale_.at(awqGptqScaleIndex(mode_, rows_, zpRowWords_, r, g));
      }
      float* y = out + (r - row) * cols_;
      if (mode_ == 3) {  // AWQ GEMV: the row's words in input order, eight nibbles each, low first
        for (uint64_t k = 0; k < cols_; ++k) {
          const uint64_t g = k / group_;
          y[k] = roundedTo(roundTo_, float(int(sequentialNibble(w_.mapped, r * packedCols_ + k / 8, k)) - zeros[g]) * scales[g]);
        }
        continue;
      }
      if (mode_ == 2) {
        const uint32_t shift = 4u * uint32_t(((r & 7) >> 1) | ((r & 1) << 2));
        for (uint64_t k = 0; k < cols_; ++k) {
          uint32_t word;
          std::memcpy(&word, w_.mapped + (k * packedCols_ + r / 8) * 4, 4);
          const uint64_t g = k / group_;
          y[k] = roundedTo(roundTo_, float(int((word >> shift) & 0xFu) - zeros[g]) * scales[g]);
        }
        continue;
      }
      // GPTQ: the column's words gathered once, then its codes read as one little-endian stream.
      const uint64_t words = packedWords();
      for (uint64_t i = 0; i < words; ++i) std::memcpy(&column[i], w_.mapped + (i * packedCols_ + r) * 4, 4);
      column[words] = 0;
      const uint32_t mask = (1u << bits_) - 1u;
      for (uint64_t k = 0; k < cols_; ++k) {
        const uint64_t bit = k * bits_;
        const uint64_t pair = uint64_t(column[bit / 32]) | uint64_t(column[bit / 32 + 1]) << 32;
        const int code = int(uint32_t(pair >> (bit % 32)) & mask);
        const uint64_t g = gidx_.t ? uint64_t(gidx_.at(k)) : k / group_;
        y[k] = roundedTo(roundTo_, float(code - zeros[g]) * scales[g]);
      }
    }
    count(n * (packedWords() * 4 + groups_ * (scale_.t->dtype->blockBytes + 1)));
  }

  DecodeDesc describe() const override {
    DecodeDesc d;
    d.kind = DescKind::GptqAwq;
    d.mode = mode_;
    d.rows = rows_, d.cols = cols_;
    d.w = Region{w_.mapped, (mode_ == 3 ? rows_ : mode_ == 2 ? cols_ : packedWords()) * packedCols_ * 4, 0, ElemKind::None};
    d.wWhole = true;
    d.bits = bits_;
    d.packedCols = packedCols_, d.groups = groups_, d.group = group_, d.zpRowWords = zpRowWords_;
    d.s = scale_.region();
    if (zp_.mapped) d.zp = Region{zp_.mapped, (mode_ == 3 ? rows_ : groups_) * zpRowWords_ * 4, 0, ElemKind::None};
    d.gidx = gidx_.region();
    d.roundTo = roundTo_;
    return d;
  }

 private:
  uint64_t packedWords() const { return cols_ * bits_ / 32; }
  // Group g's zero for output column r: AWQ's interleaved nibble, GPTQ's stream code (plus one in v1).
  int zeroOf(uint64_t r, uint64_t g) const {
    if (!zp_.mapped) return 0;  // AWQ without zero points (zero_point false)
    if (mode_ == 3) return int(sequentialNibble(zp_.mapped, r * zpRowWords_ + g / 8, g));
    const uint8_t* row = zp_.mapped + g * zpRowWords_ * 4;
    if (mode_ == 2) return int(awqNibble(row, r / 8, r));
    if (mode_ == 1) return int(streamCode(row, 1, r, bits_));
    if (bits_ == 3) return int((streamCode(row, 1, r, 3) + 1u) & 7u);  // v1: see gptqZero
    uint32_t word;
    std::memcpy(&word, row + r * bits_ / 32 * 4, 4);
    word += bits_ == 2 ? 0x55555555u : bits_ == 4 ? 0x11111111u : 0x01010101u;
    return int((word >> (r * bits_ % 32)) & ((1u << bits_) - 1u));
  }

  StoredBytes w_, zp_;
  ScaleView scale_, gidx_;
  uint32_t bits_ = 4;
  int mode_ = 0;
  uint64_t packedCols_ = 0, groups_ = 1, group_ = 1, zpRowWords_ = 0;
  ElemKind roundTo_ = ElemKind::F32;
};

// bitsandbytes 4-bit (functional.dequantize_4bit at 0.50.1): the quant state bitsandbytes packs
// beside the weight as UTF-8 JSON in a U8 tensor (utils.pack_dict_to_tensor) gives the shape,
// block size, output dtype and, when the absmax are themselves quantized (compress_statistics),
// the nested block size and offset.
class Bnb4Decoder : public RowDecoder {
 public:
  Bnb4Decoder(const Checkpoint& c, const LogicalTensor& l) {
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    const TensorRecord* absmax = memberOf(c, l, Component::Scale, ".weight.absmax");
    const std::string stateName = l.scheme == Scheme::BnbFp4 ? "quant_state.bitsandbytes__fp4" : "quant_state.bitsandbytes__nf4";
    const TensorRecord* state = memberOf(c, l, Component::QuantState, "." + stateName);
    if (!state) mismatch(c, w, "bitsandbytes 4-bit weight has no " + stateName + " beside it");
    if (state->dtype->name != "U8") mismatch(c, *state, "quant state is " + std::string(state->dtype->name) + ", not the U8 bytes of its JSON");
    const uint8_t* p = dataOf(c, *state);
    const nlohmann::json j = nlohmann::json::parse(p, p + state->bytes, nullptr, false);
    if (!j.is_object()) mismatch(c, *state, "quant state is not a JSON object");
    auto integer = [&](const char* key) -> uint64_t {
      const auto it = j.find(key);
      if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() <= 0) mismatch(c, *state, std::string("quant state has no positive integer \"") + key + "\"");
      return it->get<uint64_t>();
    };
    const std::string type = j.value("quant_type", std::string{}), dtype = j.value("dtype", std::string{});
    if (type != (l.scheme == Scheme::BnbFp4 ? "fp4" : "nf4")) mismatch(c, *state, "quant state says quant_type \"" + type + "\" under the name " + state->name);
    mode_ = l.scheme == Scheme::BnbFp4 ? 1 : 0;
    roundTo_ = dtype == "bfloat16" ? ElemKind::BF16 : dtype == "float16" ? ElemKind::F16 : dtype == "float32" ? ElemKind::F32 : ElemKind::None;
    if (roundTo_ == ElemKind::None) mismatch(c, *state, "quant state dtype \"" + dtype + "\" is not bfloat16, float16 or float32");
    blocksize_ = integer("blocksize");
    std::vector<uint64_t> shape;
    if (const auto it = j.find("shape"); it != j.end() && it->is_array())
      for (const auto& e : *it)
        shape.push_back(e.is_number_integer() && e.get<int64_t>() >= 0 ? e.get<uint64_t>() : UINT64_MAX);
    if (shape.empty() || shape.size() > 8 || std::find(shape.begin(), shape.end(), UINT64_MAX) != shape.end())
      mismatch(c, *state, "quant state has no shape of 1 to 8 non-negative sizes");
    const uint64_t n = product(shape);
    if (w.bytes != ceilDiv(n, 2)) mismatch(c, w, "holds " + std::to_string(w.bytes) + " bytes, but the quant state's shape has " + std::to_string(n) + " values (" + std::to_string(ceilDiv(n, 2)) + " bytes)");
    const uint64_t blocks = ceilDiv(n, blocksize_);
    if (!absmax || absmax->elements() != blocks) mismatch(c, absmax ? *absmax : w, "needs " + std::to_string(blocks) + " absmax, one per " + std::to_string(blocksize_) + " values");
    if (j.contains("nested_blocksize")) {
      const TensorRecord* nested = memberOf(c, l, Component::QuantState, ".weight.nested_absmax");
      const TensorRecord* map = memberOf(c, l, Component::QuantState, ".weight.nested_quant_map");
      nestedBlocksize_ = integer("nested_blocksize");
      const auto off = j.find("nested_offset");
      if (off == j.end() || !off->is_number()) mismatch(c, *state, "quant state has no numeric nested_offset");
      offset_ = float(off->get<double>());  // float32 in bitsandbytes (QuantState.from_dict)
      if (absmax->dtype->name != "U8") mismatch(c, *absmax, "nested absmax must be U8 codes, not " + std::string(absmax->dtype->name));
      if (!nested || nested->elements() != ceilDiv(blocks, nestedBlocksize_)) mismatch(c, nested ? *nested : w, "needs " + std::to_string(ceilDiv(blocks, nestedBlocksize_)) + " nested absmax");
      if (!map || map->elements() != 256) mismatch(c, map ? *map : w, "needs a nested_quant_map of 256 values");
      nested_.init(c, *nested);
      map_.init(c, *map);
      absmaxCodes_ = dataOf(c, *absmax);
    }
    absmax_.init(c, *absmax);
    w_ = StoredBytes(c, w);
    setShape(shape);
  }

  void decode(uint64_t row, uint64_t n, float* out) const override {
    // A block's absmax first (the nested ones decoded as bitsandbytes' dequantize_blockwise does,
    // then the offset added), then each value: code map x absmax in float32, cast to the dtype.
    uint64_t cached = UINT64_MAX;
    float absmax = 0;
    for (uint64_t i = row * cols_, end = (row + n) * cols_; i < end; ++i) {
      if (const uint64_t b = i / blocksize_; b != cached) {
        cached = b;
        absmax = absmaxCodes_ ? map_.at(absmaxCodes_[b]) * nested_.at(b / nestedBlocksize_) + offset_ : absmax_.at(b);
      }
      const uint8_t byte = w_.mapped[i / 2];
      const uint32_t code = (i & 1) ? byte & 0xFu : byte >> 4;
      out[i - row * cols_] = roundedTo(roundTo_, (mode_ == 1 ? hdBnbFp4(code) : kBnbNf4Host[code]) * absmax);
    }
    count(n * cols_ / 2 + ceilDiv(n * cols_, blocksize_) * (absmaxCodes_ ? 1 : 4));
  }

  DecodeDesc describe() const override {
    DecodeDesc d;
    d.kind = DescKind::Bnb4;
    d.mode = mode_;
    d.rows = rows_, d.cols = cols_;
    d.w = Region{w_.mapped, ceilDiv(rows_ * cols_, 2), 0, ElemKind::None};
    d.wWhole = true;
    d.group = blocksize_, d.bn = nestedBlocksize_;
    d.s = absmax_.region();
    if (absmaxCodes_) d.s.kind = ElemKind::U8, d.g = nested_.region(), d.nestedMap = map_.region();
    d.offset = offset_;
    d.roundTo = roundTo_;
    return d;
  }

 private:
  StoredBytes w_;
  ScaleView absmax_, nested_, map_;
  const uint8_t* absmaxCodes_ = nullptr;  // nested: the absmax are U8 codes
  uint64_t blocksize_ = 64, nestedBlocksize_ = 256;
  float offset_ = 0;
  int mode_ = 0;
  ElemKind roundTo_ = ElemKind::F32;
};

// bitsandbytes LLM.int8() (Linear8bitLt): int8 rows, SCB each row's absmax; int8_vectorwise_dequant
// (_ops.py at 0.50.1) multiplies code x SCB, then by float32(1 / 127), in float32.
class Int8RowsDecoder : public RowDecoder {
 public:
  Int8RowsDecoder(const Checkpoint& c, const LogicalTensor& l) {
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    const TensorRecord* scb = memberOf(c, l, Component::Scale, ".SCB");
    if (w.shape.size() != 2) mismatch(c, w, "bitsandbytes int8 weight must be 2-D, not " + dims(w));
    if (!scb || scb->elements() != w.shape[0]) mismatch(c, scb ? *scb : w, "needs one SCB per row (" + std::to_string(w.shape[0]) + ")");
    // weight_format 0 is "row" (utils.LINEAR_8BIT_WEIGHTS_FORMAT_MAPPING); bitsandbytes refuses others.
    if (const TensorRecord* f = memberOf(c, l, Component::QuantState, ".weight_format"); f && f->bytes >= 1 && dataOf(c, *f)[0] != 0)
      mismatch(c, *f, "weight_format " + std::to_string(dataOf(c, *f)[0]) + " is not 0 (row), the only layout bitsandbytes loads");
    w_ = StoredBytes(c, w);
    scb_.init(c, *scb);
    setShape(w.shape);
  }
  void decode(uint64_t row, uint64_t n, float* out) const override {
    for (uint64_t r = row; r < row + n; ++r) {
      const float s = scb_.at(r);
      const int8_t* q = reinterpret_cast<const int8_t*>(w_.mapped + r * cols_);
      float* y = out + (r - row) * cols_;
      for (uint64_t j = 0; j < cols_; ++j) y[j] = float(q[j]) * s * kInv127;
    }
    count(n * (cols_ + 4));
  }
  DecodeDesc describe() const override {
    DecodeDesc d;
    d.kind = DescKind::Int8Rows;
    d.rows = rows_, d.cols = cols_;
    d.w = Region{w_.mapped, rows_ * cols_, rows_ * cols_, ElemKind::I8};
    d.s = scb_.region();
    return d;
  }

 private:
  StoredBytes w_;
  ScaleView scb_;
};

}  // namespace

std::unique_ptr<RowDecoder> makeGptqAwqDecoder(const Checkpoint& c, const LogicalTensor& l) { return std::make_unique<GptqAwqDecoder>(c, l); }
std::unique_ptr<RowDecoder> makeBnb4Decoder(const Checkpoint& c, const LogicalTensor& l) { return std::make_unique<Bnb4Decoder>(c, l); }
std::unique_ptr<RowDecoder> makeInt8RowsDecoder(const Checkpoint& c, const LogicalTensor& l) { return std::make_unique<Int8RowsDecoder>(c, l); }

}  // namespace ws::num
