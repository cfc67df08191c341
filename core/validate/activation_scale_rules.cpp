#include "core/validate/activation_scale_rules.h"

#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "core/model/quant_scheme.h"
#include "core/numerics/element_reader.h"
#include "core/numerics/remote_reads.h"
#include "core/numerics/scale_stats.h"
#include "core/validate/value_rules.h"

namespace ws::val {

namespace {

// Activation and KV scales are one value per tensor, channel, head or expert: anything larger is
// not such a scale, and is left to the shape rules rather than read.
constexpr uint64_t kMostValues = uint64_t(1) << 20;
// WS-V011: an outlier this many octaves from its peers is an error, not a warning (as for weight scales).
constexpr double kFarOctaves = 10.0;

bool isActivationScale(const TensorRecord& t) { return t.component == Component::InputScale || t.component == Component::KvScale; }

// The kind a message names: the stored suffix (input_scale, input_global_scale, k_scale, ...).
std::string kindOf(const TensorRecord& t) {
  const size_t dot = t.name.rfind('.');
  return dot == std::string::npos ? std::string(componentName(t.component)) : t.name.substr(dot + 1);
}

struct Read {
  const TensorRecord* t;
  num::ScaleGroup g;
};

// A scale that cannot be read (its file cut short after the open) is WS-I024 naming the file,
// offset and tensor, as the value pass reports its own reads; the others are still judged.
std::vector<Read> readActivationScales(const Checkpoint& c, Sink& sink) {
  std::vector<const TensorRecord*> wanted;
  for (const auto& t : c.tensors)
    if (isActivationScale(t) && !t.cut && t.bytes && t.elements() <= kMostValues) wanted.push_back(&t);
  num::fetchTensors(c, wanted);
  std::vector<Read> out;
  std::vector<uint8_t> raw;
  std::vector<float> values;
  for (const TensorRecord* t : wanted) {
    num::ElementReader r;
    if (!r.init(t->dtype)) continue;  // not a float: the shape rules say what it is
    raw.resize(t->bytes);
    try {
      c.files[t->file].map->readAt(t->offset, raw.data(), t->bytes);
    } catch (const CoreError& e) {
      Finding f = makeFinding("WS-I024", "scales could not be read: " + e.error().message, t->name, e.error().file.empty() ? c.files[t->file].path : e.error().file);
      f.offset = e.error().offset;
      sink.add(std::move(f));
      continue;
    }
    values.resize(t->elements());
    r.run(raw.data(), 0, values.size(), values.data());
    Read read{t, {}};
    read.g.stats.add(values.data(), values.size());
    read.g.hist.add(values.data(), values.size());
    out.push_back(std::move(read));
  }
  return out;
}

}  // namespace

void activationScaleValueRules(const Checkpoint& c, Sink& sink) {
  std::vector<Read> reads = readActivationScales(c, sink);
  // Peers: the same kind of scale on the same projection of one layer's experts (activations
  // grow with depth, so layers are not each other's peers). One far outlier matters to every
  // expert of the layer: vLLM's FP8 MoE kernels take one input scale for all experts, the largest
  // (fp8.py Fp8MoEMethod.process_weights_after_loading at commit 0071b24).
  std::map<std::string, std::vector<const Read*>> peers;
  std::set<const TensorRecord*> flagged;
  for (const Read& r : reads) {
    if (judgeScaleValues(r.g.stats, kindOf(*r.t), r.t->name, false, false, sink)) flagged.insert(r.t);
    if (r.t->role == Role::RoutedExpert && r.t->layer >= 0)
      peers[kindOf(*r.t) + "|" + std::to_string(r.t->layer) + "|" + std::string(projectionName(r.t->projection))].push_back(&r);
  }
  for (const auto& [key, ps] : peers) {
    std::vector<std::pair<double, uint64_t>> centres;
    for (const Read* p : ps)
      if (const double v = num::typicalLog2(p->g.hist); std::isfinite(v)) centres.push_back({v, 1});
    if (centres.size() < 4) continue;
    const num::RobustSpread spread = num::robustSpread(std::move(centres));
    for (const Read* p : ps) {
      const double v = num::typicalLog2(p->g.hist);
      if (!std::isfinite(v) || flagged.count(p->t) || !num::farFromPeers(v, spread)) continue;
      const bool far = std::fabs(v - spread.median) >= kFarOctaves;
      sink.add(far ? "WS-V011" : "WS-V007",
               "typical " + kindOf(*p->t) + " 2^" + std::to_string(int(std::lround(v))) + " against 2^" + std::to_string(int(std::lround(spread.median))) + " for the " +
                   std::to_string(ps.size()) + " experts of layer " + std::to_string(p->t->layer),
               p->t->name);
    }
  }
}

void activationScaleDeclarationRules(const Checkpoint& c, Sink& sink) {
  const QuantConfig& q = c.model.quant;
  if (q.activations.empty() && !q.kvCacheQuantized) return;
  FindingGroup missing, undeclared;
  for (const auto& l : c.logical) {
    bool hasInput = false;
    for (uint32_t m : l.members) hasInput |= c.tensors[m].component == Component::InputScale;
    if (q.activations == "dynamic") {
      for (uint32_t m : l.members)
        if (c.tensors[m].component == Component::InputScale) undeclared.add(c.tensors[m].name);
    } else if (q.activations == "static" && l.weight >= 0 && !c.isCut(l) && schemeInfo(l.scheme).quantized && !hasInput) {
      missing.add(c.tensors[uint32_t(l.weight)].name);
    }
  }
  missing.report(sink, "WS-C011", "quantized weights without an input scale, where " + q.activationsKey + " declares static activation scales");
  undeclared.report(sink, "WS-C012", "input scales stored, where " + q.activationsKey + " declares dynamic activation scales (computed per token at run time)");
  if (!q.kvCacheQuantized || c.model.attention.kvLoraRank > 0) return;  // MLA's latent cache scales: unknown
  // Layers that keep a KV cache: those with a key or value projection; a layer's scales by kind.
  struct KvLayer {
    std::string projection;  // the first key / value projection, which a finding names
    std::set<std::string> kinds;
  };
  std::map<int, KvLayer> layers;
  for (const auto& t : c.tensors) {
    if (t.role != Role::Attention || t.layer < 0) continue;
    if (t.component == Component::KvScale) {
      const std::string kind = kindOf(t);
      if (kind == "kv_scale") layers[t.layer].kinds.insert({"k_scale", "v_scale"});  // one scale for both (vLLM's older name)
      else layers[t.layer].kinds.insert(kind);
    } else if (t.component == Component::Weight && (t.name.ends_with("k_proj.weight") || t.name.ends_with("v_proj.weight") || t.name.ends_with("qkv_proj.weight"))) {
      if (layers[t.layer].projection.empty()) layers[t.layer].projection = t.name;
    }
  }
  FindingGroup noKv;
  for (const auto& [layer, l] : layers)
    if (!l.projection.empty() && (!l.kinds.count("k_scale") || !l.kinds.count("v_scale"))) noKv.add(l.projection);
  noKv.report(sink, "WS-C013", "attention layers without k_scale and v_scale, where " + q.kvCacheKey + " declares a quantized KV cache");
}

}  // namespace ws::val
