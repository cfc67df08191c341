#include "core/validate/adapter_rules.h"

#include <optional>
#include <set>

#include "core/model/lora_modules.h"
#include "core/model/naming.h"
#include "core/util/format_bytes.h"

namespace ws::val {

namespace {

struct Features {
  int64_t experts = 0;  // 0: not an experts module
  uint64_t out = 0, in = 0;
};

// The adapted module's features in the base model: its own weight (or parameter) when the base
// has it by that name, else, for experts, the routed experts of that layer and projection, as
// PEFT sees them fused ([E, out, in]) and mlx-lm stacked.
std::optional<Features> baseFeatures(const Checkpoint& base, const LoraModule& m, Role role) {
  for (const std::string& name : {m.module + ".weight", m.module}) {
    const TensorRecord* t = base.find(name);
    if (!t) continue;
    if (t->shape.size() == 2)  // an embedding's factors read token ids in and give rows out
      return role == Role::Embedding ? Features{0, t->shape[1], t->shape[0]} : Features{0, t->shape[0], t->shape[1]};
    if (t->shape.size() == 3) return Features{int64_t(t->shape[0]), t->shape[1], t->shape[2]};
    return std::nullopt;
  }
  const NameParts p = parseTensorName(m.module + ".weight", base.model);
  if (p.role != Role::RoutedExpert || p.projection == Projection::None) return std::nullopt;
  const bool gateUp = p.projection == Projection::GateUp;
  std::set<int32_t> experts;
  Features f;
  uint64_t upOut = 0, otherOut = 0;  // a gate_up module's features out are gate's and up's together
  for (const TensorRecord& t : base.tensors) {
    if (t.layer != p.layer || t.role != Role::RoutedExpert || t.component != Component::Weight || t.expert < 0 || t.shape.size() != 2) continue;
    const bool wanted = gateUp ? (t.projection == Projection::Gate || t.projection == Projection::Up) : t.projection == p.projection;
    if (!wanted) continue;
    experts.insert(t.expert);
    f.in = t.shape[1];
    (t.projection == Projection::Up ? upOut : otherOut) = t.shape[0];
  }
  if (experts.empty()) return std::nullopt;
  f.experts = int64_t(experts.size());
  f.out = upOut + otherOut;
  return f;
}

std::string shapeOf(const Checkpoint& c, int32_t i) { return i < 0 ? "-" : formatShape(c.tensors[uint32_t(i)].shape); }

}  // namespace

void adapterRules(const Checkpoint& c, Sink& sink, const Checkpoint* base) {
  const auto modules = loraModules(c);
  if (modules.empty() && !c.adapter) return;
  for (const LoraModule& m : modules) {
    const std::string& where = c.tensors[uint32_t(m.a >= 0 ? m.a : m.b)].name;
    if (m.a < 0 || m.b < 0) {
      sink.add("WS-A001", m.module + " has lora_" + std::string(m.a < 0 ? "B" : "A") + " " + shapeOf(c, m.a < 0 ? m.b : m.a) + " but no lora_" + (m.a < 0 ? "A" : "B"), where);
      continue;
    }
    if (m.rank < 0) {
      sink.add("WS-A002", m.module + ": lora_A " + shapeOf(c, m.a) + " and lora_B " + shapeOf(c, m.b) + " do not share a rank dimension", where);
      continue;
    }
    if (!c.adapter) continue;
    const int64_t want = c.adapter->rankFor(m.module);
    // A PEFT parameter wrapper holds every expert's factors along the rank dimension.
    if (m.parameter ? (want <= 0 || m.rank % want != 0) : m.rank != want)
      sink.add("WS-A002", m.module + ": rank " + std::to_string(m.rank) + (m.parameter ? " (all experts)" : "") + " where adapter_config.json gives " +
                              std::to_string(want) + (m.parameter ? " per expert" : ""),
               where);
  }
  if (base) {
    for (const LoraModule& m : modules) {
      if (m.a < 0 || m.b < 0 || m.rank < 0) continue;  // WS-A001 / WS-A002 said it
      const TensorRecord& a = c.tensors[uint32_t(m.a)];
      const auto f = baseFeatures(*base, m, a.role);
      if (!f) {
        sink.add("WS-A003", m.module + " is not a module of the base model " + base->root, a.name);
        continue;
      }
      std::string why;
      if (m.in != f->in || m.out != f->out)
        why = "the factors make it " + std::to_string(m.in) + " -> " + std::to_string(m.out) + " features, the base's is " + std::to_string(f->in) + " -> " + std::to_string(f->out);
      else if (m.stacked && m.experts != f->experts)
        why = "the factors hold " + std::to_string(m.experts) + " experts, the base's layer " + std::to_string(f->experts);
      else if (m.parameter && c.adapter && (f->experts == 0 || m.rank != c.adapter->rankFor(m.module) * f->experts))
        why = "its rank dimension is " + std::to_string(m.rank) + ", not rank " + std::to_string(c.adapter->rankFor(m.module)) + " x the base's " + std::to_string(f->experts) + " experts";
      if (!why.empty()) sink.add("WS-A003", m.module + ": " + why, a.name);
    }
  }
  sink.add("WS-A004", adapterSummary(c, modules) + (base ? "; checked against " + base->root : ""), {});
}

}  // namespace ws::val
