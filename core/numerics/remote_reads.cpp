#include "core/numerics/remote_reads.h"

namespace ws::num {

namespace {

RemoteSource::Range whole(const Checkpoint& c, const TensorRecord& t) { return {c.files[t.file].path, t.offset, t.bytes}; }

}  // namespace

void fetchForDecode(const Checkpoint& c, uint32_t logical, int64_t expert) {
  if (!c.remote) return;
  const LogicalTensor& l = c.logical[logical];
  const TensorRecord* w = l.weight >= 0 ? &c.tensors[uint32_t(l.weight)] : nullptr;
  const uint64_t experts = expert >= 0 && w && w->shape.size() >= 3 ? w->shape[0] : 0;
  std::vector<RemoteSource::Range> ranges;
  for (uint32_t m : l.members) {
    const TensorRecord& t = c.tensors[m];
    if (t.bytes == 0) continue;
    if (experts && uint64_t(expert) < experts && t.shape.size() >= 2 && t.shape[0] == experts && t.bytes % experts == 0) {
      const uint64_t share = t.bytes / experts;  // row-major: expert e is one contiguous slice
      ranges.push_back({c.files[t.file].path, t.offset + uint64_t(expert) * share, share});
    } else {
      ranges.push_back(whole(c, t));
    }
  }
  c.remote->ensure(ranges);
}

void fetchTensor(const Checkpoint& c, const TensorRecord& t) {
  if (c.remote && t.bytes) c.remote->ensure({whole(c, t)});
}

void fetchScales(const Checkpoint& c) {
  if (!c.remote) return;
  std::vector<RemoteSource::Range> ranges;
  for (const auto& l : c.logical) {
    if (l.weight < 0) continue;
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    if (w.dtype->isBlockQuant()) {
      ranges.push_back(whole(c, w));
      continue;
    }
    for (uint32_t m : l.members)
      if (c.tensors[m].component == Component::Scale || c.tensors[m].component == Component::GlobalScale) ranges.push_back(whole(c, c.tensors[m]));
  }
  c.remote->ensure(ranges);
}

void fetchAll(const Checkpoint& c) {
  if (!c.remote) return;
  std::vector<RemoteSource::Range> ranges;
  for (const auto& t : c.tensors)
    if (t.bytes) ranges.push_back(whole(c, t));
  c.remote->ensure(ranges);
}

}  // namespace ws::num
