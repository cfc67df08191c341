#include "core/model/weight_shape.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "core/util/error.h"
#include "core/util/parallel.h"

namespace ws {

namespace {

// Whether t is 1 to 8 I32/I64 values inside its file: the only weight_shape read.
bool readable(const Checkpoint& c, const TensorRecord& t) {
  const bool i64 = t.dtype->name == "I64", i32 = t.dtype->name == "I32";
  const uint64_t n = t.elements();
  if ((!i64 && !i32) || n == 0 || n > 8 || t.file >= c.files.size()) return false;
  const auto& f = c.files[t.file];
  return f.map && t.bytes == n * (i64 ? 8 : 4) && t.offset <= f.map->size() && t.bytes <= f.map->size() - t.offset;
}

std::vector<int64_t> entriesOf(const TensorRecord& t, const uint8_t* bytes) {
  const bool i64 = t.dtype->name == "I64";
  std::vector<int64_t> v(t.elements());
  for (uint64_t i = 0; i < v.size(); ++i) {
    if (i64) {
      std::memcpy(&v[i], bytes + 8 * i, 8);
    } else {
      int32_t x;
      std::memcpy(&x, bytes + 4 * i, 4);
      v[i] = x;
    }
  }
  return v;
}

std::optional<std::vector<int64_t>> readFromFile(const Checkpoint& c, const TensorRecord& t) {
  if (!readable(c, t)) return std::nullopt;
  uint8_t buf[64];
  try {
    c.files[t.file].map->readAt(t.offset, buf, t.bytes);
  } catch (const CoreError&) {
    return std::nullopt;
  }
  return entriesOf(t, buf);
}

// Shape tensors this close in one file are read with one pread. safetensors' own writer orders
// a file's tensors by dtype, then name, so a shard's I64 weight_shape tensors lie side by side:
// Kimi-K2 has ~70k of them. A pread each, a few microseconds on a VM, was a third of `inspect`
// of a 27k-tensor compressed-tensors checkpoint (perf; that one written by synth, shapes apart).
constexpr uint64_t kJoinGap = 4096, kJoinMax = uint64_t(1) << 20;

}  // namespace

std::optional<std::vector<int64_t>> readWeightShape(const Checkpoint& c, const TensorRecord& t) {
  if (!c.weightShapes.empty() && &t >= c.tensors.data() && &t < c.tensors.data() + c.tensors.size()) {
    auto it = c.weightShapes.find(uint32_t(&t - c.tensors.data()));
    if (it != c.weightShapes.end()) return it->second;
  }
  return readFromFile(c, t);
}

void cacheWeightShapes(Checkpoint& c) {
  std::vector<uint32_t> which;  // readable shape tensors by file and offset
  for (uint32_t i = 0; i < c.tensors.size(); ++i)
    if (c.tensors[i].component == Component::Shape && readable(c, c.tensors[i])) which.push_back(i);
  std::sort(which.begin(), which.end(), [&](uint32_t a, uint32_t b) {
    const TensorRecord &x = c.tensors[a], &y = c.tensors[b];
    return std::tie(x.file, x.offset) < std::tie(y.file, y.offset);
  });
  std::vector<size_t> runs;  // where each run of nearby tensors starts in `which`
  for (size_t k = 0; k < which.size(); ++k) {
    const TensorRecord& t = c.tensors[which[k]];
    const TensorRecord* first = runs.empty() ? nullptr : &c.tensors[which[runs.back()]];
    const TensorRecord& last = c.tensors[which[k ? k - 1 : 0]];
    const bool joins = first && t.file == first->file && t.offset <= last.offset + last.bytes + kJoinGap && t.offset + t.bytes - first->offset <= kJoinMax;
    if (!joins) runs.push_back(k);
  }
  runs.push_back(which.size());
  std::vector<uint64_t> stops(runs.size() - 1);  // where each run's bytes end
  for (size_t r = 0; r + 1 < runs.size(); ++r)
    for (size_t k = runs[r]; k < runs[r + 1]; ++k) stops[r] = std::max(stops[r], c.tensors[which[k]].offset + c.tensors[which[k]].bytes);
  // Cold, each run is a read from the disk that waits for the one before it on its worker: 2,016
  // reads of ~70 us each were 145 of the 160 ms a cold open of the scan bench's INT4 checkpoint
  // took (strace). Advised first, all of them, the disk is asked for them together. A file whose
  // first run is cached was read before, most likely: nothing is advised there, so a warm open
  // pays one mincore a file, not one a run.
  bool advise = false;
  for (size_t r = 0; r + 1 < runs.size(); ++r) {
    const TensorRecord& first = c.tensors[which[runs[r]]];
    const MappedFile& file = *c.files[first.file].map;
    if (r == 0 || first.file != c.tensors[which[runs[r - 1]]].file) advise = !file.cached(first.offset);
    if (advise) file.willNeed(first.offset, stops[r] - first.offset);
  }
  std::vector<std::optional<std::vector<int64_t>>> values(which.size());
  parallelChunks(runs.size() - 1, 64, [&](size_t begin, size_t end) {
    std::vector<uint8_t> buf;
    for (size_t r = begin; r < end; ++r) {
      const TensorRecord& first = c.tensors[which[runs[r]]];
      buf.resize(stops[r] - first.offset);
      try {
        c.files[first.file].map->readAt(first.offset, buf.data(), buf.size());
      } catch (const CoreError&) {  // each on its own, so that one bad read loses only its own
        for (size_t k = runs[r]; k < runs[r + 1]; ++k) values[k] = readFromFile(c, c.tensors[which[k]]);
        continue;
      }
      for (size_t k = runs[r]; k < runs[r + 1]; ++k) values[k] = entriesOf(c.tensors[which[k]], buf.data() + (c.tensors[which[k]].offset - first.offset));
    }
  });
  c.weightShapes.clear();
  c.weightShapes.reserve(which.size());
  for (size_t k = 0; k < which.size(); ++k)
    if (values[k]) c.weightShapes.emplace(which[k], std::move(*values[k]));
}

bool weightShapeFits(const std::vector<int64_t>& dims, const std::vector<uint64_t>& packedShape, uint64_t perWord) {
  if (dims.empty() || dims.size() != packedShape.size() || perWord == 0) return false;
  for (int64_t d : dims)
    if (d <= 0) return false;
  for (size_t k = 0; k + 1 < dims.size(); ++k)
    if (uint64_t(dims[k]) != packedShape[k]) return false;
  const uint64_t last = uint64_t(dims.back()), packed = packedShape.back();
  return packed > 0 && last <= packed * perWord && last > (packed - 1) * perWord;
}

}  // namespace ws
