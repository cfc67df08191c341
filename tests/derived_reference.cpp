#include "tests/derived_reference.h"

#include <algorithm>
#include <cstring>

#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"
#include "core/plan/ep_plan.h"

namespace wstest {

using namespace ws;

const uint8_t* fileBytes(const Checkpoint& c, const TensorRecord& t) { return c.files[t.file].map->bytes().data() + t.offset; }

std::vector<uint8_t> expectedCopy(const Checkpoint& c, const TensorRecord& t, const load::LoadOptions& o) {
  const uint8_t* f = fileBytes(c, t);
  const uint64_t E = uint64_t(std::max<int64_t>(0, c.model.numExperts));
  const bool whole = o.plan.rules->fusedWholeOnEveryRank;  // the seed: no index in the name, no slicing
  if (!whole && E && t.role == Role::RoutedExpert && t.expert < 0 && !t.shape.empty() && t.shape[0] == E && t.layout != Layout::None) {
    std::vector<uint8_t> out;
    const uint64_t per = t.bytes / E;
    for (int64_t e : o.plan.placement.logicalOf(o.epRank, plan::mapRowOf(c.model, o.plan.placement, t.layer))) out.insert(out.end(), f + uint64_t(e) * per, f + uint64_t(e + 1) * per);
    return out;
  }
  return {f, f + t.bytes};
}

DerivedReference derivedReference(const Checkpoint& c, const load::DerivedBuffer& db, const load::LoadOptions& o) {
  DerivedReference r;
  const TensorRecord* src = db.sources.empty() ? nullptr : c.find(db.sources[0]);
  if (!src) return {{}, db.name + ": no source tensor"};
  if (db.kind == "fused-gate-up") {
    const TensorRecord* up = db.sources.size() > 1 ? c.find(db.sources[1]) : nullptr;
    if (!up || src->projection != Projection::Gate || up->projection != Projection::Up || src->layer != up->layer || src->expert != up->expert ||
        src->numaNode != up->numaNode)
      return {{}, db.name + ": its sources are not one expert's gate and up"};
    if (src->expert >= 0) {  // per-expert tensors: both whole
      r.bytes.assign(fileBytes(c, *src), fileBytes(c, *src) + src->bytes);
      r.bytes.insert(r.bytes.end(), fileBytes(c, *up), fileBytes(c, *up) + up->bytes);
      return r;
    }
    // stacked: the expert the name ends in, from both, and one this rank holds
    const uint64_t e = std::stoull(db.name.substr(db.name.rfind('.') + 1)), E = uint64_t(c.model.numExperts);
    const auto experts = o.plan.placement.logicalOf(o.epRank, plan::mapRowOf(c.model, o.plan.placement, src->layer));
    if (std::find(experts.begin(), experts.end(), int64_t(e)) == experts.end()) return {{}, db.name + ": an expert this rank does not hold"};
    for (const TensorRecord* t : {src, up}) r.bytes.insert(r.bytes.end(), fileBytes(c, *t) + e * (t->bytes / E), fileBytes(c, *t) + (e + 1) * (t->bytes / E));
    return r;
  }
  if (db.kind == "transpose") {
    const auto copy = expectedCopy(c, *src, o);
    const uint64_t R = src->shape[src->shape.size() - 2], C = src->shape.back(), esz = src->dtype->blockBytes, mats = copy.size() / (R * C * esz);
    r.bytes.resize(copy.size());
    for (uint64_t m = 0; m < mats; ++m)
      for (uint64_t i = 0; i < R; ++i)
        for (uint64_t j = 0; j < C; ++j) std::memcpy(&r.bytes[(m * R * C + j * R + i) * esz], &copy[(m * R * C + i * C + j) * esz], esz);
    return r;
  }
  if (db.kind != "bf16") return {{}, db.name + ": unknown kind " + db.kind};
  std::vector<int64_t> which = src->expert < 0 ? o.plan.placement.logicalOf(o.epRank, plan::mapRowOf(c.model, o.plan.placement, src->layer)) : std::vector<int64_t>{-1};
  std::sort(which.begin(), which.end());
  for (int64_t e : which) {
    num::DequantRequest req;
    req.logical = src->logical;
    req.expert = e;
    auto ref = num::dequantize(c, req);
    if (!ref) return {{}, db.name + ": " + ref.error().describe()};
    for (float v : ref.value().values) {
      const uint16_t h = num::toBf16Rne(v);
      r.bytes.push_back(uint8_t(h & 0xFF));
      r.bytes.push_back(uint8_t(h >> 8));
    }
  }
  return r;
}

}  // namespace wstest
