#include "core/validate/router_rules.h"
#include "core/validate/validator.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <set>
#include <cmath>
#include <mutex>

#include "core/diff/diff.h"
#include "core/formats/open_checkpoint.h"
#include "core/load/backend_registry.h"
#include "core/load/loader.h"
#include "core/model/naming.h"
#include "core/model/weight_shape.h"
#include "core/model/quant_scheme.h"
#include "core/numerics/dequant.h"
#include "core/util/format_bytes.h"
#include "core/validate/rules.h"
#include "core/validate/adapter_rules.h"
#include "core/validate/activation_scale_rules.h"
#include "core/validate/attention_rules.h"
#include "core/validate/ignore_list_rules.h"
#include "core/validate/metadata_rules.h"
#include "core/validate/engines/engine_rules.h"
#include "core/validate/hub_rules.h"
#include "core/io/file_hash.h"
#include "core/validate/runtime_rules.h"
#include "core/validate/runtimes.h"
#include "core/validate/sink.h"
#include "core/validate/value_rules.h"

namespace ws::val {

namespace {

const char* integrityCode(const Error& e) {
  switch (e.code) {
    case ErrorCode::HeaderTooSmall: return "WS-I001";
    case ErrorCode::HeaderTooLarge: return "WS-I002";
    case ErrorCode::InvalidHeaderLength: return "WS-I003";
    case ErrorCode::InvalidHeaderUtf8: return "WS-I004";
    case ErrorCode::InvalidHeaderJson:
      return e.file.size() >= 11 && e.file.compare(e.file.size() - 11, 11, "config.json") == 0 ? "WS-I025" : "WS-I005";
    case ErrorCode::FormatMismatch: return "WS-I005";
    case ErrorCode::UnknownDtype: return "WS-I006";
    case ErrorCode::InvalidOffset: return "WS-I007";
    case ErrorCode::ValidationOverflow: return "WS-I008";
    case ErrorCode::MisalignedSlice: return "WS-I009";
    case ErrorCode::TensorInvalidInfo: return "WS-I010";
    case ErrorCode::MetadataIncompleteBuffer: return "WS-I011";
    case ErrorCode::DuplicateTensor: return "WS-I012";
    case ErrorCode::MissingShard: return "WS-I013";
    case ErrorCode::IndexTensorAbsent: return "WS-I014";
    case ErrorCode::IndexTensorUnlisted: return "WS-I015";
    case ErrorCode::IndexTensorMisplaced: return "WS-I016";
    case ErrorCode::IndexTotalSize: return "WS-I017";
    case ErrorCode::GgufBadMagic:
    case ErrorCode::GgufBadVersion: return "WS-I018";
    case ErrorCode::GgufTruncated: return "WS-I019";
    case ErrorCode::GgufBadValue: return "WS-I020";
    case ErrorCode::DuplicateKey: return "WS-I021";
    case ErrorCode::GgufBadTensorInfo: return "WS-I022";
    case ErrorCode::InconsistentSplit: return "WS-I023";
    case ErrorCode::InconsistentRanks: return "WS-I026";
    default: return "WS-I024";
  }
}

void integrityRules(const Checkpoint& c, Sink& sink) {
  for (const Error& e : c.issues) {
    Finding f = makeFinding(integrityCode(e), e.message, e.tensor, e.file);
    f.offset = e.offset;
    sink.add(std::move(f));
  }
}

bool isFp8(const DType* d) { return d->name.rfind("F8_E", 0) == 0 && d->name != "F8_E8M0"; }

// Name of a missing projection or expert, built from a sibling's name.
std::string siblingName(const std::string& sibling, int fromExpert, int toExpert) {
  const std::string a = ".experts." + std::to_string(fromExpert) + ".", b = ".experts." + std::to_string(toExpert) + ".";
  size_t at = sibling.find(a);
  if (at == std::string::npos) {
    const std::string ka = "_exps." + std::to_string(fromExpert) + ".", kb = "_exps." + std::to_string(toExpert) + ".";
    at = sibling.find(ka);
    return at == std::string::npos ? sibling : sibling.substr(0, at) + kb + sibling.substr(at + ka.size());
  }
  return sibling.substr(0, at) + b + sibling.substr(at + a.size());
}

std::string projectionSpelling(const std::string& sample, Projection from, Projection to) {
  // gate_proj/up_proj/down_proj, w1/w3/w2, ffn_gate/up/down: swap the projection token in a sibling name
  static const std::vector<std::array<const char*, 3>> families = {{"gate_proj", "up_proj", "down_proj"}, {"w1", "w3", "w2"},
                                                                   {"ffn_gate", "ffn_up", "ffn_down"}};
  auto idx = [](Projection p) { return p == Projection::Gate ? 0 : p == Projection::Up ? 1 : 2; };
  for (const auto& f : families) {
    const std::string tok = std::string(".") + f[size_t(idx(from))];
    size_t at = sample.rfind(tok);
    if (at != std::string::npos) return sample.substr(0, at) + "." + f[size_t(idx(to))] + sample.substr(at + tok.size());
  }
  return sample;
}

void completenessRules(const Checkpoint& c, Sink& sink) {
  const ModelDescription& m = c.model;
  const int64_t E = m.numExperts;
  // Tensors in shards that could not be read are there, just not cataloged; without an index to
  // name them, a broken file hides what it held, so absence cannot be judged at all.
  const std::set<std::string> unreadable(c.unreadable.begin(), c.unreadable.end());
  const bool judgeAbsence = !c.incomplete || !unreadable.empty();
  auto absent = [&](const std::string& name) { return judgeAbsence && !unreadable.count(name); };
  std::map<int, std::string> routerNames;
  for (const auto& t : c.tensors)
    if (t.role == Role::Router && t.component == Component::Weight && t.name.find("e_score_correction") == std::string::npos) routerNames[t.layer] = t.name;
  std::map<int, std::vector<const TensorRecord*>> byLayer;
  for (const auto& t : c.tensors) byLayer[t.layer].push_back(&t);
  const bool configured = m.source == "config.json" || m.source == "gguf";

  for (const auto& [layer, ts] : byLayer) {
    if (layer < 0) continue;
    const bool isMtp = std::find(m.mtpLayers.begin(), m.mtpLayers.end(), layer) != m.mtpLayers.end() ||
                       (m.numLayers > 0 && m.mtpUnderLayers && layer >= m.numLayers);
    const bool moe = std::find(m.moeLayers.begin(), m.moeLayers.end(), layer) != m.moeLayers.end();
    std::map<int, std::map<Projection, const TensorRecord*>> perExpert;
    std::map<Projection, const TensorRecord*> fused;
    bool router = false, anyDense = false;
    std::map<Projection, const TensorRecord*> dense;
    for (const TensorRecord* t : ts) {
      if (t->component != Component::Weight) continue;
      const bool expertTensor = t->role == Role::RoutedExpert || (t->role == Role::Mtp && (t->expert >= 0 || t->layout != Layout::None));
      if (expertTensor && t->expert >= 0) {
        if (E > 0 && t->expert >= E) sink.add("WS-C004", "expert " + std::to_string(t->expert) + " but the config has " + std::to_string(E) + " experts", t->name);
        else perExpert[t->expert][t->projection] = t;
      } else if (expertTensor && t->layout != Layout::None) {
        fused[t->projection] = t;
      }
      if (t->role == Role::Router) router = true;
      if (t->role == Role::DenseMlp) anyDense = true, dense[t->projection] = t;
    }
    const bool hasExperts = !perExpert.empty() || !fused.empty();
    if (isMtp) continue;  // MTP layers are checked as a whole below
    if (configured && hasExperts && !moe)
      sink.add("WS-C005", "layer " + std::to_string(layer) + " holds routed experts but the config makes it dense", (perExpert.empty() ? fused.begin()->second : perExpert.begin()->second.begin()->second)->name);
    if (configured && moe && !hasExperts && anyDense)
      sink.add("WS-C005", "layer " + std::to_string(layer) + " is MoE in the config but holds a dense MLP", dense.begin()->second->name);
    if (!perExpert.empty() && !fused.empty()) {
      // Name the odd one out: the layout with fewer tensors.
      size_t perExpertTensors = 0;
      for (const auto& [e, ps] : perExpert) perExpertTensors += ps.size();
      const TensorRecord* odd = perExpertTensors < fused.size() ? perExpert.begin()->second.begin()->second : fused.begin()->second;
      sink.add("WS-C007", "layer " + std::to_string(layer) + " holds " + std::to_string(perExpertTensors) + " per-expert and " + std::to_string(fused.size()) +
                              " fused expert tensors",
               odd->name);
      continue;  // which layout is meant is unclear: the rest would only repeat it
    }
    if (moe && hasExperts && !router) {
      // The router this layer should have, named after another layer's.
      std::string name;
      for (const auto& [l, n] : routerNames) {
        const std::string from = "." + std::to_string(l) + ".", to = "." + std::to_string(layer) + ".";
        if (size_t at = n.find(from); at != std::string::npos) name = n.substr(0, at) + to + n.substr(at + from.size());
        break;
      }
      if (absent(name)) sink.add("WS-C008", "MoE layer " + std::to_string(layer) + " has no router weight", name);
    }
    if (moe && !fused.empty() && perExpert.empty()) {
      const bool stacked = fused.begin()->second->layout == Layout::Stacked;
      std::vector<Projection> want = stacked && !fused.count(Projection::GateUp) ? std::vector<Projection>{Projection::Gate, Projection::Up, Projection::Down}
                                                                               : std::vector<Projection>{Projection::GateUp, Projection::Down};
      for (Projection p : want)
        if (!fused.count(p))
          sink.add("WS-C002", "layer " + std::to_string(layer) + " has no fused " + std::string(projectionName(p)) + " expert tensor", {});
    }
    if (moe && !perExpert.empty() && E > 0) {
      // A template expert: the one with the most projections.
      auto tmpl = std::max_element(perExpert.begin(), perExpert.end(), [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
      std::vector<std::string> missingNames;
      int missingExperts = 0;
      for (int e = 0; e < E; ++e) {
        auto it = perExpert.find(e);
        if (it == perExpert.end()) {
          const std::string first = siblingName(tmpl->second.begin()->second->name, tmpl->first, e);
          if (!absent(first)) continue;
          ++missingExperts;
          for (const auto& [p, t] : tmpl->second)
            if (missingNames.size() < 3) missingNames.push_back(siblingName(t->name, tmpl->first, e));
          continue;
        }
        for (const auto& [p, t] : tmpl->second)
          if (!it->second.count(p)) {
            const std::string name = siblingName(t->name, tmpl->first, e);
            if (absent(name))
              sink.add("WS-C002", "expert " + std::to_string(e) + " of layer " + std::to_string(layer) + " has no " + std::string(projectionName(p)) + " projection", name);
          }
      }
      if (missingExperts) {
        std::string list;
        for (const auto& n : missingNames) list += (list.empty() ? "" : ", ") + n;
        sink.add("WS-C001", "layer " + std::to_string(layer) + " is missing " + std::to_string(missingExperts) + " of " + std::to_string(E) + " experts: " + list +
                                (missingExperts * tmpl->second.size() > 3 ? " ..." : ""),
                 missingNames.empty() ? std::string{} : missingNames.front());
      }
    }
    // A MoE layer that kept its router and lost every routed expert: every seed loader fails on it
    // ("Missing expert weights for layer L", kt_sft_weights.py load_experts_from_checkpoint_files;
    // "missing N tensors", spark_runtime_weights.rs). The names another MoE layer's experts have
    // here, previewed.
    if (moe && router && !hasExperts && !anyDense && E > 0) {
      std::vector<std::string> names;
      for (const auto& [other, ots] : byLayer) {
        if (other < 0 || other == layer) continue;
        for (const TensorRecord* t : ots)
          if (t->role == Role::RoutedExpert && t->component == Component::Weight && (t->expert == 0 || t->layout != Layout::None)) names.push_back(t->name);
        if (names.empty()) continue;
        const std::string from = "." + std::to_string(other) + ".", to = "." + std::to_string(layer) + ".";
        for (auto& n : names)
          if (size_t at = n.find(from); at != std::string::npos) n = n.substr(0, at) + to + n.substr(at + from.size());
        std::sort(names.begin(), names.end());
        break;
      }
      if (!names.empty() && absent(names.front())) {
        std::string list;
        for (size_t i = 0; i < names.size() && i < 3; ++i) list += (list.empty() ? "" : ", ") + names[i];
        sink.add("WS-C001", "layer " + std::to_string(layer) + " is missing all " + std::to_string(E) + " experts (its router is there): " + list + (names.size() > 3 ? " ..." : ""), names.front());
      }
    }
    if (!moe && !hasExperts && anyDense) {
      for (Projection p : {Projection::Gate, Projection::Up, Projection::Down})
        if (!dense.count(p) && !dense.count(Projection::GateUp)) {
          const std::string name = projectionSpelling(dense.begin()->second->name, dense.begin()->first, p);
          if (absent(name)) sink.add("WS-C002", "dense layer " + std::to_string(layer) + " has no " + std::string(projectionName(p)) + " projection", name);
        }
    }
  }

  // Layers the config declares that hold nothing at all: the names a neighbouring layer's
  // tensors would have here, previewed.
  if (configured && judgeAbsence)
    for (int layer = 0; layer < m.numLayers; ++layer) {
      if (byLayer.count(layer)) continue;
      auto near = byLayer.lower_bound(layer);
      if (near == byLayer.end()) near = std::prev(byLayer.end());
      if (near == byLayer.end() || near->first < 0) continue;
      const std::string from = "." + std::to_string(near->first) + ".", to = "." + std::to_string(layer) + ".";
      std::vector<std::string> names;
      for (const TensorRecord* t : near->second)
        if (size_t at = t->name.find(from); at != std::string::npos && names.size() < 3) names.push_back(t->name.substr(0, at) + to + t->name.substr(at + from.size()));
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      sink.add("WS-C009", "the config declares " + std::to_string(m.numLayers) + " layers but layer " + std::to_string(layer) + " holds no tensor; missing " +
                              std::to_string(near->second.size()) + " tensors like: " + list + (near->second.size() > names.size() ? " ..." : ""),
               names.empty() ? std::string{} : names.front());
    }

  // empty(0) placeholders standing in for experts (KTransformers replaces expert weights by them
  // after loading; a model saved then has none of its experts).
  for (const auto& t : c.tensors)
    if (t.role == Role::RoutedExpert && t.component == Component::Weight && t.elements() == 0)
      sink.add("WS-C010", "an empty " + formatShape(t.shape) + " placeholder stands in for " + (t.expert >= 0 ? "expert " + std::to_string(t.expert) + "'s " : std::string("the experts' ")) +
                              std::string(projectionName(t.projection)) + " projection of layer " + std::to_string(t.layer),
               t.name);

  // MTP layers: declared by the config against present in the checkpoint.
  std::set<int> present;
  for (const auto& t : c.tensors)
    if (t.role == Role::Mtp) present.insert(t.layer);
  for (int l : m.mtpLayers)
    if (!present.count(l) && judgeAbsence) sink.add("WS-C006", "the config declares MTP layer " + std::to_string(l) + " but the checkpoint does not hold it (transformers drops it on save)", {});
  for (int l : present)
    if (l >= 0 && std::find(m.mtpLayers.begin(), m.mtpLayers.end(), l) == m.mtpLayers.end()) {
      Finding f = makeFinding("WS-C006", "layer " + std::to_string(l) + " is an MTP layer the config does not declare", {});
      f.severity = Severity::Warning;
      sink.add(std::move(f));
    }

  // Quantized weights without their scales.
  const bool fp8Config = m.quant.method == "fp8";
  bool anyScaledFp8 = false;
  for (const auto& l : c.logical) anyScaledFp8 |= schemeInfo(l.scheme).decoder == DecoderKind::Fp8Scaled;
  for (const auto& l : c.logical) {
    if (l.weight < 0 || l.scaleBytes > 0) continue;
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    if (w.ggmlOrder) continue;  // GGUF blocks carry their scales inline
    const bool packed = w.name.size() > 7 && (w.name.compare(w.name.size() - 7, 7, "_blocks") == 0 || w.name.find(".weight_packed") != std::string::npos);
    const bool fp8 = isFp8(w.dtype) && (fp8Config || anyScaledFp8);
    const bool modeloptCodes = (w.dtype->name == "U8" || w.dtype->name == "I8") && (m.quant.method == "modelopt" || m.quant.algo == "NVFP4");
    if (packed || fp8 || modeloptCodes || w.numaNode >= 0)
      sink.add("WS-C003", std::string(w.dtype->name) + " weight of scheme " + l.schemeName + " has no scale tensor", w.name);
  }
}

// The unpacked shape of a logical tensor, without reading its data (weight_shape aside).
std::vector<uint64_t> logicalShape(const Checkpoint& c, const LogicalTensor& l, bool& ok, std::string& why) {
  ok = true;
  auto shape = num::decodedShape(c, uint32_t(&l - c.logical.data()));
  if (!shape) {
    ok = false;
    why = shape.error().message;
    return {};
  }
  return shape.value();
}

void shapeRules(const Checkpoint& c, Sink& sink) {
  const ModelDescription& m = c.model;
  const uint64_t H = m.hiddenSize > 0 ? uint64_t(m.hiddenSize) : 0, I = m.expertIntermediateSize > 0 ? uint64_t(m.expertIntermediateSize) : 0;
  const uint64_t E = m.numExperts > 0 ? uint64_t(m.numExperts) : 0;
  for (const auto& l : c.logical) {
    if (l.weight < 0 || c.isCut(l)) continue;  // a cut tensor is an integrity finding already
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    if (w.role == Role::RoutedExpert && w.elements() == 0) continue;  // a placeholder: WS-C010
    // weight_shape against the packed tensor
    bool shapeTensorBad = false;
    for (uint32_t mi : l.members) {
      const TensorRecord& s = c.tensors[mi];
      if (s.component != Component::Shape) continue;
      // codes per stored element: 8 int4 or 4 int8 in an int32 word, 2 int4 in a RAWINT4 byte
      const uint32_t bits = schemeInfo(l.scheme).bits;
      const uint64_t perElem = bits ? uint64_t(w.dtype->blockBytes) * 8 / bits : 2;
      auto dims = readWeightShape(c, s);
      if (!dims) {
        sink.add("WS-S006", "weight_shape is not 1 to 8 I32/I64 entries (" + std::string(s.dtype->name) + " " + formatShape(s.shape) + ")", s.name);
        shapeTensorBad = true;
        continue;
      }
      const bool bad = !weightShapeFits(*dims, w.shape, perElem);
      if (bad) sink.add("WS-S006", "weight_shape does not fit the packed " + std::string(w.dtype->name) + " " + formatShape(w.shape), s.name);
      shapeTensorBad |= bad;
    }
    if (shapeTensorBad) continue;  // the decoder would only say the same
    const bool routed = w.role == Role::RoutedExpert, shared = w.role == Role::SharedExpert, router = w.role == Role::Router;
    if (!routed && !shared && !router) continue;
    bool ok;
    std::string why;
    auto shape = logicalShape(c, l, ok, why);
    if (!ok) {
      // The decoder names what does not fit: report it on the companion it blames, else the weight.
      std::string tensor = w.name;
      for (uint32_t mi : l.members)
        if (isScaleComponent(c.tensors[mi].component) && why.find("scale") != std::string::npos) tensor = c.tensors[mi].name;
      sink.add("WS-S004", why, tensor);
      continue;
    }
    // Squeezed FP8 block scales: accepted, reported.
    if (l.scheme == Scheme::Fp8Block)
      for (uint32_t mi : l.members) {
        const TensorRecord& s = c.tensors[mi];
        if (s.component == Component::Scale && s.shape.size() == 1 && shape.size() >= 2)
          sink.add("WS-S005", "block scale grid stored as " + formatShape(s.shape) + " for a " + formatShape(shape) + " weight", s.name);
      }
    // The router's matrix is its ".weight"; the vectors beside it are not [E, H]: DeepSeek's
    // e_score_correction_bias [E], Gemma 4's router.scale [H] and router.per_expert_scale [E].
    if (router && E && H && w.name.ends_with(".weight") && !(shape.size() == 2 && shape[0] == E && shape[1] == H))
      sink.add("WS-S002", "router is " + formatShape(shape) + ", expected [" + std::to_string(E) + ", " + std::to_string(H) + "]", w.name);
    if (!H || !I) continue;
    if (routed && w.expert >= 0 && w.numaNode < 0) {
      std::vector<uint64_t> want = w.projection == Projection::Down ? std::vector<uint64_t>{H, I} : std::vector<uint64_t>{I, H};
      if (w.projection != Projection::None && shape != want)
        sink.add("WS-S001", std::string(projectionName(w.projection)) + " projection is " + formatShape(shape) + ", expected " + formatShape(want), w.name);
    } else if (routed && w.layout != Layout::None && shape.size() == 3) {
      const uint64_t out = w.projection == Projection::GateUp ? 2 * I : w.projection == Projection::Down ? H : I;
      const uint64_t in = w.projection == Projection::Down ? I : H;
      // A GGUF has one orientation (llama.cpp's loader requires ne = {in, out, E}, PyTorch order
      // [E, out, in]); safetensors layouts come both ways.
      const bool exact = shape[1] == out && shape[2] == in, transposed = shape[1] == in && shape[2] == out;
      const bool fits = E && shape[0] == E && (exact || (transposed && !w.ggmlOrder));
      if (!fits)
        sink.add("WS-S003", std::string(projectionName(w.projection)) + " is " + formatShape(shape) + ", expected [" + std::to_string(E) + ", " + std::to_string(out) +
                                ", " + std::to_string(in) + "]" + (w.ggmlOrder ? " (ggml ne {" + std::to_string(in) + ", " + std::to_string(out) + ", " + std::to_string(E) + "}, from the file's own expert count, expert length and embedding length)" : " or its transpose"),
                 w.name);
    } else if (shared && shape.size() == 2 && w.projection != Projection::None) {
      const bool fits = w.projection == Projection::Down ? shape[0] == H : shape[1] == H;
      if (!fits) sink.add("WS-S001", "shared expert " + std::string(projectionName(w.projection)) + " is " + formatShape(shape) + ", hidden size is " + std::to_string(H), w.name);
    }
  }
}

// WS-S007: what the tensors are against what the config declares (quant_scheme.h), one finding per
// undeclared scheme. A checkpoint that declares nothing was inferred from its tensors: no finding.
void declarationRule(const Checkpoint& c, Sink& sink) {
  const std::vector<Scheme> declared = declaredSchemes(c.model.quant);
  if (declared.empty()) return;
  std::string names;
  for (Scheme d : declared) names += (names.empty() ? "" : ", ") + schemeDisplayName(d, nullptr);
  std::map<std::string, FindingGroup> undeclared;
  for (const auto& l : c.logical) {
    if (l.weight < 0 || c.isCut(l) || !schemeInfo(l.scheme).quantized) continue;
    if (l.scheme == Scheme::GgufBlock || l.scheme == Scheme::Fp8Unscaled || l.scheme == Scheme::KtInt4 || l.scheme == Scheme::KtInt8) continue;
    if (std::find(declared.begin(), declared.end(), l.scheme) == declared.end()) undeclared[l.schemeName].add(c.tensors[uint32_t(l.weight)].name);
  }
  for (const auto& [scheme, group] : undeclared)
    group.report(sink, "WS-S007", scheme + " weights where " + c.model.quant.source + " declares " + c.model.quant.method + " (" + names + ")");
}

void loadRules(const Checkpoint& c, Sink& sink, const ValidateOptions& opt) {
  auto backend = opt.makeBackend(opt.device);
  if (!backend) {
    sink.add("WS-L001", backend.error().message, {});
    return;
  }
  auto placement = opt.placement.build(opt.epSize, c.model.numExperts);
  if (!placement) {
    sink.add("WS-L001", placement.error().message, {});
    return;
  }
  load::LoadOptions lo;
  lo.plan.placement = placement.value();
  lo.plan.rules = opt.residency;
  lo.epRank = opt.epRank;
  auto r = load::loadCheckpoint(c, *backend.value(), lo);
  if (!r) {
    Finding f = makeFinding("WS-L001", r.error().message, r.error().tensor, r.error().file);
    f.offset = r.error().offset;
    sink.add(std::move(f));
    return;
  }
  const auto& rep = r.value().report;
  if (const std::string why = load::residencyMismatch(rep); !why.empty()) sink.add("WS-L002", why, {});
  double seconds = 0;
  for (const auto& p : rep.phases) seconds += p.seconds;
  sink.add("WS-L003", "EP rank " + std::to_string(rep.epRank) + " of " + std::to_string(rep.epSize) + " on " + rep.device + ": " + formatBytes(rep.resident) + " in " +
                          std::to_string(rep.residency.arenas) + " allocations, " + std::to_string(r.value().store->deferred().size()) + " deferred, " +
                          std::to_string(seconds) + " s",
           {});
  r.value().store->release();
}

// The checkpoint against a reference: A is the reference, B the checkpoint being validated.
void diffRules(const Checkpoint& c, Sink& sink, const ValidateOptions& opt) {
  auto ref = openCheckpoint(opt.against);
  if (!ref) fail(ref.error().code, "reference checkpoint: " + ref.error().message, ref.error().file, ref.error().offset, ref.error().tensor);
  diff::DiffOptions dopt;
  dopt.threads = opt.threads;
  if (opt.progress) dopt.progress = [&](uint64_t done, uint64_t total) { return opt.progress("comparing with the reference", done, total); };
  auto r = diff::diffCheckpoints(*ref.value(), c, dopt);
  if (!r) fail(r.error().code, r.error().message);
  double worst = 0;
  std::string worstKey;
  for (const auto& p : r.value().pairs) {
    if (!p.error.empty()) {
      sink.add("WS-D003", "could not compare: " + p.error, p.nameB);
      continue;
    }
    if (!p.metrics.shapesAgree) {
      sink.add("WS-D003", p.pair.key + " is " + formatShape(p.shapeB) + " here, " + formatShape(p.shapeA) + " in the reference", p.nameB);
      continue;
    }
    if (!(p.metrics.relFrobenius <= worst)) worst = p.metrics.relFrobenius, worstKey = p.pair.key;
    if (opt.maxRelError >= 0 && !(p.metrics.relFrobenius <= opt.maxRelError))
      sink.add("WS-D001", p.pair.key + ": relative error " + std::to_string(p.metrics.relFrobenius) + " (cosine " + std::to_string(p.metrics.cosine) + ", " +
                              p.schemeB + " against " + p.schemeA + ") exceeds " + std::to_string(opt.maxRelError),
               p.nameB);
  }
  for (const auto& k : r.value().onlyA) sink.add("WS-D002", "the reference holds " + k, {});
  for (const auto& k : r.value().onlyB) sink.add("WS-D004", k + " has no counterpart in the reference", {});
  sink.add("WS-D005", std::to_string(r.value().pairs.size()) + " tensors matched with " + opt.against + "; largest relative error " + std::to_string(worst) +
                          (worstKey.empty() ? "" : " (" + worstKey + ")"),
           {});
}

bool familyEnabled(const ValidateOptions& opt, const char* family) {
  for (const auto& r : rules())
    if (std::string(r.family) == family && ruleEnabled(opt, r.code)) return true;
  return false;
}

}  // namespace

size_t ValidationReport::count(Severity s) const {
  return size_t(std::count_if(findings.begin(), findings.end(), [s](const Finding& f) { return f.severity == s; }));
}

std::vector<Finding> openingFindings(const Checkpoint& c) {
  const ValidateOptions all;
  std::vector<Finding> out;
  Sink sink{all, out};
  integrityRules(c, sink);
  return out;
}

bool ruleEnabled(const ValidateOptions& opt, const std::string& code) {
  const RuleInfo& r = rule(code);
  auto hit = [&](const std::set<std::string>& s) { return s.count(r.code) || s.count(r.family) || s.count(r.name); };
  if (!opt.only.empty() && !hit(opt.only)) return false;
  return !hit(opt.skip);
}

ValidationReport validateCheckpoint(std::shared_ptr<const Checkpoint> c, const ValidateOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  ValidationReport rep;
  rep.path = c->root;
  rep.checkpoint = c;
  for (const auto& r : rules())
    if (ruleEnabled(opt, r.code) && (opt.fullLoad || std::string(r.family) != "load") && (!opt.against.empty() || std::string(r.family) != "diff") &&
        (!opt.base.empty() || std::string(r.code) != "WS-A003") && (engines::isServingEngine(opt.runtime) || std::string(r.family) != "engine") && (opt.hubRecord || std::string(r.family) != "hub"))
      rep.rulesRun.push_back(r.code);
  std::mutex mu;
  Sink sink{opt, rep.findings, &mu};
  integrityRules(*c, sink);
  // A pre-partitioned checkpoint's catalog is one rank's shard of each tensor: the rules that
  // compare shapes and counts with the whole model's config do not apply (the checkpoint's note
  // says so); the ranks are checked against each other instead (WS-I026).
  if (!c->prepartitioned) {
    completenessRules(*c, sink);
    shapeRules(*c, sink);
    attentionRules(*c, sink);
    declarationRule(*c, sink);
    activationScaleDeclarationRules(*c, sink);
    ignoreListRules(*c, sink);
    metadataRules(*c, sink);
  }
  runtimeRules(*c, sink);
  if (engines::isServingEngine(opt.runtime)) engines::engineRules(*c, opt.runtime, opt.layout, sink);
  std::shared_ptr<const Checkpoint> base;  // --base: the model a LoRA adapter is meant for
  if (!opt.base.empty()) {
    auto opened = openCheckpoint(opt.base);
    if (!opened) fail(opened.error().code, "base model: " + opened.error().message, opened.error().file, opened.error().offset, opened.error().tensor);
    base = opened.value();
  }
  adapterRules(*c, sink, base.get());
  if (opt.hubRecord && familyEnabled(opt, "hub")) hubRules(*c, *opt.hubRecord, sink, opt);
  rep.bytesReadByFamily["integrity"] = 0;
  rep.bytesReadByFamily["shapes"] = 0;  // weight_shape tensors aside, nothing but headers
  if (familyEnabled(opt, "values")) {
    valueRules(*c, sink, opt, rep);
    activationScaleValueRules(*c, sink);
    rep.bytesReadByFamily["values (router)"] = routerValueRules(*c, sink);
  }
  if (!opt.against.empty() && familyEnabled(opt, "diff")) {
    diffRules(*c, sink, opt);
    rep.bytesReadByFamily["diff"] = c->totalBytes();
  }
  if (opt.fullLoad) {
    loadRules(*c, sink, opt);
    rep.bytesReadByFamily["load"] = c->totalBytes();
  }
  std::stable_sort(rep.findings.begin(), rep.findings.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    if (a.code != b.code) return a.code < b.code;
    return naturalLess(a.tensor, b.tensor);
  });
  if (engines::isServingEngine(opt.runtime)) rep.verdict = engines::verdictLine(opt.runtime, opt.layout, rep.findings);
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

Result<ValidationReport> validatePath(const std::string& path, const ValidateOptions& opt) {
  for (const auto* set : {&opt.only, &opt.skip})
    for (const auto& s : *set) {
      bool known = false;
      for (const auto& r : rules()) known |= s == r.code || s == r.family || s == r.name;
      if (!known) return Error{ErrorCode::Usage, "unknown rule or family '" + s + "' (see docs/rules.md)", {}, std::nullopt, {}};
    }
  if (!opt.runtime.empty() && !findRuntime(opt.runtime)) {
    std::string known;
    for (const auto& r : runtimes()) known += (known.empty() ? "" : ", ") + std::string(r.name);
    return Error{ErrorCode::Usage, "unknown runtime '" + opt.runtime + "' (known: " + known + ")", {}, std::nullopt, {}};
  }
  ValidateOptions o = opt;
  if (auto bad = engines::resolveGpu(o.layout)) return Error{ErrorCode::Usage, "--gpu: " + *bad, {}, std::nullopt, {}};
  if (!o.hub.empty()) {
    if (o.hub == "auto") o.hub = hubLocationOf(path);
    if (o.hub.empty())
      return Error{ErrorCode::Usage, "--hub needs hf://ORG/REPO[@REVISION]: " + path + " is not in a Hugging Face cache snapshot (models--ORG--REPO/snapshots/COMMIT)", path, std::nullopt, {}};
    if (!fileHashAvailable()) return Error{ErrorCode::Usage, "--hub: this build has no OpenSSL to hash files with", {}, std::nullopt, {}};
    auto record = capture([&] { return hubRecord(o.hub); });
    if (!record) return record.error();
    o.hubRecord = std::make_shared<const HubRecord>(std::move(record.value()));
  }
  auto opened = openCheckpointTolerant(path);
  if (!opened) return opened.error();
  if (engines::isServingEngine(o.runtime))
    if (auto bad = engines::layoutProblem(o.runtime, o.layout, opened.value()->model)) return Error{ErrorCode::Usage, *bad, {}, std::nullopt, {}};
  return capture([&] { return validateCheckpoint(opened.value(), o); });
}

}  // namespace ws::val
