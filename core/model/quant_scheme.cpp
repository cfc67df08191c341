#include "core/model/quant_scheme.h"

#include <algorithm>

#include "core/model/weight_shape.h"
#include "core/util/name_table.h"

namespace ws {

namespace {

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool isFp8(const DType* d) {
  return d->name == "F8_E4M3" || d->name == "F8_E5M2" || d->name == "F8_E4M3FNUZ" || d->name == "F8_E5M2FNUZ";
}

struct Members {
  const TensorRecord* weight = nullptr;
  const TensorRecord* scale = nullptr;
  const TensorRecord* globalScale = nullptr;
  const TensorRecord* zeroPoint = nullptr;
  const TensorRecord* shape = nullptr;
  const TensorRecord* gIdx = nullptr;
  const TensorRecord* quantState = nullptr;  // bitsandbytes' packed quant state (its name says nf4 or fp4)
  uint64_t weightBytes = 0;  // all weight shards (KTransformers NUMA parts)
  int weightParts = 0;
};

// Elements of one projection of one expert, from the model description (for KT NUMA blobs).
uint64_t expertProjectionElements(const ModelDescription& m, Projection p) {
  if (m.hiddenSize <= 0 || m.expertIntermediateSize <= 0) return 0;
  uint64_t e = uint64_t(m.hiddenSize) * uint64_t(m.expertIntermediateSize);
  return p == Projection::GateUp ? 2 * e : e;
}

// GPTQ packs qweight [in x bits / 32, out] along the input, AWQ (GEMM) [in, out x bits / 32]
// along the output; both keep scales [groups, out] (AWQ GEMV: 4-bit only, qweight [out, in / 8],
// scales padded). The config names the writer, else the shapes
// do (equal last dimensions: GPTQ). `bits` 0: the width cannot be told (the decoder says why).
Scheme gptqOrAwq(const QuantConfig& q, const Members& mb, uint64_t& params, uint32_t& bits) {
  const TensorRecord* w = mb.weight;
  const bool shaped = w->shape.size() == 2 && mb.scale && mb.scale->shape.size() == 2 && mb.scale->shape[1] > 0;
  const uint64_t out = shaped ? mb.scale->shape[1] : 0;
  const bool awq = q.method == "awq" || (q.method != "gptq" && shaped && w->shape[1] != out);
  bits = q.bits > 0 && q.bits <= 8 ? uint32_t(q.bits) : 0;
  if (awq && q.awqVersion == "gemv" && w->shape.size() == 2) {  // [out, in / 8], the scales padded
    bits = 4;
    params = w->shape[0] * w->shape[1] * 8;
    return Scheme::Awq;
  }
  if (!shaped) return awq ? Scheme::Awq : Scheme::Gptq;
  if (awq) {
    if (!bits && (w->shape[1] * 32) % out == 0) bits = uint32_t(w->shape[1] * 32 / out);
    params = w->shape[0] * out;
  } else {
    const uint64_t in = mb.gIdx ? mb.gIdx->elements() : (bits ? w->shape[0] * 32 / bits : 0);
    if (!bits && in && (w->shape[0] * 32) % in == 0) bits = uint32_t(w->shape[0] * 32 / in);
    params = in * out;
  }
  return awq ? Scheme::Awq : Scheme::Gptq;
}

// bitsandbytes' 4-bit weight: the quant state's name, else the config, says NF4 or FP4.
Scheme bnb4(const QuantConfig& q, const Members& mb) {
  if (mb.quantState) return endsWith(mb.quantState->name, "__fp4") ? Scheme::BnbFp4 : Scheme::BnbNf4;
  return q.bnbQuantType == "fp4" ? Scheme::BnbFp4 : Scheme::BnbNf4;
}

// The scheme of a logical tensor with a weight, and the logical parameters it holds (packed codes
// counted as the weights they hold). `bits` is set for MLX affine of an unread width.
Scheme schemeFor(const Checkpoint& c, const Members& mb, uint64_t& params, uint32_t& bits) {
  const TensorRecord* w = mb.weight;
  const ModelDescription& model = c.model;
  params = w->elements();
  const std::string_view dn = w->dtype->name;
  if (w->ggmlOrder) return w->dtype->isBlockQuant() ? Scheme::GgufBlock : Scheme::Plain;
  if (w->numaNode >= 0) {  // KTransformers NUMA shards: INT8 holds one byte a weight, INT4 half
    uint64_t want = expertProjectionElements(model, w->projection);
    if (want && mb.weightBytes * 2 == want) { params = want; return Scheme::KtInt4; }
    params = want ? want : mb.weightBytes;
    return Scheme::KtInt8;
  }
  if (endsWith(w->name, ".qweight") && (dn == "I32" || dn == "U32")) return gptqOrAwq(model.quant, mb, params, bits);
  // bitsandbytes: U8 code pairs with an absmax per block; int8 rows with their SCB.
  if (dn == "U8" && mb.scale && endsWith(mb.scale->name, ".weight.absmax")) {
    params = w->elements() * 2;
    return bnb4(model.quant, mb);
  }
  if (dn == "I8" && mb.scale && endsWith(mb.scale->name, ".SCB")) return Scheme::BnbInt8;
  if (endsWith(w->name, "_blocks")) {  // gpt-oss MXFP4: [..., 16] bytes = 32 codes
    params = w->elements() * 2;
    return Scheme::Mxfp4;
  }
  if (endsWith(w->name, ".weight_packed")) {
    if (dn == "U8" || dn == "I8") {
      params = w->elements() * 2;
      // Bytes of two 4-bit codes: what the scales are says whose. compressed-tensors writes FP4
      // (nvfp4-pack-quantized: E4M3 per 16 and a global scale; mxfp4-pack-quantized: U8 E8M0 per
      // 32), KTransformers RAWINT4 integers with BF16/F32 group scales. The declared format wins.
      const std::string& format = model.quant.format;
      const std::string_view sn = mb.scale ? mb.scale->dtype->name : std::string_view{};
      if (format == "nvfp4-pack-quantized" || (format.empty() && sn == "F8_E4M3")) return Scheme::Nvfp4Ct;
      if (format == "mxfp4-pack-quantized" || (format.empty() && (sn == "U8" || sn == "F8_E8M0"))) return Scheme::Mxfp4Ct;
      return Scheme::RawInt4;
    }
    int64_t packedBits = model.quant.bits > 0 ? model.quant.bits : 4;
    if (mb.shape) {
      // weight_shape holds the unpacked shape; the packed last dimension says how many codes
      // share an int32 (8 for int4, 4 for int8).
      auto s = readWeightShape(c, *mb.shape).value_or(std::vector<int64_t>{});
      if (!s.empty() && std::all_of(s.begin(), s.end(), [](int64_t v) { return v > 0; })) {
        params = 1;
        for (auto v : s) params *= uint64_t(v);
        if (!w->shape.empty() && w->shape.back() > 0) {
          uint64_t perWord = (uint64_t(s.back()) + w->shape.back() - 1) / w->shape.back();
          if (perWord == 8) packedBits = 4;
          else if (perWord == 4) packedBits = 8;
        }
      }
    } else {
      params = w->elements() * uint64_t(32 / packedBits);
    }
    return packedBits == 8 ? Scheme::Int8Ct : Scheme::Int4Ct;
  }
  if (isFp8(w->dtype)) {
    if (!mb.scale) return Scheme::Fp8Unscaled;
    if (endsWith(mb.scale->name, "_scale_inv")) return Scheme::Fp8Block;
    // compressed-tensors float-quantized declares its strategy: a [2, 1] grid of a weight 128
    // wide is blocks, not channels.
    const QuantGroup* declared = model.quant.groupFor("float", 8);
    const std::string strategy = declared ? declared->strategy : std::string{};
    if (strategy == "block") return Scheme::Fp8Block;
    if (strategy == "channel") return Scheme::Fp8Channel;
    if (strategy == "tensor") return Scheme::Fp8Tensor;
    uint64_t n = mb.scale->elements();
    if (n == 1) return Scheme::Fp8Tensor;
    if (mb.scale->shape.size() == 2 && mb.scale->shape[1] > 1) return Scheme::Fp8Block;
    return Scheme::Fp8Channel;
  }
  // U8 bytes of two E2M1 codes; I8 is the same bytes (DeepSeek-V4's routed experts and MTP layers:
  // SGLang 0.5.23 configs/deepseek_v4.py try_detect_fp4_experts takes U8, I8 or F4 for packed FP4;
  // the seed runtime reads I8 as a raw byte container).
  const bool codeBytes = dn == "U8" || dn == "I8";
  if ((codeBytes || dn == "F4") && mb.scale) {
    const std::string_view sn = mb.scale->dtype->name;
    if (sn == "F8_E4M3") { if (codeBytes) params = w->elements() * 2; return Scheme::Nvfp4; }
    if (sn == "U8" || sn == "F8_E8M0") { if (codeBytes) params = w->elements() * 2; return Scheme::Mxfp4; }
  }
  if ((dn == "U32") && mb.scale && mb.zeroPoint) {  // MLX affine: codes packed in u32 words
    // words x 32 = in x bits and in = scale columns x group: two unknowns, one equation. The
    // config (mlx-lm writes {"group_size", "bits"}) settles it; without one, MLX's default group 64.
    if (w->shape.size() >= 2 && mb.scale->shape.size() >= 2) {
      const uint64_t words = w->shape.back(), groups = mb.scale->shape.back();
      uint64_t b = 0;
      if (model.quant.bits > 0 && model.quant.groupSize <= 0) {
        b = uint64_t(model.quant.bits);
      } else {
        const uint64_t in = groups * uint64_t(model.quant.groupSize > 0 ? model.quant.groupSize : 64);
        b = in && (words * 32) % in == 0 ? (words * 32) / in : 0;
      }
      if (b) {
        params = w->elements() * (32 / b);
        if (b == 4) return Scheme::MlxAffine4;
        if (b == 8) return Scheme::MlxAffine8;
        bits = uint32_t(b);
      }
    }
    return Scheme::MlxAffineOther;
  }
  return Scheme::Plain;
}

}  // namespace

std::vector<Scheme> declaredSchemes(const QuantConfig& q) {
  std::vector<Scheme> out;
  if (q.method == "compressed-tensors") {
    for (const auto& g : q.groups) {
      if (g.type == "int" && g.bits == 4) out.insert(out.end(), {Scheme::Int4Ct, Scheme::RawInt4});
      if (g.type == "int" && g.bits == 8) out.push_back(Scheme::Int8Ct);
      if (g.type == "float" && g.bits == 8) {
        if (g.strategy == "block") out.push_back(Scheme::Fp8Block);
        else if (g.strategy == "channel") out.push_back(Scheme::Fp8Channel);
        else if (g.strategy == "tensor") out.push_back(Scheme::Fp8Tensor);
      }
      if (g.type == "float" && g.bits == 4) out.push_back(g.groupSize == 32 ? Scheme::Mxfp4Ct : Scheme::Nvfp4Ct);
    }
  } else if (q.method == "fp8") {
    if (q.blockSize.empty()) out.insert(out.end(), {Scheme::Fp8Channel, Scheme::Fp8Tensor});
    else out.push_back(Scheme::Fp8Block);
  } else if (q.method == "modelopt") {
    if (q.algo == "NVFP4") out.insert(out.end(), {Scheme::Nvfp4, Scheme::Fp8Tensor});  // ModelOpt keeps some layers FP8
    if (q.algo == "FP8") out.push_back(Scheme::Fp8Tensor);
  } else if (q.method == "mxfp4") {
    out.push_back(Scheme::Mxfp4);
  } else if (q.method == "gguf") {
    out.push_back(Scheme::GgufBlock);  // each tensor's ggml type is its declaration
  } else if (q.method == "gptq") {
    out.push_back(Scheme::Gptq);
  } else if (q.method == "awq") {
    out.push_back(Scheme::Awq);
  } else if (q.method == "bitsandbytes") {
    if (q.bits == 8) out.push_back(Scheme::BnbInt8);
    else if (q.bits == 4) out.push_back(q.bnbQuantType == "fp4" ? Scheme::BnbFp4 : Scheme::BnbNf4);
  } else if (q.method == "mlx") {
    out.insert(out.end(), {Scheme::MlxAffine4, Scheme::MlxAffine8, Scheme::MlxAffineOther});
  }
  return out;
}

bool isScaleComponent(Component c) {
  return c == Component::Scale || c == Component::GlobalScale || c == Component::InputScale || c == Component::KvScale || c == Component::ZeroPoint ||
         c == Component::QuantState;
}

void assignQuantSchemes(Checkpoint& c, const std::vector<std::string>& logicalNames) {
  c.logical.clear();
  NameTable index;  // views into logicalNames, which outlive it
  index.reserve(c.tensors.size() / 2);
  uint32_t previous = UINT32_MAX;
  for (uint32_t i = 0; i < c.tensors.size(); ++i) {
    auto& t = c.tensors[i];
    const std::string& key = logicalNames[i];
    // Members of one logical tensor mostly sort next to each other: check the last one first.
    uint32_t li;
    if (previous != UINT32_MAX && c.logical[previous].name == key) {
      li = previous;
    } else {
      if (const uint32_t* known = index.find(key)) {
        li = *known;
      } else {
        li = uint32_t(c.logical.size());
        index.insert(key, li);
        LogicalTensor l;
        l.name = key;
        c.logical.push_back(std::move(l));
      }
    }
    previous = li;
    LogicalTensor& l = c.logical[li];
    t.logical = li;
    l.members.push_back(i);
    l.bytes += t.bytes;
    if (isScaleComponent(t.component)) l.scaleBytes += t.bytes;
    if (t.component == Component::Weight && l.weight < 0) l.weight = int32_t(i);
  }
  for (auto& l : c.logical) {
    Members mb;
    uint64_t biasParams = 0, loraParams = 0;
    for (uint32_t i : l.members) {
      const auto& t = c.tensors[i];
      switch (t.component) {
        case Component::Weight: if (!mb.weight) mb.weight = &t; mb.weightBytes += t.bytes; ++mb.weightParts; break;
        case Component::Scale: if (!mb.scale) mb.scale = &t; break;
        case Component::GlobalScale: mb.globalScale = &t; break;
        case Component::ZeroPoint: mb.zeroPoint = &t; break;
        case Component::Shape: mb.shape = &t; break;
        case Component::GIdx: mb.gIdx = &t; break;
        case Component::QuantState: if (t.name.find(".quant_state.") != std::string::npos) mb.quantState = &t; break;
        case Component::Bias: biasParams += t.elements(); break;
        case Component::LoraA: case Component::LoraB: loraParams += t.elements(); break;  // an adapter's trainable parameters
        default: break;
      }
    }
    uint64_t params = 0;
    uint32_t bits = 0;
    const TensorRecord& named = mb.weight ? *mb.weight : c.tensors[l.members.front()];
    if (mb.weight) {
      l.scheme = schemeFor(c, mb, params, bits);
    } else {
      // A lone bias or buffer (e.g. e_score_correction_bias): its own storage.
      l.scheme = named.ggmlOrder && named.dtype->isBlockQuant() ? Scheme::GgufBlock : Scheme::Plain;
    }
    l.schemeName = schemeDisplayName(l.scheme, named.dtype, bits);
    // DeepSeek's e_score_correction_bias is a registered buffer, not a parameter: transformers
    // leaves it out of total_parameters, and so do we - in a GGUF too, where llama.cpp's converter
    // stores the same buffer as exp_probs_b.bias, so both forms of a model count alike.
    const bool buffer = l.name.ends_with("e_score_correction") || l.name.ends_with(".exp_probs_b");
    l.parameters = buffer ? 0 : params + biasParams + loraParams;
  }
}

}  // namespace ws
