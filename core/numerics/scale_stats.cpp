#include "core/numerics/scale_stats.h"

#include "core/numerics/remote_reads.h"

#include <cmath>
#include <cstring>
#include <algorithm>
#include <bit>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/model/quant_scheme.h"
#include "core/numerics/code_extremes.h"
#include "core/numerics/element_reader.h"
#include "core/numerics/float_formats.h"
#include "core/numerics/gguf_scale_formulas.h"
#include "core/numerics/read_ahead.h"
#include "core/numerics/scale_sources.h"
#include "core/util/parallel.h"

namespace ws::num {

namespace {

// Emits the scales stored inside one GGUF block (gguf_scale_formulas.h, shared with the GPU) and
// returns how many bytes it read.
template <class Emit>
uint64_t ggufBlockScalesEmit(int id, const uint8_t* b, Emit&& emit) {
  const GgufBlockScales s = ggufBlockScales(id, b);
  if (s.hasD) emit("d", s.d);
  if (s.hasDmin) emit("dmin", s.dmin);
  for (int i = 0; i < s.nSub; ++i) emit("sub_scale", s.sub[i]);
  for (int i = 0; i < s.nSubMin; ++i) emit("sub_min", s.subMin[i]);
  return s.bytesRead;
}

}  // namespace

std::string scaleGroupKey(const Checkpoint& c, const TensorRecord& w, const LogicalTensor& l, ScaleGrouping by) {
  switch (by) {
    case ScaleGrouping::Tensor: return l.name;
    case ScaleGrouping::Layer: return w.layer >= 0 ? "layer " + std::to_string(w.layer) : "(outside layers)";
    case ScaleGrouping::Projection: {
      std::string_view p = projectionName(w.projection);
      return p.empty() ? std::string(roleName(w.role)) : std::string(p);
    }
    case ScaleGrouping::Expert: return w.expert >= 0 ? "expert " + std::to_string(w.expert) : std::string(roleName(w.role));
    case ScaleGrouping::Checkpoint: return "checkpoint";
  }
  return "checkpoint";
}

double typicalLog2(const Histogram& h) {
  double sum = 0, n = 0;
  for (size_t i = 0; i < h.counts.size(); ++i)
    if (h.counts[i]) sum += double(h.counts[i]) * (h.edge(i) + h.edge(i + 1)) / 2, n += double(h.counts[i]);
  return n ? sum / n : NAN;
}

namespace {

// A worker's buffers for scalesOfTensor.
struct ScaleScratch {
  std::vector<float> buf = std::vector<float>(1 << 16);
  std::vector<uint8_t> raw;
  // 16-bit scales (BF16, F16) are tallied by code, then each distinct value is added once with its
  // count: Kimi-K2's ~130M BF16 group scales take a few thousand distinct values, and adding each
  // value in turn was half of a validate --values' time (docs/benchmarks.md). The count, a store
  // a scale, is most of a warm scale pass: bench/scale_count_floor reads and counts and does
  // nothing else, and the pass of `scales`, its start-up and open aside, is as fast (benchmarks.md).
  std::vector<uint64_t> tally = std::vector<uint64_t>(1 << 16);
  // Where the counts lie: a flush visits those codes alone. Visiting all 65,536 counts per tensor
  // cost as much as tallying the bench checkpoint's 65,536 scales a tensor (perf). Bounds from one
  // vector pass over the codes: marking runs of 256 codes as each code was counted, a store a
  // code, took 0.33 ns a scale against 0.28 (a one-off micro-benchmark). Counts not yet flushed
  // when the next tensor starts were left by a read that failed part way (it throws); they are
  // dropped, since this scratch outlives the pass.
  Code16Bounds counted;
  std::vector<float> codeValue = std::vector<float>(1 << 16);    // of codeValueOf's dtype
  const DType* codeValueOf = nullptr;
};

// Counts n 16-bit scales at `raw` in the tally.
void addTallied(ScaleScratch& s, const ElementReader& r, const uint8_t* raw, uint64_t n) {
  if (s.codeValueOf != r.dtype()) {
    std::vector<uint8_t> codes(2 << 16);
    for (uint32_t code = 0; code < (1u << 16); ++code) codes[2 * code] = uint8_t(code), codes[2 * code + 1] = uint8_t(code >> 8);
    r.run(codes.data(), 0, 1 << 16, s.codeValue.data());
    s.codeValueOf = r.dtype();
  }
  widenCode16Bounds(raw, n, s.counted);
  uint64_t* tally = s.tally.data();
  uint64_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    // Four codes a load: assembling each code from two byte loads took twice as long
    // (a micro-benchmark of the tally over BF16 scales, 0.34 against 0.67 ns a scale).
    for (; i + 4 <= n; i += 4) {
      uint64_t w;
      std::memcpy(&w, raw + 2 * i, 8);
      ++tally[w & 0xFFFF], ++tally[w >> 16 & 0xFFFF], ++tally[w >> 32 & 0xFFFF], ++tally[w >> 48];
    }
  }
  for (; i < n; ++i) ++tally[raw[2 * i] | raw[2 * i + 1] << 8];
}

// Calls fn(code, count) for each code counted, clearing the tally for the next tensor.
template <class Fn>
void drainTally(ScaleScratch& s, Fn&& fn) {
  auto visit = [&](uint32_t from, uint32_t to) {
    for (uint32_t code = from; code <= to; ++code)
      if (s.tally[code]) fn(code, s.tally[code]), s.tally[code] = 0;
  };
  if (s.counted.anyPositive()) visit(s.counted.umin, uint16_t(s.counted.smax));
  if (s.counted.anyNegative()) visit(uint16_t(s.counted.smin), s.counted.umax);
  s.counted = {};
}

// The tally's distinct values into g, clearing it for the next tensor.
void flushTally(ScaleScratch& s, ScaleGroup& g) {
  std::vector<float> v;
  std::vector<uint64_t> k;
  drainTally(s, [&](uint32_t code, uint64_t count) { v.push_back(s.codeValue[code]), k.push_back(count); });
  g.stats.addCounted(v.data(), k.data(), v.size());
  g.hist.addCounted(v.data(), k.data(), v.size());
}

// The columns of each scale row that hold scales, as {row length, leading columns that count}:
// AWQ GEMV pads every row past its groups to the width its kernels read (AutoAWQ 0.2.7.post3
// gemv.py calculate_zeros_width), and the padding zeros scale no weight.
std::pair<uint64_t, uint64_t> scaleColumns(const Checkpoint& c, const LogicalTensor& l, const TensorRecord& s) {
  const uint64_t n = s.elements();
  const QuantConfig& q = c.model.quant;
  const TensorRecord& w = c.tensors[uint32_t(l.weight)];
  if (l.scheme != Scheme::Awq || q.awqVersion != "gemv" || q.groupSize <= 0 || s.shape.size() != 2 || w.shape.size() != 2) return {n, n};
  const uint64_t groups = w.shape[1] * 8 / uint64_t(q.groupSize);
  if (!s.shape[1] || groups > s.shape[1]) return {n, n};  // not GEMV's shape: the decoder names it
  return {s.shape[1], groups};
}

TensorScales scalesWith(const Checkpoint& c, const LogicalTensor& l, ScaleScratch& scratch, ExtentScratch::Kept* keep) {
  std::vector<float>& buf = scratch.buf;
  std::vector<uint8_t>& raw = scratch.raw;
  if (keep) keep->file = nullptr;  // another tensor's until filled below
  TensorScales out;
  const TensorRecord& w = c.tensors[uint32_t(l.weight)];
  if (w.dtype->isBlockQuant()) {
    const uint8_t* p = c.files[w.file].map->bytes().data() + w.offset;
    const uint64_t nblocks = w.bytes / w.dtype->blockBytes;
    std::set<std::string> emitted;
    for (uint64_t i = 0; i < nblocks; ++i)
      out.bytesRead += ggufBlockScalesEmit(w.dtype->ggmlId, p + i * w.dtype->blockBytes, [&](const char* kind, float v) {
        auto& g = out.kinds[kind];
        g.stats.add(&v, 1);
        g.hist.add(v);
        if (emitted.insert(kind).second) ++g.tensors;
      });
    return out;
  }
  for (uint32_t m : l.members) {
    const TensorRecord& s = c.tensors[m];
    if (s.component != Component::Scale && s.component != Component::GlobalScale) continue;
    ElementReader r;
    const DType* dt = scaleReadDtype(l.scheme, s.dtype);
    if (!r.init(dt)) continue;
    auto& g = out.kinds[std::string(componentName(s.component))];
    // Read with pread, not through the mapping: scale tensors are small and scattered between
    // the weights, and each page fault on the mapping brings a read-around window of weight
    // bytes this pass never looks at.
    const uint64_t n = s.elements();
    const bool tallied = dt->blockElems == 1 && dt->blockBytes == 2;
    if (tallied) drainTally(scratch, [](uint32_t, uint64_t) {});
    // The group scales a weight's decode reads next are read whole, once, and kept for it.
    const bool kept = keep && !keep->file && s.component == Component::Scale && s.bytes <= kKeptBytes;
    if (kept) {
      keep->bytes.resize(s.bytes);
      c.files[s.file].map->readAt(s.offset, keep->bytes.data(), s.bytes);
      keep->file = c.files[s.file].map.get(), keep->offset = s.offset;
    }
    const auto [rowLength, counted] = scaleColumns(c, l, s);
    for (uint64_t row = 0; row < n; row += rowLength) {
      for (uint64_t i = row; i < row + counted; i += buf.size()) {
        const uint64_t k = std::min<uint64_t>(buf.size(), row + counted - i);
        const uint64_t at = i / dt->blockElems * dt->blockBytes;
        const uint64_t len = std::min<uint64_t>(s.bytes - at, (k + dt->blockElems - 1) / dt->blockElems * dt->blockBytes);
        const uint8_t* bytes = kept ? keep->bytes.data() + at : nullptr;
        if (!kept) {
          raw.resize(len);
          c.files[s.file].map->readAt(s.offset + at, raw.data(), len);
          bytes = raw.data();
        }
        if (tallied) {
          addTallied(scratch, r, bytes, k);
          continue;
        }
        r.run(bytes, 0, k, buf.data());
        g.stats.add(buf.data(), k);
        g.hist.add(buf.data(), k);
      }
    }
    if (tallied) flushTally(scratch, g);
    out.bytesRead += s.bytes;
    ++g.tensors;
  }
  return out;
}

}  // namespace

TensorScales scalesOfTensor(const Checkpoint& c, const LogicalTensor& l, ExtentScratch::Kept* keep) {
  thread_local ScaleScratch scratch;
  return scalesWith(c, l, scratch, keep);
}

void addTensorScales(const Checkpoint& c, ScaleGrouping by, const LogicalTensor& l, TensorScales&& t, ScaleReport& rep) {
  auto& kinds = rep.groups[scaleGroupKey(c, c.tensors[uint32_t(l.weight)], l, by)];  // kept with no scales, too
  for (auto& [kind, g] : t.kinds) {
    // A group of its own (always, by tensor) is moved, not copied.
    auto [it, fresh] = kinds.try_emplace(kind, std::move(g));
    if (fresh) continue;
    ScaleGroup& into = it->second;
    into.stats.merge(g.stats);
    into.hist.merge(g.hist);
    into.tensors += g.tensors;
  }
  rep.bytesRead += t.bytesRead;
  if (!t.kinds.empty()) ++rep.logicalTensors;
}

Result<ScaleReport> scaleStatistics(const Checkpoint& c, ScaleGrouping by, const std::function<bool(uint64_t, uint64_t)>& progress,
                                    std::pair<size_t, size_t> logical) {
  return capture([&]() -> ScaleReport {
    fetchScales(c, logical);  // a remote checkpoint: the scale bytes of these tensors first
    ScaleReport rep;
    const size_t first = logical.first, end = std::min(logical.second, c.logical.size());
    // Tensors are read on all cores and merged in catalog order: the report is the same for any
    // number of threads (a tensor's group by itself is its statistics exactly; a wider group
    // merges its tensors' moments, as regroupScales does). At most 16 a worker wait to be merged.
    auto wanted = [&](size_t k) {
      const LogicalTensor& l = c.logical[first + k];
      return l.weight >= 0 && !c.isCut(l);  // a cut tensor's bytes are not there to read
    };
    const size_t count = end > first ? end - first : 0, window = 16 * size_t(workerCount());
    // Cold, the disk reads the scales of the tensors ahead while these are counted.
    const size_t ahead = kScaleTensorsAheadPerWorker * size_t(workerCount());
    auto readAheadOf = [&](size_t k) {
      if (k < count && wanted(k)) readAheadScales(c, uint32_t(first + k));
    };
    for (size_t k = 0; k < ahead; ++k) readAheadOf(k);
    // Progress counts the bytes of what each tensor's scales are read from (scale_sources.h), which
    // follows the time as a count of tensors does not: a GGUF weight's blocks are read whole.
    std::vector<uint64_t> sourceBytes(progress ? count : 0);
    uint64_t total = 0, done = 0;
    for (size_t k = 0; k < sourceBytes.size(); ++k)
      if (wanted(k)) forEachScaleSource(c, c.logical[first + k], [&](const TensorRecord& t) { sourceBytes[k] += t.bytes; }), total += sourceBytes[k];
    orderedParallelFor(
        count, window,
        [&](size_t k) {
          readAheadOf(k + ahead);
          return wanted(k) ? scalesOfTensor(c, c.logical[first + k]) : TensorScales{};
        },
        [&](size_t k, TensorScales&& t) {
          if (wanted(k)) addTensorScales(c, by, c.logical[first + k], std::move(t), rep);
          if (!progress) return;
          done += sourceBytes[k];
          if ((k % window == window - 1 || k + 1 == count) && !progress(done, total)) fail(ErrorCode::Usage, "cancelled");
        });
    return rep;
  });
}

namespace {

double upperWeightedMedian(std::vector<std::pair<double, uint64_t>>& v) {
  std::sort(v.begin(), v.end());
  uint64_t total = 0, seen = 0;
  for (const auto& p : v) total += p.second;
  for (const auto& p : v)
    if ((seen += p.second) * 2 > total) return p.first;
  return v.empty() ? 0.0 : v.back().first;
}

}  // namespace

RobustSpread robustSpread(std::vector<std::pair<double, uint64_t>> values) {
  RobustSpread s;
  s.median = upperWeightedMedian(values);
  for (auto& p : values) p.first = std::fabs(p.first - s.median);
  s.deviation = 1.4826 * upperWeightedMedian(values);
  return s;
}

bool farFromPeers(double log2Value, const RobustSpread& s) {
  const double d = std::fabs(log2Value - s.median);
  return d >= 3.0 && d > 6.0 * s.deviation;
}

ScaleReport regroupScales(const Checkpoint& c, const ScaleReport& byTensor, ScaleGrouping by) {
  ScaleReport out;
  out.bytesRead = byTensor.bytesRead;
  out.logicalTensors = byTensor.logicalTensors;
  std::unordered_map<std::string_view, uint32_t> logicalOf;
  logicalOf.reserve(c.logical.size());
  for (uint32_t i = 0; i < c.logical.size(); ++i) logicalOf.emplace(c.logical[i].name, i);
  for (const auto& [name, kinds] : byTensor.groups) {
    auto li = logicalOf.find(name);
    if (li == logicalOf.end() || c.logical[li->second].weight < 0) continue;
    const LogicalTensor& l = c.logical[li->second];
    auto& target = out.groups[scaleGroupKey(c, c.tensors[uint32_t(l.weight)], l, by)];
    for (const auto& [kind, g] : kinds) {
      ScaleGroup& t = target[kind];
      t.stats.merge(g.stats);
      t.hist.merge(g.hist);
      t.tensors += g.tensors;
    }
  }
  return out;
}

}  // namespace ws::num
