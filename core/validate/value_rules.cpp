#include "core/validate/value_rules.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "core/model/naming.h"
#include "core/model/quant_scheme.h"
#include "core/numerics/dequant.h"
#include "core/numerics/mapped_reads.h"
#include "core/numerics/read_ahead.h"
#include "core/numerics/remote_reads.h"
#include "core/numerics/scale_stats.h"
#include "core/util/parallel.h"
#include "core/util/process_io.h"
#include "core/validate/expert_fingerprints.h"
#include "core/validate/expert_samples.h"
#include "core/validate/value_shares.h"

namespace ws::val {

namespace {

// The magnitudes trained weights take: a real BF16 model's sit far inside this range, so a scale
// that implies weights outside it (WS-V010), or a quantized weight that decodes outside it
// (WS-V012), was not written by a working quantizer.
constexpr double kWeightFloor = 1e-6, kWeightCeiling = 1e3;
// WS-V011: an outlier this many octaves from its peers is an error, not a warning.
constexpr double kFarOctaves = 10.0;

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// WS-V010 over one tensor's scales: `factor` (largest code x global scale) turns a scale into the
// largest weight it can produce. The fine log2 histogram counts the scales whose every possible
// value lies outside the range (zeros and subnormals are WS-V004's and WS-V005's, not counted
// here). True when it fired.
bool implausibleScales(const num::ScaleGroup& g, double factor, const std::string& kind, const std::string& tensor, Sink& sink) {
  if (!(factor > 0) || !g.hist.fine) return false;
  uint64_t low = 0, high = 0;
  double smallest = 0;
  for (size_t i = 0; i < g.hist.counts.size(); ++i) {
    if (!g.hist.counts[i] || g.hist.edge(i + 1) <= -126.0) continue;  // zero and subnormal: WS-V004, WS-V005
    const double lo = std::exp2(g.hist.edge(i)) * factor, hi = std::exp2(g.hist.edge(i + 1)) * factor;
    if (hi < kWeightFloor) {
      low += g.hist.counts[i];
      if (!smallest) smallest = lo;
    }
    if (lo > kWeightCeiling) high += g.hist.counts[i];
  }
  if (!low && !high) return false;
  std::string m = std::to_string(low + high) + " of " + std::to_string(g.stats.count) + " " + kind + " values imply weights outside " + sci(kWeightFloor) + ".." +
                  sci(kWeightCeiling) + ":";
  if (high) m += " " + std::to_string(high) + " up to " + kind + " " + sci(g.stats.absmax()) + " (weights up to " + sci(g.stats.absmax() * factor) + ")";
  if (low) m += std::string(high ? ";" : "") + " " + std::to_string(low) + " down to about " + kind + " " + sci(smallest / factor) + " (weights below " + sci(kWeightFloor) + ")";
  sink.add("WS-V010", m, tensor);
  return true;
}

}  // namespace

bool judgeScaleValues(const num::Stats& s, const std::string& kind, const std::string& tensor, bool signedByDesign, bool e8m0, Sink& sink) {
  if (s.nan) sink.add(e8m0 ? "WS-V006" : "WS-V001", std::to_string(s.nan) + " of " + std::to_string(s.count) + " " + kind + " values are NaN", tensor);
  if (s.inf) sink.add("WS-V002", std::to_string(s.inf) + " of " + std::to_string(s.count) + " " + kind + " values are infinite", tensor);
  if (signedByDesign) return s.nan || s.inf;
  if (s.negative) sink.add("WS-V003", std::to_string(s.negative) + " of " + std::to_string(s.count) + " " + kind + " values are negative", tensor);
  if (s.zero) sink.add("WS-V004", std::to_string(s.zero) + " of " + std::to_string(s.count) + " " + kind + " values are zero", tensor);
  if (s.subnormal) sink.add("WS-V005", std::to_string(s.subnormal) + " of " + std::to_string(s.count) + " " + kind + " values are subnormal", tensor);
  return s.nan || s.inf || s.negative || s.zero || s.subnormal;
}

namespace {

// The scale rules over a per-tensor scale report. Fills `flagged` with the logical tensors whose
// scales are reported: the weights they scale are then not reported again (NaN scales make NaN
// weights; zero scales, zero weights).
void judgeScales(const Checkpoint& c, Sink& sink, const num::ScaleReport& rep, std::set<uint32_t>& flagged, std::set<uint32_t>& apart) {
  std::map<std::string, uint32_t> logicalIndex;
  for (uint32_t i = 0; i < c.logical.size(); ++i) logicalIndex[c.logical[i].name] = i;
  struct Peer {
    std::string tensor;
    double centre;
    uint32_t logical;
  };
  std::map<std::string, std::vector<Peer>> peers;
  for (const auto& [lname, kinds] : rep.groups) {
    auto li = logicalIndex.find(lname);
    if (li == logicalIndex.end()) continue;
    const LogicalTensor& l = c.logical[li->second];
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    for (const auto& [kind, g] : kinds) {
      // The stored tensor the scales come from (GGUF: the weight, whose blocks hold them).
      std::string tensor = w.name;
      for (uint32_t mi : l.members)
        if (componentName(c.tensors[mi].component) == kind) tensor = c.tensors[mi].name;
      const bool signedByDesign = schemeInfo(l.scheme).signedScales;
      const auto& s = g.stats;
      if (judgeScaleValues(s, kind, tensor, signedByDesign, scalesAreE8M0(l.scheme, w.dtype), sink)) flagged.insert(li->second);
      if (signedByDesign) {
        if (kind == "d" || kind == "scale") peers[l.schemeName + "|" + std::string(projectionName(w.projection)) + "|" + std::string(roleName(w.role))].push_back({tensor, num::typicalLog2(g.hist), li->second});
        continue;  // GGUF d and MLX scales may be negative, sub-block mins are signed by design
      }
      if (kind == "scale") {
        // The global scale multiplies (ModelOpt) or divides (compressed-tensors) the block scales.
        auto global = kinds.find("global_scale");
        const double gs = global == kinds.end() ? 1.0 : global->second.stats.absmax();
        const double factor = largestCodeOf(l.scheme, w.dtype) * (schemeInfo(l.scheme).global == GlobalScale::Divides ? (gs > 0 ? 1.0 / gs : 0.0) : gs);
        if (!s.nan && !s.inf && implausibleScales(g, factor, kind, tensor, sink)) flagged.insert(li->second);
      }
      if (kind == "scale")
        peers[l.schemeName + "|" + std::string(projectionName(w.projection)) + "|" + std::string(roleName(w.role))].push_back({tensor, num::typicalLog2(g.hist), li->second});
    }
  }
  // Outliers: a tensor's typical scale (geometric mean) against its peers' (num::farFromPeers).
  for (auto& [key, ps] : peers) {
    if (ps.size() < 4) continue;
    std::vector<std::pair<double, uint64_t>> v;
    for (const auto& p : ps)
      if (std::isfinite(p.centre)) v.push_back({p.centre, 1});
    if (v.size() < 4) continue;
    const num::RobustSpread spread = num::robustSpread(std::move(v));
    for (const auto& p : ps) {
      if (!std::isfinite(p.centre) || flagged.count(p.logical) || !num::farFromPeers(p.centre, spread)) continue;
      const bool far = std::fabs(p.centre - spread.median) >= kFarOctaves;
      sink.add(far ? "WS-V011" : "WS-V007",
               "typical scale 2^" + std::to_string(int(std::lround(p.centre))) + " against 2^" + std::to_string(int(std::lround(spread.median))) + " for its " +
                   std::to_string(ps.size()) + " peers (" + key.substr(0, key.find('|')) + ")",
               p.tensor);
      if (far) flagged.insert(p.logical);  // its weights are wrong because its scales are
      apart.insert(p.logical);
    }
  }
}

// Which of the weight rules run; none: the pass reads only scales.
struct WeightRules {
  bool nan = false, placeholder = false, implausible = false, duplicates = false, nearDuplicates = false, normOutliers = false;
  explicit WeightRules(const ValidateOptions& opt)
      : nan(ruleEnabled(opt, "WS-V008")),
        placeholder(ruleEnabled(opt, "WS-V009")),
        implausible(ruleEnabled(opt, "WS-V012")),
        duplicates(ruleEnabled(opt, "WS-V013")),
        nearDuplicates(ruleEnabled(opt, "WS-V015")),
        normOutliers(ruleEnabled(opt, "WS-V016")) {}
  bool samples() const { return nearDuplicates || normOutliers; }
  bool experts() const { return duplicates || samples(); }
  bool any() const { return nan || placeholder || implausible || experts(); }
};

// A read that failed during the pass (a file cut short or damaged after it was opened): WS-I024
// names the file, offset and tensor, and the pass goes on with the other tensors.
Finding readFailure(const Error& e, const std::string& tensor, const char* what) {
  Finding f = makeFinding("WS-I024", std::string(what) + " could not be read: " + e.message, e.tensor.empty() ? tensor : e.tensor, e.file);
  f.offset = e.offset;
  return f;
}

// NaN/Inf weights (WS-V008), placeholder experts (WS-V009) and implausible magnitudes (WS-V012)
// of logical tensor `li`, from the extremes of its values; each routed expert's fingerprint
// (WS-V013, judged over all tensors at the end) into `prints`, but a placeholder's: zeroed
// experts are alike by the thousand, and WS-V009 names them. A tensor that cannot be decoded is
// skipped: the shape rules say why. Returns the error of a read that failed; what it added to
// `sink` by then is the caller's to drop.
std::optional<Error> judgeWeights(const Checkpoint& c, uint32_t li, const WeightRules& want, num::ExtentScratch& scratch, num::ByteCounter& counter,
                                  num::ByteCounter& windows, Sink& sink, std::vector<ExpertPrint>& prints) {
  const LogicalTensor& l = c.logical[li];
  const TensorRecord& w = c.tensors[uint32_t(l.weight)];
  auto dec = num::makeDecoder(c, li);
  if (!dec) return std::nullopt;
  dec.value()->setCounter(&counter);
  const auto& d = *dec.value();
  const bool routed = w.role == Role::RoutedExpert || (w.role == Role::Mtp && (w.expert >= 0 || w.layout != Layout::None));
  // Experts of a fused/stacked tensor are judged one by one.
  const uint64_t experts = routed && w.expert < 0 && d.shape().size() == 3 ? d.shape()[0] : 1;
  const uint64_t rowsPer = d.rows() / std::max<uint64_t>(1, experts);
  // Rows a call: a decoding extent() needs chunk * cols floats of scratch.
  const uint64_t chunk = std::max<uint64_t>(1, (uint64_t(1) << 18) / std::max<uint64_t>(1, d.cols()));
  uint64_t nonFinite = 0;
  bool placeholder = false;
  num::Extent all;  // all the rules below ask of the values
  // The decoders that cannot tell extremes from codes read through the mapping: such reads
  // survive a file cut short under them, and the check below fails them.
  MappedReadGuard guard;
  try {
    for (uint64_t e = 0; e < experts; ++e) {
      num::Extent s;
      for (uint64_t r = 0; r < rowsPer; r += chunk) d.extent(e * rowsPer + r, std::min(chunk, rowsPer - r), s, scratch);
      nonFinite += s.nan + s.inf;
      all.merge(s);
      const bool alike = s.count > 1 && !s.nan && !s.inf && s.min() == s.max();
      const int64_t expert = experts > 1 ? int64_t(e) : w.expert;
      if (want.experts() && routed && !alike && expert >= 0) {
        const auto h = want.duplicates ? fingerprintExpert(c, l, e, experts, false, &windows) : std::optional<uint64_t>(0);
        if (h) {
          ExpertPrint p;
          p.layer = w.layer, p.expert = expert, p.projection = std::string(projectionName(w.projection)), p.tensor = w.name;
          p.logical = li, p.slice = e, p.slices = experts, p.hash = *h;
          prints.push_back(std::move(p));
        }
      }
      if (want.placeholder && routed && alike) {
        placeholder = true;
        sink.add("WS-V009", (experts > 1 ? "expert " + std::to_string(e) + ": " : std::string{}) + "all " + std::to_string(s.count) + " values are " +
                                (s.max() == 0 ? std::string("zero") : "the constant " + std::to_string(s.max())),
                 w.name);
      }
    }
    // The samples of WS-V015 / WS-V016 re-read values the pass has counted: not counted again.
    if (want.samples()) {
      dec.value()->setCounter(nullptr);
      for (ExpertPrint& p : prints) sampleExpert(d, p.slice, experts, scratch, p);  // this tensor's prints only
    }
    num::checkMappedReads(guard, c, l);
  } catch (const CoreError& e) {
    return e.error();
  }
  if (want.nan && nonFinite) sink.add("WS-V008", std::to_string(nonFinite) + " values are NaN or infinite", w.name);
  // A quantized weight that decodes to ~0 everywhere, or to beyond any trained weight (NaN and
  // Inf are WS-V008's; a placeholder expert is WS-V009's).
  if (want.implausible && !nonFinite && !placeholder && schemeInfo(l.scheme).quantized && all.count &&
      (all.absmax() < kWeightFloor || all.absmax() > kWeightCeiling))
    sink.add("WS-V012", "dequantized values reach at most " + sci(all.absmax()) + " in magnitude (trained weights: " + sci(kWeightFloor) + ".." + sci(kWeightCeiling) + ")",
             w.name);
  return std::nullopt;
}

// One logical tensor's part of the pass.
struct TensorRead {
  num::TensorScales scales;
  std::optional<Error> scaleError, weightError;
  std::vector<Finding> weightFindings;
  std::vector<ExpertPrint> prints;
};

// What this rank's share of the pass read.
struct SharePass {
  Result<num::ScaleReport> scales = num::ScaleReport{};  // per tensor, or the first failed read in catalog order
  std::vector<std::pair<uint32_t, std::vector<Finding>>> weightFindings;  // by logical tensor, catalog order
  std::vector<Finding> readFailures;  // WS-I024, catalog order
  std::vector<ExpertPrint> prints;    // WS-V013's, of the tensors judged whole
  uint64_t weightBytes = 0;
  uint64_t fingerprintBytes = 0;      // WS-V013's windows, read again apart from the weights
  int64_t kernelBytes = -1;  // the kernel's count of the pass's reads (process_io.h), -1: unknown
  bool cancelled = false;
};

// Reads this rank's share of the logical tensors: each tensor's scales, then (when a weight rule
// runs) its weights, by the same worker. The scale tensors sit beside their weights in the files,
// so a cold scan reads the files once and in order; reading every scale first cost a second,
// scattered pass (docs/benchmarks.md). Results are merged in catalog order: the report is the
// same for any number of threads or ranks.
SharePass readShare(const Checkpoint& c, const ValidateOptions& opt, const WeightRules& want) {
  // Progress and shares in bytes: with the weights, every member; scales alone, the scale tensors
  // (for GGUF, the blocks whose headers hold them).
  std::vector<uint64_t> bytes(c.logical.size(), 0);
  for (size_t i = 0; i < c.logical.size(); ++i) {
    const LogicalTensor& l = c.logical[i];
    if (l.weight < 0 || c.isCut(l)) continue;  // a cut tensor's bytes are not there to read
    const TensorRecord& w = c.tensors[uint32_t(l.weight)];
    bytes[i] = want.any() ? l.bytes : w.dtype->isBlockQuant() ? w.bytes : l.scaleBytes;
  }
  const auto [first, end] = shareOf(opt, bytes);
  std::vector<uint32_t> work;
  uint64_t total = 0;
  for (size_t i = first; i < end; ++i)
    if (c.logical[i].weight >= 0 && !c.isCut(c.logical[i])) work.push_back(uint32_t(i)), total += bytes[i];
  // A remote checkpoint: this share's bytes, and no other rank's.
  if (want.any()) num::fetchWhole(c, work);
  else num::fetchScales(c, {first, end});
  std::vector<TensorRead> reads(work.size());
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0};
  std::atomic<bool> cancelled{false};
  num::ByteCounter counter, windows;  // the weights, read once; WS-V013's windows, read again
  const unsigned n = opt.threads ? opt.threads : workerCount();
  // Read ahead: a cold scan reads the next tensors while these are judged. Twice the workers'
  // tensors, whole, when their weights are judged; the scales alone of more tensors when only the
  // scale rules are (advising whole tensors would read every weight as well).
  const size_t ahead = want.any() ? 2 * size_t(n) : num::kScaleTensorsAheadPerWorker * size_t(n);
  auto readAheadOf = [&](size_t k) {
    if (k >= work.size()) return;
    if (want.any()) num::readAhead(c, work[k]);
    else num::readAheadScales(c, work[k]);
  };
  for (size_t k = 0; k < ahead; ++k) readAheadOf(k);
  const char* stage = want.any() ? "values" : "scales";
  // The workers' own reads by the kernel's count (process_io.h); unknown if any worker cannot say.
  std::atomic<uint64_t> kernelBytes{0};
  std::atomic<bool> kernelUnknown{false};
  auto worker = [&] {
    // Only where the report shows it (--distributed): the meter's reads of /proc count too.
    std::optional<SyscallReadMeter> meter;
    if (opt.comm) meter.emplace();
    num::ExtentScratch scratch;
    scratch.pread = true;
    for (size_t k; !cancelled && (k = next.fetch_add(1)) < work.size();) {
      readAheadOf(k + ahead);
      const uint32_t li = work[k];
      try {
        reads[k].scales = num::scalesOfTensor(c, c.logical[li], want.any() ? &scratch.kept : nullptr);  // kept for judgeWeights
      } catch (const CoreError& e) {
        reads[k].scaleError = e.error();
      }
      if (want.any()) {
        Sink sink{opt, reads[k].weightFindings};
        reads[k].weightError = judgeWeights(c, li, want, scratch, counter, windows, sink, reads[k].prints);
        if (reads[k].weightError) reads[k].weightFindings.clear(), reads[k].prints.clear();  // a tensor is judged whole or not at all
      }
      done += bytes[li];
      if (opt.progress && !opt.progress(stage, done.load(), total)) cancelled = true;
    }
    if (!meter) return;
    if (const auto read = meter->bytesSinceStart()) kernelBytes += *read;
    else kernelUnknown = true;
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  SharePass out;
  out.kernelBytes = kernelUnknown ? -1 : int64_t(kernelBytes.load());
  out.cancelled = cancelled;
  out.weightBytes = counter.bytes.load();
  out.fingerprintBytes = windows.bytes.load();
  for (size_t k = 0; k < work.size(); ++k) {
    TensorRead& r = reads[k];
    const std::string& name = c.tensors[uint32_t(c.logical[work[k]].weight)].name;
    // A remote checkpoint's bytes come from the fetch before the pass: a failure there leaves
    // nothing to judge (valueRules throws it). A local read that failed leaves this tensor out.
    if (r.scaleError && r.scaleError->code == ErrorCode::Remote && out.scales) out.scales = *r.scaleError;
    else if (r.scaleError) out.readFailures.push_back(readFailure(*r.scaleError, name, "scales"));
    else if (out.scales) num::addTensorScales(c, num::ScaleGrouping::Tensor, c.logical[work[k]], std::move(r.scales), out.scales.value());
    if (r.weightError && !r.scaleError) out.readFailures.push_back(readFailure(*r.weightError, name, "weights"));  // one report a cut
    if (!r.weightFindings.empty()) out.weightFindings.emplace_back(work[k], std::move(r.weightFindings));
    out.prints.insert(out.prints.end(), r.prints.begin(), r.prints.end());
    r = {};
  }
  return out;
}

}  // namespace

void valueRules(const Checkpoint& c, Sink& sink, const ValidateOptions& opt, ValidationReport& rep) {
  const WeightRules want(opt);
  SharePass mine = readShare(c, opt, want);
  // Distributed: every rank's scale statistics, so each rank judges all tensors alike below; then
  // the weight findings, which every rank filters by the same flagged set first.
  std::vector<uint64_t> scaleByRank;
  Result<num::ScaleReport> scales = opt.comm ? gatherScaleShares(*opt.comm, mine.scales, scaleByRank) : std::move(mine.scales);
  std::set<uint32_t> flagged, apart;  // scales reported wrong; scales reported apart from their peers'
  if (scales) judgeScales(c, sink, scales.value(), flagged, apart);
  ValueShare weights{std::move(mine.readFailures), mine.weightBytes, mine.cancelled, {}, mine.kernelBytes, {}, std::move(mine.prints), mine.fingerprintBytes, {}};
  for (auto& [li, found] : mine.weightFindings)
    if (!flagged.count(li)) weights.findings.insert(weights.findings.end(), found.begin(), found.end());
  if (opt.comm) weights = gatherValueShares(*opt.comm, weights);
  if (weights.cancelled) fail(ErrorCode::Usage, "cancelled");
  if (!scales) throw CoreError(scales.error());  // a remote checkpoint's scales could not be fetched: nothing to judge
  for (const Finding& f : weights.findings) sink.add(f);
  if (want.samples()) {
    // A weight whose scales were reported wrong or apart from their peers' is not judged again by
    // its values (as WS-V012): its norm stands apart because its scales do.
    std::vector<ExpertPrint> sampled;
    for (const ExpertPrint& p : weights.prints)
      if (!flagged.count(p.logical) && !apart.count(p.logical)) sampled.push_back(p);
    if (want.nearDuplicates) judgeNearDuplicateExperts(c, sampled, sink);
    if (want.normOutliers) judgeExpertNormOutliers(c, sampled, sink);
    rep.expertHealth = expertHealth(c, sampled);
  }
  if (want.duplicates) judgeDuplicateExperts(c, std::move(weights.prints), sink);
  rep.scalesByLayer = num::regroupScales(c, scales.value(), num::ScaleGrouping::Layer);
  rep.bytesReadByFamily["values (scales)"] = scales.value().bytesRead;
  rep.bytesReadByFamily["values (weights)"] = weights.bytesRead;
  if (want.duplicates) rep.bytesReadByFamily["values (expert fingerprints)"] = weights.fingerprintBytes;
  if (opt.comm) {
    rep.bytesReadByRank = {{"values (scales)", scaleByRank}, {"values (weights)", want.any() ? weights.bytesByRank : std::vector<uint64_t>{}}};
    if (want.duplicates) rep.bytesReadByRank["values (expert fingerprints)"] = weights.fingerprintBytesByRank;
    rep.kernelBytesReadByRank = weights.kernelBytesByRank;
  }
}

}  // namespace ws::val
