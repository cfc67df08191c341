#include "core/plan/derived_buffers.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/model/quant_scheme.h"
#include "core/numerics/dequant.h"

namespace ws::plan {

namespace {

// "…experts.2.gate_proj.weight" -> "…experts.2.gate_up_proj"; "blk.0.ffn_gate_exps.weight" ->
// "blk.0.ffn_gate_up_exps"; KTransformers "blk.1.ffn_gate_exps.0.numa.0.weight" ->
// "blk.1.ffn_gate_up_exps.0.numa.0": the gate's own name, so every pair's name is unique.
std::string fusedName(const std::string& gate) {
  std::string n = gate;
  if (n.size() > 7 && n.compare(n.size() - 7, 7, ".weight") == 0) n.resize(n.size() - 7);
  if (auto at = n.rfind("gate"); at != std::string::npos) n.replace(at, 4, "gate_up");
  return n;
}

DerivedSpec spec(std::string name, DerivedKind kind, std::vector<DerivedSource> sources, uint64_t bytes) {
  DerivedSpec s;
  s.name = std::move(name);
  s.kind = kind;
  s.sources = std::move(sources);
  s.bytes = bytes;
  return s;
}

}  // namespace

const char* derivedKindName(DerivedKind k) {
  switch (k) {
    case DerivedKind::FusedGateUp: return "fused-gate-up";
    case DerivedKind::Transpose: return "transpose";
    case DerivedKind::Bf16: return "bf16";
  }
  return "";
}

uint64_t DerivedPlan::bytes() const {
  uint64_t n = 0;
  for (const auto& b : buffers) n += b.bytes;
  return n;
}

DerivedPlan derivedBuffers(const Checkpoint& c, const PlanOptions& opt, const RankPlan& rp) {
  DerivedPlan out;
  if (!opt.deriveFusedGateUp && !opt.deriveTranspose && !opt.deriveBf16) return out;
  const uint64_t E = uint64_t(std::max<int64_t>(0, c.model.numExperts));
  std::map<int, std::vector<int64_t>> expertsByLayer;
  auto rankExperts = [&](int layer) -> const std::vector<int64_t>& {
    auto it = expertsByLayer.find(layer);
    if (it == expertsByLayer.end()) it = expertsByLayer.emplace(layer, expertsOnRank(c.model, opt.placement, rp.rank, layer)).first;
    return it->second;
  };
  auto isExpertWeight = [&](const TensorRecord& t) { return t.role == Role::RoutedExpert && t.component == Component::Weight && E > 0; };

  // Up projections held, by (layer, expert, NUMA part): the partner of each gate.
  std::map<std::tuple<int, int64_t, int32_t>, const HeldTensor*> ups;
  for (const auto& h : rp.held) {
    const TensorRecord& t = c.tensors[h.tensor];
    if (isExpertWeight(t) && t.projection == Projection::Up) ups[{t.layer, t.expert, t.numaNode}] = &h;
  }

  std::set<uint32_t> bf16Done;  // logical tensors (a KTransformers weight has one record per NUMA part)
  bool alreadyFused = false;
  for (const auto& h : rp.held) {
    const TensorRecord& t = c.tensors[h.tensor];
    if (!isExpertWeight(t)) continue;
    const bool sliced = slicedByExpert(c, t);        // stacked or fused: every expert along dim 0
    const bool slices = heldAsSlices(c, t, opt);     // and the rank's copy holds only its experts' slices

    if (opt.deriveFusedGateUp && t.projection == Projection::GateUp) alreadyFused = true;
    if (opt.deriveFusedGateUp && t.projection == Projection::Gate) {
      auto up = ups.find({t.layer, t.expert, t.numaNode});
      if (up == ups.end()) {
        out.notes.push_back("no fused gate_up for " + t.name + ": its up projection is not held");
      } else {
        const TensorRecord& u = c.tensors[up->second->tensor];
        if (sliced != slicedByExpert(c, u)) {
          out.notes.push_back("no fused gate_up for " + t.name + ": gate and up are stored differently");
        } else if (sliced) {
          // One pair per expert slot of this rank (an EPLB replica of an expert fuses once); in a
          // whole copy the expert sits at its own index, in a sliced one at its slot.
          const auto& experts = rankExperts(t.layer);
          const uint64_t perG = t.bytes / E, perU = u.bytes / E;
          for (size_t k = 0; k < experts.size(); ++k) {
            if (k > 0 && experts[k] == experts[k - 1]) continue;
            const uint64_t at = slices ? k : uint64_t(experts[k]);
            out.buffers.push_back(spec(fusedName(t.name) + "." + std::to_string(experts[k]), DerivedKind::FusedGateUp,
                                       {{h.tensor, at * perG, perG}, {up->second->tensor, at * perU, perU}}, perG + perU));
          }
        } else {
          out.buffers.push_back(spec(fusedName(t.name), DerivedKind::FusedGateUp, {{h.tensor, 0, t.bytes}, {up->second->tensor, 0, u.bytes}}, t.bytes + u.bytes));
        }
      }
    }

    if (opt.deriveTranspose && buildsTransposedTwin(c, t)) {
      DerivedSpec s = spec(t.name + " (transposed)", DerivedKind::Transpose, {{h.tensor, 0, h.bytes}}, h.bytes);
      s.elemBytes = t.dtype->blockBytes;
      s.rows = t.shape[t.shape.size() - 2];
      s.cols = t.shape.back();
      const uint64_t matBytes = s.rows * s.cols * s.elemBytes;
      s.mats = matBytes ? h.bytes / matBytes : 0;
      out.buffers.push_back(std::move(s));
    }

    if (opt.deriveBf16 && buildsBf16Twin(c, t) && bf16Done.insert(t.logical).second) {
      const LogicalTensor& l = c.logical[t.logical];
      auto dec = num::makeDecoder(c, t.logical);
      if (!dec) {
        out.notes.push_back("no BF16 copy of " + l.name + ": " + dec.error().message);
        continue;
      }
      const auto& d = *dec.value();
      DerivedSpec s = spec(l.name + " (bf16)", DerivedKind::Bf16, {{h.tensor, 0, h.bytes}}, 0);
      s.logical = t.logical;
      s.cols = d.cols();
      if (sliced && d.rows() % E == 0) {
        const uint64_t per = d.rows() / E;
        for (int64_t e : rankExperts(t.layer)) s.rowRanges.push_back({uint64_t(e) * per, per});
      } else {
        s.rowRanges.push_back({0, d.rows()});
      }
      for (auto [first, n] : s.rowRanges) s.bytes += n * d.cols() * 2;
      out.buffers.push_back(std::move(s));
    }
  }
  if (alreadyFused) out.notes.push_back("gate and up are already stored fused (gate_up): no fused copy is built");
  return out;
}

}  // namespace ws::plan
