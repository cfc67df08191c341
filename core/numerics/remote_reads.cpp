#include "core/numerics/remote_reads.h"

#include <algorithm>

#include "core/numerics/row_footprint.h"
#include "core/numerics/scale_sources.h"

namespace ws::num {

namespace {

RemoteSource::Range whole(const Checkpoint& c, const TensorRecord& t) { return {c.files[t.file].path, t.offset, t.bytes}; }

void fetchSpans(const Checkpoint& c, const std::vector<StoredSpan>& spans) {
  std::vector<RemoteSource::Range> ranges;
  for (const StoredSpan& s : spans) ranges.push_back({c.files[c.tensors[s.tensor].file].path, s.offset, s.bytes});
  c.remote->ensure(ranges);
}

}  // namespace

void fetchForDecode(const Checkpoint& c, const DequantRequest& req) {
  if (c.remote) fetchSpans(c, rowFootprint(c, req));
}

void fetchForDecode(const Checkpoint& c, const RowDecoder& layout, const DequantRequest& req) {
  if (c.remote) fetchSpans(c, rowFootprint(c, layout, req));
}

void fetchTensor(const Checkpoint& c, const TensorRecord& t) { fetchTensors(c, {&t}); }

void fetchTensors(const Checkpoint& c, const std::vector<const TensorRecord*>& tensors) {
  if (!c.remote) return;
  std::vector<RemoteSource::Range> ranges;
  for (const TensorRecord* t : tensors)
    if (t->bytes) ranges.push_back(whole(c, *t));
  if (!ranges.empty()) c.remote->ensure(ranges);
}

void fetchScales(const Checkpoint& c, std::pair<size_t, size_t> range) {
  if (!c.remote) return;
  std::vector<RemoteSource::Range> ranges;
  for (size_t li = range.first; li < std::min(range.second, c.logical.size()); ++li)
    forEachScaleSource(c, c.logical[li], [&](const TensorRecord& t) { ranges.push_back(whole(c, t)); });
  c.remote->ensure(ranges);
}

void fetchWhole(const Checkpoint& c, const std::vector<uint32_t>& logical) {
  if (!c.remote) return;
  std::vector<RemoteSource::Range> ranges;
  for (uint32_t li : logical)
    for (uint32_t m : c.logical[li].members)
      if (c.tensors[m].bytes) ranges.push_back(whole(c, c.tensors[m]));
  c.remote->ensure(ranges);
}

}  // namespace ws::num
