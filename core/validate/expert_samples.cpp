#include "core/validate/expert_samples.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "core/io/mapped_read_guard.h"
#include "core/numerics/mapped_reads.h"
#include "core/numerics/remote_reads.h"

namespace ws::val {

namespace {

// splitmix64: 64 independent-looking bits from a sample's position, one random sign a direction.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The directions as +-1 floats, position by position: the projection is then a run of
// multiply-adds over 64 contiguous floats, which the compiler vectorizes (a bit test per sign
// cost the pass more than the fingerprints).
const std::vector<float>& directions() {
  static const std::vector<float> table = [] {
    std::vector<float> t(kSampleRows * kSampleCols * kSketchDims);
    for (uint64_t i = 0; i < kSampleRows * kSampleCols; ++i) {
      const uint64_t signs = mix(i);
      for (int k = 0; k < kSketchDims; ++k) t[i * kSketchDims + uint64_t(k)] = (signs >> k & 1) ? 1.0f : -1.0f;
    }
    return t;
  }();
  return table;
}

// sketch[k] += sum over i of x[i] * sign[i][k]: the projection of n sampled values, 8 directions
// an instruction where the CPU has AVX2 (the baseline's 4 made it most of the samples' cost).
__attribute__((target_clones("avx2", "default"))) void project(const float* __restrict x, uint64_t n, const float* __restrict signs, float* __restrict sketch) {
  float acc[kSketchDims] = {};
  for (uint64_t i = 0; i < n; ++i)
    for (int k = 0; k < kSketchDims; ++k) acc[k] += x[i] * signs[i * kSketchDims + uint64_t(k)];
  for (int k = 0; k < kSketchDims; ++k) sketch[k] += acc[k];
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// An expert's projections, by projection name, of one layer.
using Expert = std::map<std::string, const ExpertPrint*>;
std::map<int32_t, std::map<int64_t, Expert>> byLayer(const std::vector<ExpertPrint>& prints) {
  std::map<int32_t, std::map<int64_t, Expert>> out;
  for (const ExpertPrint& p : prints)
    if (!p.sketch.empty()) out[p.layer][p.expert][p.projection] = &p;
  return out;
}

// Decodes one expert projection whole (or two in step), `visit` seeing each chunk of values.
// False when a read failed (a file cut under the pass: WS-I024's).
template <class Visit>
bool decodeWhole(const Checkpoint& c, const ExpertPrint& a, const ExpertPrint* b, Visit visit) {
  auto da = num::makeDecoder(c, a.logical);
  if (!da) return false;
  std::unique_ptr<num::RowDecoder> y;
  if (b) {
    auto db = num::makeDecoder(c, b->logical);
    if (!db || db.value()->rows() * a.slices != da.value()->rows() * b->slices || db.value()->cols() != da.value()->cols()) return false;
    y = std::move(db.value());
  }
  const num::RowDecoder& x = *da.value();
  const uint64_t rowsPer = x.rows() / std::max<uint64_t>(1, a.slices), cols = x.cols();
  const uint64_t chunk = std::max<uint64_t>(1, (uint64_t(1) << 18) / std::max<uint64_t>(1, cols));
  std::vector<float> va(chunk * cols), vb(b ? chunk * cols : 0);
  MappedReadGuard guard;
  try {
    for (uint64_t r = 0; r < rowsPer; r += chunk) {
      const uint64_t n = std::min(chunk, rowsPer - r);
      x.decode(a.slice * rowsPer + r, n, va.data());
      if (b) y->decode(b->slice * rowsPer + r, n, vb.data());
      visit(va.data(), b ? vb.data() : nullptr, n * cols);
    }
    num::checkMappedReads(guard, c, c.logical[a.logical]);
    if (b) num::checkMappedReads(guard, c, c.logical[b->logical]);
  } catch (const CoreError&) {
    return false;
  }
  return true;
}

void fetchCandidates(const Checkpoint& c, const std::set<uint32_t>& logical) {
  if (c.remote && !logical.empty()) num::fetchWhole(c, std::vector<uint32_t>(logical.begin(), logical.end()));
}

}  // namespace

void sampleExpert(const num::RowDecoder& d, uint64_t e, uint64_t experts, num::ExtentScratch& scratch, ExpertPrint& p) {
  const uint64_t rowsPer = d.rows() / std::max<uint64_t>(1, experts), cols = d.cols();
  if (!rowsPer || !cols) return;
  const uint64_t rows = std::min(kSampleRows, rowsPer), stride = std::max<uint64_t>(1, cols / kSampleCols), perRow = std::min(cols, kSampleCols);
  // The first rows, in one call: a decode call's set-up and the pages it maps are most of what a
  // few rows cost, and WS-V013's first window has mapped these pages already.
  float* v = scratch.valuesFor(rows * cols);
  d.decode(e * rowsPer, rows, v);
  float sample[kSampleRows * kSampleCols];
  double squares = 0;
  uint64_t at = 0;
  for (uint64_t i = 0; i < rows; ++i)
    for (uint64_t j = 0; j < perRow; ++j, ++at) {
      const float x = v[i * cols + j * stride];
      if (!std::isfinite(x)) return;
      squares += double(x) * x;
      sample[at] = x;
    }
  float sketch[kSketchDims] = {};
  project(sample, at, directions().data(), sketch);
  p.sketch.assign(sketch, sketch + kSketchDims);
  p.sampleSquares = squares;
  p.sampleCount = at;
  p.valueCount = rowsPer * cols;
}

void judgeNearDuplicateExperts(const Checkpoint& c, const std::vector<ExpertPrint>& prints, Sink& sink) {
  const auto layers = byLayer(prints);
  // Candidates: pairs whose every projection's sketches agree.
  std::vector<std::pair<const Expert*, const Expert*>> candidates;
  std::set<uint32_t> logical;
  for (const auto& [layer, experts] : layers)
    for (auto a = experts.begin(); a != experts.end(); ++a)
      for (auto b = std::next(a); b != experts.end(); ++b) {
        if (a->second.size() != b->second.size()) continue;
        bool near = true;
        for (const auto& [proj, pa] : a->second) {
          const auto pb = b->second.find(proj);
          near = near && pb != b->second.end() && cosine(pa->sketch, pb->second->sketch) >= kSketchCandidate;
        }
        if (!near) continue;
        candidates.push_back({&a->second, &b->second});
        for (const auto& [proj, p] : a->second) logical.insert(p->logical);
        for (const auto& [proj, p] : b->second) logical.insert(p->logical);
      }
  fetchCandidates(c, logical);
  std::map<int32_t, std::vector<std::string>> found;  // by layer: "2 ~ 5 (cosine ...)"
  std::map<int32_t, std::string> tensorOf;
  for (const auto& [a, b] : candidates) {
    double least = 1;
    bool identical = true, read = true;
    std::string figures;
    for (const auto& [proj, pa] : *a) {
      const ExpertPrint* pb = b->at(proj);
      double ab = 0, aa = 0, bb = 0;
      read = read && decodeWhole(c, *pa, pb, [&](const float* x, const float* y, uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) {
          ab += double(x[i]) * y[i], aa += double(x[i]) * x[i], bb += double(y[i]) * y[i];
          identical = identical && x[i] == y[i];
        }
      });
      const double cos = aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
      least = std::min(least, cos);
      figures += (figures.empty() ? "" : ", ") + fixed(cos, 4) + " " + proj;
    }
    if (!read || identical || least < kNearDuplicateCosine) continue;
    const ExpertPrint* first = b->begin()->second;
    found[first->layer].push_back(std::to_string(a->begin()->second->expert) + " and " + std::to_string(first->expert) + " (cosine " + figures + ")");
    if (!tensorOf.count(first->layer)) tensorOf[first->layer] = first->tensor;
  }
  for (const auto& [layer, pairs] : found) {
    std::string list;
    for (size_t i = 0; i < std::min<size_t>(3, pairs.size()); ++i) list += (i ? "; " : "") + pairs[i];
    sink.add("WS-V015", std::to_string(pairs.size()) + (pairs.size() == 1 ? " pair" : " pairs") + " of experts of layer " + std::to_string(layer) +
                            " are near-duplicates, cosine at least " + fixed(kNearDuplicateCosine, 2) + " in every projection: experts " + list + (pairs.size() > 3 ? " ..." : ""),
             tensorOf[layer]);
  }
}

std::vector<ExpertHealthCell> expertHealth(const Checkpoint& c, const std::vector<ExpertPrint>& prints) {
  // Medians by layer, projection and scheme, as WS-V016 takes them.
  std::map<std::tuple<int32_t, std::string, std::string>, double> medians;
  {
    std::map<std::tuple<int32_t, std::string, std::string>, std::vector<double>> rmsOf;
    for (const ExpertPrint& p : prints)
      if (!p.sketch.empty() && p.sampleCount) rmsOf[{p.layer, p.projection, c.logical[p.logical].schemeName}].push_back(std::sqrt(p.sampleSquares / double(p.sampleCount)));
    for (auto& [key, r] : rmsOf) {
      if (r.size() < 3) continue;
      std::nth_element(r.begin(), r.begin() + long(r.size() / 2), r.end());
      medians[key] = r[r.size() / 2];
    }
  }
  std::vector<ExpertHealthCell> out;
  for (const auto& [layer, experts] : byLayer(prints)) {
    // Each expert's sketches as unit vectors, one row of kSketchDims per projection of the layer
    // (empty where the expert lacks it), so a cosine is one dot product: the pairs are E^2.
    std::vector<std::string> projs;
    for (const auto& [expert, projections] : experts)
      for (const auto& [proj, p] : projections)
        if (std::find(projs.begin(), projs.end(), proj) == projs.end()) projs.push_back(proj);
    const size_t P = projs.size(), D = kSketchDims;
    std::vector<int64_t> ids;
    std::vector<float> unit;       // [expert][projection][D]
    std::vector<char> present;     // [expert][projection]
    for (const auto& [expert, projections] : experts) {
      ids.push_back(expert);
      for (const auto& proj : projs) {
        const auto it = projections.find(proj);
        double norm = 0;
        if (it != projections.end())
          for (float v : it->second->sketch) norm += double(v) * v;
        present.push_back(norm > 0);
        for (size_t k = 0; k < D; ++k) unit.push_back(norm > 0 ? float(it->second->sketch[k] / std::sqrt(norm)) : 0.0f);
      }
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      const auto& projections = experts.at(ids[i]);
      ExpertHealthCell h;
      h.layer = layer, h.expert = ids[i], h.normOctaves = NAN, h.nearestCosine = NAN;
      for (const auto& [proj, p] : projections) {
        const auto m = medians.find({p->layer, p->projection, c.logical[p->logical].schemeName});
        if (m == medians.end() || m->second <= 0 || !p->sampleCount) continue;
        const double octaves = std::log2(std::max(std::sqrt(p->sampleSquares / double(p->sampleCount)), 1e-300) / m->second);
        if (!std::isfinite(h.normOctaves) || std::abs(octaves) > std::abs(h.normOctaves)) h.normOctaves = octaves;
      }
      for (size_t j = 0; j < ids.size(); ++j) {
        if (j == i) continue;
        double least = INFINITY;  // over the projections both have
        for (size_t q = 0; q < P; ++q) {
          if (!present[i * P + q] || !present[j * P + q]) continue;
          const float* a = &unit[(i * P + q) * D];
          const float* b = &unit[(j * P + q) * D];
          double dot = 0;
          for (size_t k = 0; k < D; ++k) dot += double(a[k]) * b[k];
          least = std::min(least, dot);
        }
        if (std::isfinite(least) && (!std::isfinite(h.nearestCosine) || least > h.nearestCosine)) h.nearestCosine = least, h.nearest = ids[j];
      }
      out.push_back(h);
    }
  }
  return out;
}

void judgeExpertNormOutliers(const Checkpoint& c, const std::vector<ExpertPrint>& prints, Sink& sink) {
  // The median sampled RMS of each layer's projection, and the experts far from it.
  // Peers: the layer's experts of the same projection stored in the same scheme (an expert whose
  // scale is missing decodes in another, and the structure rules name it).
  std::map<std::tuple<int32_t, std::string, std::string>, std::vector<const ExpertPrint*>> peers;
  auto keyOf = [&](const ExpertPrint* p) { return std::make_tuple(p->layer, p->projection, c.logical[p->logical].schemeName); };
  for (const ExpertPrint& p : prints)
    if (!p.sketch.empty() && p.sampleCount) peers[keyOf(&p)].push_back(&p);
  auto rms = [](const ExpertPrint* p) { return std::sqrt(p->sampleSquares / double(p->sampleCount)); };
  std::vector<std::pair<const ExpertPrint*, double>> candidates;  // with the median RMS
  std::set<uint32_t> logical;
  for (auto& [key, ps] : peers) {
    if (ps.size() < 3) continue;  // a median of two says nothing
    std::vector<double> r;
    for (const ExpertPrint* p : ps) r.push_back(rms(p));
    std::nth_element(r.begin(), r.begin() + long(r.size() / 2), r.end());
    const double median = r[r.size() / 2];
    if (median <= 0) continue;
    for (const ExpertPrint* p : ps)
      if (std::abs(std::log2(std::max(rms(p), 1e-300) / median)) >= kNormOctaves - 0.5)  // a sample's margin; judged exactly below
        candidates.push_back({p, median}), logical.insert(p->logical);
  }
  fetchCandidates(c, logical);
  for (const auto& [p, median] : candidates) {
    double squares = 0;
    if (!decodeWhole(c, *p, nullptr, [&](const float* x, const float*, uint64_t n) {
          for (uint64_t i = 0; i < n; ++i) squares += double(x[i]) * x[i];
        }))
      continue;
    const double norm = std::sqrt(squares), typical = median * std::sqrt(double(p->valueCount));
    const double octaves = std::log2(std::max(norm, 1e-300) / typical);
    if (std::abs(octaves) < kNormOctaves) continue;
    const double ratio = std::exp2(std::abs(octaves));
    char times[32];
    std::snprintf(times, sizeof times, ratio < 1e4 ? "%.1fx" : "%.2gx", ratio);
    sink.add("WS-V016", "expert " + std::to_string(p->expert) + " of layer " + std::to_string(p->layer) + ": the " + p->projection + " projection's Frobenius norm " +
                            fixed(norm, 3) + " is " + times + " " + (octaves > 0 ? "above" : "below") + " the median of the layer's " + std::to_string(peers[keyOf(p)].size()) +
                            " experts (" + fixed(typical, 3) + ", from " + std::to_string(p->sampleCount) + " sampled values each)",
             p->tensor);
  }
}

}  // namespace ws::val
