#include "core/model/structure.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/model/naming.h"
#include "core/model/quant_scheme.h"
#include "core/model/weight_shape.h"
#include "core/util/parallel.h"

namespace ws {

namespace {

struct FusedDims {
  uint64_t experts = 0, a = 0, b = 0;  // [E, a, b] in stored order, packed codes unpacked
  bool known = false;
};

// The [E, a, b] a fused expert tensor stands for. gpt-oss MXFP4 blocks are [E, rows, in/32, 16].
FusedDims fusedDims(const TensorRecord& t) {
  FusedDims d;
  if (t.shape.size() == 3) {
    d = {t.shape[0], t.shape[1], t.shape[2], true};
  } else if (t.shape.size() == 4 && t.shape[3] == 16) {
    d = {t.shape[0], t.shape[1], t.shape[2] * 32, true};
  }
  return d;
}

bool versionAtLeast5(const std::string& v) { return !v.empty() && v[0] >= '5' && v[0] <= '9'; }

// Orientation of the fused experts of one layer, from which dimension is the hidden size.
// When the last dimension holds packed codes (NVFP4 bytes, int4 words), only the middle
// dimension is compared. Returns FusedOutIn, FusedInOut, or None when the dims cannot tell.
Layout orientationFromDims(const FusedDims& d, Projection proj, int64_t hidden, int64_t inter, bool lastPacked) {
  if (!d.known || hidden <= 0 || inter <= 0) return Layout::None;
  const uint64_t H = uint64_t(hidden), I = uint64_t(inter);
  const uint64_t out = proj == Projection::GateUp ? 2 * I : proj == Projection::Down ? H : 0;
  const uint64_t in = proj == Projection::GateUp ? H : proj == Projection::Down ? I : 0;
  if (out == 0 || out == in) return Layout::None;  // not a projection we know, or 2I == H
  if (d.a == out && (lastPacked || d.b == in)) return Layout::FusedOutIn;
  if (d.a == in && (lastPacked || d.b == out)) return Layout::FusedInOut;
  return Layout::None;
}

void completeModelFromTensors(Checkpoint& c) {
  ModelDescription& m = c.model;
  int maxLayer = -1, maxExpert = -1;
  std::set<int> layersWithExperts;
  bool shared = false;
  for (const auto& t : c.tensors) {
    if (t.numaNode >= 0) m.numaNodes = std::max<int64_t>(m.numaNodes, t.numaNode + 1);
    if (t.role == Role::Vision || t.role == Role::Mtp) continue;
    maxLayer = std::max(maxLayer, t.layer);
    if (t.role == Role::RoutedExpert) {
      layersWithExperts.insert(t.layer);
      maxExpert = std::max(maxExpert, t.expert);
      if ((t.layout != Layout::None || t.shape.size() >= 3) && t.component == Component::Weight && !t.shape.empty())
        maxExpert = std::max<int>(maxExpert, int(t.shape[0]) - 1);
    }
    if (t.role == Role::SharedExpert) shared = true;
    if (m.hiddenSize < 0 && t.role == Role::Embedding && t.shape.size() == 2) m.hiddenSize = int64_t(t.shape[1]);
  }
  if (m.source.empty()) m.source = "tensors";
  if (m.numLayers < 0) m.numLayers = maxLayer + 1;
  if (m.numExperts <= 0 && maxExpert >= 0) m.numExperts = maxExpert + 1;
  if (m.numSharedExperts == 0 && shared) m.numSharedExperts = 1;
  if (m.moeLayers.empty() && m.denseLayers.empty()) {
    for (int n = 0; n < m.numLayers; ++n) (layersWithExperts.count(n) ? m.moeLayers : m.denseLayers).push_back(n);
  }
}

void decideFusedLayouts(Checkpoint& c, const std::vector<uint8_t>& alwaysOutIn) {
  const ModelDescription& m = c.model;
  bool gptOss = m.architecture == "gpt_oss";
  // First pass: what the shapes say, per layer.
  std::map<int, Layout> layerLayout;
  for (const auto& t : c.tensors) {
    if (t.layout != Layout::FusedOutIn || t.component != Component::Weight) continue;  // provisional marker
    bool packed = t.dtype->family == DTypeFamily::Int;
    Layout l = orientationFromDims(fusedDims(t), t.projection, m.hiddenSize, m.expertIntermediateSize, packed);
    if (t.shape.size() == 4) l = Layout::FusedOutIn;  // MXFP4 blocks are always stored out-rows first
    if (l != Layout::None && !layerLayout.count(t.layer)) layerLayout[t.layer] = l;
  }
  // When the shapes cannot tell (2I == H and I == H), fall back to the family and writer:
  // transformers 5 holds [E, 2I, H] / [E, H, I]; gpt-oss and the original Qwen3-VL-MoE and
  // Llama 4 checkpoints hold [E, H, 2I] / [E, I, H].
  Layout familyDefault = (!gptOss && versionAtLeast5(m.transformersVersion)) ? Layout::FusedOutIn : Layout::FusedInOut;
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    TensorRecord& t = c.tensors[i];
    if (t.layout != Layout::FusedOutIn || alwaysOutIn[i]) continue;
    // Companions (scales, biases) follow the orientation found for their layer.
    auto it = layerLayout.find(t.layer);
    t.layout = t.shape.size() == 4 ? Layout::FusedOutIn : (it != layerLayout.end() ? it->second : familyDefault);
    t.interleaved = gptOss && t.projection == Projection::GateUp;
  }
}

}  // namespace

void recognizeStructure(Checkpoint& c) {
  const size_t n = c.tensors.size();
  std::vector<std::string> logicalNames(n);
  std::vector<uint8_t> alwaysOutIn(n);
  // Names classify independently: split over the cores (200k names in a Kimi-K2 checkpoint).
  parallelChunks(n, 4096, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      TensorRecord& t = c.tensors[i];
      NameParts p = parseTensorName(t.name, c.model);
      logicalNames[i] = std::move(p.logical);
      alwaysOutIn[i] = p.alwaysOutIn;
      t.role = p.role;
      t.layer = p.layer;
      t.expert = p.expert;
      t.numaNode = p.numaNode;
      t.projection = p.projection;
      t.component = p.component;
      t.layout = p.stacked ? Layout::Stacked : (p.fused ? Layout::FusedOutIn /* provisional */ : Layout::None);
      t.interleaved = false;
    }
  });
  cacheWeightShapes(c);
  completeModelFromTensors(c);
  decideFusedLayouts(c, alwaysOutIn);
  assignQuantSchemes(c, logicalNames);
}

}  // namespace ws
