// GPU tests (plain C++, no Qt, so they build on the GPU machine): every kernel equals the CPU
// reference bit for bit on every tensor of the device corpus (tests/device_corpus.h: real
// writers' checkpoints of every quantized format) and on a checkpoint per scheme; device
// statistics equal the CPU's; a CUDA load's residency equals the planner's, and an allocator that
// takes twice what it is asked for is caught on a multi-GiB load; derived buffers equal the
// test's own references (the file's bytes, the CPU dequantizer); injected allocation failures and
// cancel leave zero live device allocations. Without a device it says so and exits 77, which
// CTest reports as skipped. `tst_gpu --list-fixtures` prints the shared fixtures it needs (what
// scripts/gpu-proof.sh --pack carries) and exits.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/formats/open_checkpoint.h"
#include "core/load/backend_registry.h"
#include "core/load/loader.h"
#include "core/plan/devices.h"
#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"
#include "core/numerics/stats.h"
#include "core/numerics/scale_stats.h"
#include "core/diff/diff.h"
#include "core/synth/synth.h"
#include "tests/derived_reference.h"
#include "tests/device_corpus.h"
#include "tests/test_paths.h"
#include "kernels/cuda_backend.h"

using namespace ws;
namespace fs = std::filesystem;

static int passed = 0, failed = 0;
#define CHECK(cond, ...)                     \
  do {                                       \
    if (cond) {                              \
      ++passed;                              \
    } else {                                 \
      ++failed;                              \
      std::printf("FAIL: " __VA_ARGS__);     \
      std::printf("\n");                     \
    }                                        \
  } while (0)

static std::shared_ptr<const Checkpoint> open(const std::string& p) {
  auto r = openCheckpoint(p);
  if (!r) {
    std::printf("FAIL: cannot open %s: %s\n", p.c_str(), r.error().describe().c_str());
    ++failed;
    return nullptr;
  }
  return r.value();
}

static void kernelsEqualReference(const Checkpoint& c, const std::string& label) {
  uint64_t elements = 0;
  // The CPU's scale statistics, once for the checkpoint (per tensor they would be read again for
  // every tensor: minutes on the large synthetic checkpoints).
  const auto cpu = num::scaleStatistics(c, num::ScaleGrouping::Tensor);
  CHECK(cpu.ok(), "%s: CPU scale statistics", label.c_str());
  for (uint32_t li = 0; li < c.logical.size(); ++li) {
    auto dec = num::makeDecoder(c, li);
    if (!dec) continue;
    const auto& d = *dec.value();
    std::vector<float> want(d.rows() * d.cols());
    d.decode(0, d.rows(), want.data());
    auto got = kernels::dequantizeOnDevice(c, li, 0, d.rows());
    CHECK(got.ok(), "%s %s: %s", label.c_str(), c.logical[li].name.c_str(), got.ok() ? "" : got.error().describe().c_str());
    if (!got.ok()) continue;
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) bad += !num::sameBitsOrNan(got.value()[i], want[i]);
    CHECK(bad == 0, "%s %s (%s): %zu of %zu elements differ", label.c_str(), c.logical[li].name.c_str(), c.logical[li].schemeName.c_str(), bad, want.size());
    elements += want.size();
    // a row range in the middle (an expert's rows for a stacked tensor)
    if (d.rows() >= 4) {
      auto part = kernels::dequantizeOnDevice(c, li, d.rows() / 2, d.rows() / 4);
      CHECK(part.ok() && std::memcmp(part.value().data(), want.data() + (d.rows() / 2) * d.cols(), part.value().size() * 4) == 0, "%s %s: row range",
            label.c_str(), c.logical[li].name.c_str());
    }
    // BF16 output: the F32 value rounded to nearest even, on the device
    auto bf = kernels::dequantizeOnDeviceBf16(c, li, 0, d.rows());
    size_t badBf = 0;
    if (bf.ok())
      for (size_t i = 0; i < want.size(); ++i) badBf += bf.value()[i] != num::toBf16Rne(want[i]);
    CHECK(bf.ok() && badBf == 0, "%s %s: BF16 output (%zu differ)", label.c_str(), c.logical[li].name.c_str(), badBf);
    // scale statistics on the device equal the CPU's per kind (counts and histogram exactly)
    auto dev = kernels::scaleStatsOnDevice(c, li);
    CHECK(dev.ok(), "%s %s: scale statistics on the device", label.c_str(), c.logical[li].name.c_str());
    if (dev.ok() && cpu.ok() && cpu.value().groups.count(c.logical[li].name)) {
      for (const auto& [kind, g] : cpu.value().groups.at(c.logical[li].name)) {
        auto it = dev.value().find(kind);
        CHECK(it != dev.value().end() && it->second.stats.count == g.stats.count && it->second.stats.nan == g.stats.nan &&
                  it->second.stats.min() == g.stats.min() && it->second.stats.max() == g.stats.max() && it->second.histogram.counts == g.hist.counts && it->second.histogram.lo == g.hist.lo,
              "%s %s: scale statistics (%s)", label.c_str(), c.logical[li].name.c_str(), kind.c_str());
      }
    }
    // statistics: counts and histogram exact, moments close
    auto st = kernels::statsOnDevice(c, li);
    num::Stats ref;
    num::Histogram h = num::Histogram::log2Fine();
    ref.add(want.data(), want.size());
    for (float v : want) h.add(v);
    CHECK(st.ok(), "%s %s: stats", label.c_str(), c.logical[li].name.c_str());
    if (st.ok()) {
      const auto& s = st.value().stats;
      CHECK(s.count == ref.count && s.nan == ref.nan && s.inf == ref.inf && s.zero == ref.zero && s.subnormal == ref.subnormal && s.negative == ref.negative,
            "%s %s: stats counts", label.c_str(), c.logical[li].name.c_str());
      CHECK(s.min() == ref.min() && s.max() == ref.max() && s.absmax() == ref.absmax(), "%s %s: min/max", label.c_str(), c.logical[li].name.c_str());
      CHECK(std::fabs(s.mean() - ref.mean()) <= 1e-9 * std::max(1.0, std::fabs(ref.mean())) && std::fabs(s.stddev() - ref.stddev()) <= 1e-9 * std::max(1.0, ref.stddev()),
            "%s %s: mean/std", label.c_str(), c.logical[li].name.c_str());
      CHECK(st.value().histogram.counts == h.counts && st.value().histogram.lo == h.lo && st.value().histogram.below == h.below, "%s %s: histogram", label.c_str(), c.logical[li].name.c_str());
    }
  }
  std::printf("%s: %llu elements compared\n", label.c_str(), (unsigned long long)elements);
}

static void loads(const Checkpoint& c, const std::string& label) {
  for (int ep : {1, 3}) {
    auto placement = plan::makePlacement(plan::PlacementKind::Linear, plan::Remainder::First, ep, c.model.numExperts);
    for (int rank = 0; rank < ep; ++rank) {
      auto dev = kernels::makeCudaBackend(0);
      load::LoadOptions o;
      o.plan.placement = placement.value();
      o.epRank = rank;
      o.plan.deriveFusedGateUp = o.plan.deriveTranspose = o.plan.deriveBf16 = true;
      o.verify = true;  // every uploaded byte read back from the device and compared with the file
      auto r = load::loadCheckpoint(c, *dev.value(), o);
      CHECK(r.ok() && r.value().report.residentDifference == 0, "%s EP%d rank %d: load %s", label.c_str(), ep, rank, r.ok() ? "differs" : r.error().describe().c_str());
      if (!r.ok()) continue;
      const auto& rep = r.value().report;
      CHECK(rep.verifiedBytes == rep.resident, "%s EP%d rank %d: %llu of %llu resident bytes read back equal to the file", label.c_str(), ep, rank,
            (unsigned long long)rep.verifiedBytes, (unsigned long long)rep.resident);
      // The device's free memory against the predicted footprint: the measurement the load issue asks for.
      const auto& m = rep.residency;
      std::printf("%s EP%d rank %d: free memory fell by %lld bytes, predicted %llu (%llu allocations), difference %lld, tolerance %llu\n", label.c_str(), ep, rank,
                  (long long)m.used, (unsigned long long)m.predictedFootprint, (unsigned long long)m.arenas, (long long)m.difference, (unsigned long long)m.tolerance);
      CHECK(m.measured && !m.mismatch, "%s EP%d rank %d: residency mismatch: %s", label.c_str(), ep, rank, load::residencyMismatch(rep).c_str());
      // Derived buffers built on the device equal the test's own references, byte for byte: the
      // file's bytes rearranged, and each BF16 twin the CPU dequantizer's values rounded.
      for (const auto& got : r.value().store->derived()) {
        const wstest::DerivedReference want = wstest::derivedReference(c, got, o);
        std::vector<uint8_t> bytes(got.buffer.bytes);
        auto d = dev.value()->download(got.buffer, 0, bytes.data(), bytes.size());
        CHECK(want.problem.empty() && d.ok() && bytes == want.bytes, "%s EP%d rank %d: derived %s (%s) differs from its reference%s%s", label.c_str(), ep, rank,
              got.name.c_str(), got.kind.c_str(), want.problem.empty() ? "" : ": ", want.problem.c_str());
      }
      r.value().store->release();
      CHECK(dev.value()->liveAllocations() == 0, "%s: live allocations after release", label.c_str());
    }
  }
  // Small arenas, so an injected failure can hit the first, a middle and the last allocation.
  for (uint64_t k : {uint64_t(1), uint64_t(5), uint64_t(12)}) {
    auto dev = kernels::makeCudaBackend(0);
    load::FaultyBackend faulty(*dev.value(), k);
    load::LoadOptions o;
    o.plan.placement = plan::makePlacement(plan::PlacementKind::Linear, plan::Remainder::First, 1, c.model.numExperts).value();
    o.arenaBytes = 256 << 10;
    o.plan.deriveBf16 = true;
    auto r = load::loadCheckpoint(c, faulty, o);
    if (r.ok()) r.value().store->release();  // fewer allocations than k: nothing failed
    CHECK(dev.value()->liveAllocations() == 0, "%s: injected failure %llu leaves %llu live", label.c_str(), (unsigned long long)k,
          (unsigned long long)dev.value()->liveAllocations());
  }
  {
    auto dev = kernels::makeCudaBackend(0);
    std::atomic<bool> cancel{false};
    load::LoadOptions o;
    o.plan.placement = plan::makePlacement(plan::PlacementKind::Linear, plan::Remainder::First, 1, c.model.numExperts).value();
    o.cancel = &cancel;
    o.stagingBytes = 64 << 10;
    o.progress = [&](const char*, uint64_t done, uint64_t total) {
      if (done * 2 > total) cancel = true;
    };
    auto r = load::loadCheckpoint(c, *dev.value(), o);
    CHECK(!r.ok() && dev.value()->liveAllocations() == 0, "%s: cancel leaves allocations", label.c_str());
  }
}

// An allocator that takes twice what it is asked for and says nothing: what a leaking arena or a
// wrong granularity model looks like from outside. The device's free memory then falls by about
// twice the prediction.
class DoublingBackend : public load::ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  Result<load::DeviceBuffer> allocate(uint64_t bytes, const std::string& tag) override {
    auto b = inner_.allocate(2 * bytes, tag);
    if (b) b.value().bytes = bytes;  // the loader sees what it asked for; free() finds the whole allocation by id
    return b;
  }
};

// The residency check can fail where it matters: on a load many times its tolerance (the fixtures
// are all smaller than it), the honest load matches the prediction and the doubled one is a
// mismatch (the test-honesty issue, item 4).
static void residencyCatchesAWastefulAllocator(const Checkpoint& c, const std::string& label) {
  load::LoadOptions o;
  o.plan.placement = plan::makePlacement(plan::PlacementKind::Linear, plan::Remainder::First, 1, c.model.numExperts).value();
  for (bool doubled : {false, true}) {
    auto dev = kernels::makeCudaBackend(0);
    DoublingBackend doubling(*dev.value());
    load::DeviceBackend& backend = doubled ? static_cast<load::DeviceBackend&>(doubling) : *dev.value();
    auto r = load::loadCheckpoint(c, backend, o);
    CHECK(r.ok(), "%s: load %s", label.c_str(), r.ok() ? "" : r.error().describe().c_str());
    if (!r.ok()) continue;
    const auto& m = r.value().report.residency;
    std::printf("%s%s: free memory fell by %lld bytes, predicted %llu, difference %lld, tolerance %llu\n", label.c_str(), doubled ? " (doubled allocations)" : "",
                (long long)m.used, (unsigned long long)m.predictedFootprint, (long long)m.difference, (unsigned long long)m.tolerance);
    CHECK(m.predictedFootprint > 4 * m.tolerance, "%s: %llu bytes predicted, not many times the tolerance: the check could not fail", label.c_str(),
          (unsigned long long)m.predictedFootprint);
    CHECK(m.measured && m.mismatch == doubled, "%s: %s", label.c_str(),
          doubled ? "allocations twice the prediction were not called a mismatch" : load::residencyMismatch(r.value().report).c_str());
    r.value().store->release();
    CHECK(dev.value()->liveAllocations() == 0, "%s: live allocations after release", label.c_str());
  }
}

// weightscope diff on the GPU reports exactly what it reports on the CPU.
static void diffOnDeviceEqualsCpu(const Checkpoint& a, const Checkpoint& b, const std::string& label) {
  diff::DiffOptions onDevice, onCpu;
  onCpu.useDevice = false;
  auto g = diff::diffCheckpoints(a, b, onDevice);
  auto h = diff::diffCheckpoints(a, b, onCpu);
  CHECK(g.ok() && h.ok() && g.value().device != "cpu" && g.value().pairs.size() == h.value().pairs.size(), "%s: diff on %s", label.c_str(),
        g.ok() ? g.value().device.c_str() : "?");
  if (!g.ok() || !h.ok()) return;
  for (size_t i = 0; i < g.value().pairs.size(); ++i) {
    const auto &x = g.value().pairs[i].metrics, &y = h.value().pairs[i].metrics;
    CHECK(x.differing == y.differing && x.nmse == y.nmse && x.cosine == y.cosine && x.maxAbs == y.maxAbs, "%s: %s differs on the GPU", label.c_str(),
          g.value().pairs[i].pair.key.c_str());
  }
}

// The device table's total for this GPU (plan --gpu-mem) is what its driver reports; and what the
// CUDA context takes before any allocation, the default context reserve's measurement, is printed.
static void deviceTableMatchesTheDriver() {
  auto backend = load::makeBackend("cuda:0");
  CHECK(backend.ok(), "cuda:0 backend");
  if (!backend) return;
  // makeCudaBackend reserved the kernels' local memory; its size is part of what the context takes.
  auto local = kernels::reserveKernelLocalMemory(0);
  CHECK(local.ok(), "kernel local memory: %s", local.ok() ? "" : local.error().describe().c_str());
  if (local) std::printf("MEASURED: the decode kernels need %llu bytes of local memory a thread\n", (unsigned long long)local.value());
  const load::DeviceMemory m = backend.value()->memory();
  const std::string name = backend.value()->name();
  std::printf("MEASURED: %s total %llu bytes (%llu MiB), free %llu: %llu MiB taken before any allocation (default context reserve %llu MiB)\n",
              name.c_str(), (unsigned long long)m.total, (unsigned long long)(m.total >> 20), (unsigned long long)m.free,
              (unsigned long long)((m.total - m.free) >> 20), (unsigned long long)(plan::kDefaultContextReserve >> 20));
  auto modelOf = [](std::string_view n) { return std::string(n.substr(0, n.find('-'))); };  // "H200" of "H200-141GB"
  for (const auto& d : plan::deviceTable()) {
    const std::string model = modelOf(d.name);
    if (name.find(model) == std::string::npos) continue;
    size_t sameModel = 0;  // A100-80GB and A100-40GB: the size in the device name decides
    for (const auto& o : plan::deviceTable()) sameModel += modelOf(o.name) == model;
    if (sameModel > 1 && name.find(std::string(d.name.substr(d.name.find('-') + 1))) == std::string::npos) continue;
    CHECK(d.totalMiB == (m.total >> 20), "device table %s: %llu MiB, the driver reports %llu MiB", std::string(d.name).c_str(),
          (unsigned long long)d.totalMiB, (unsigned long long)(m.total >> 20));
    // The engine rules' capability column (WS-E007, WS-E008) against the driver's own attribute.
    const auto cc = kernels::computeCapability(0);
    CHECK(cc.ok() && cc.value() == d.computeCapability, "device table %s: compute capability %d, the driver reports %d", std::string(d.name).c_str(),
          d.computeCapability, cc.ok() ? cc.value() : -1);
  }
}

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list-fixtures") == 0) {  // what a device call must carry
    for (const auto& row : wstest::kDeviceCorpus)
      if (row.carried) std::printf("%.*s\n", int(row.path.size()), row.path.data());
    return 0;
  }
  std::string why;
  if (!kernels::deviceAvailable(0, &why)) {
    std::printf("SKIP: %s\n", why.c_str());
    return 77;
  }
  const std::string fx = std::getenv("WEIGHTSCOPE_FIXTURES") ? std::getenv("WEIGHTSCOPE_FIXTURES") : wstest::configuredFixtures();
  kernels::registerCuda();  // also registers the device dequantizer diff uses
  deviceTableMatchesTheDriver();
  for (const auto& pair : wstest::kDeviceDiffPairs) {
    auto a = open(wstest::trackedData(pair[0])), b = open(wstest::trackedData(pair[1]));
    if (a && b) diffOnDeviceEqualsCpu(*a, *b, std::string(pair[0]) + " vs " + std::string(pair[1]));
  }
  for (const auto& row : wstest::kDeviceCorpus)
    if (auto c = open(row.carried ? fx + "/" + std::string(row.path) : wstest::trackedData(row.path))) {
      kernelsEqualReference(*c, std::string(row.path));
      if (row.load) loads(*c, std::string(row.path));
    }
  // Every scheme of the synthetic writer, at tiny and (with WS_GPU_LARGE=1) at large size.
  const fs::path tmp = fs::temp_directory_path() / ("ws-gpu-" + std::to_string(::getpid()));
  const bool large = std::getenv("WS_GPU_LARGE") != nullptr;
  for (const auto& scheme : synth::schemes())
    for (const char* like : {"deepseek-v3", "gpt-oss", "qwen3-vl-moe"}) {
      synth::Options o;
      o.like = like;
      o.scheme = scheme;
      o.out = (tmp / (std::string(like) + "-" + scheme)).string();
      if (large) {  // odd sizes with edge blocks: hidden 7168 + 96, experts of 2048 + 32 rows
        o.hidden = 2048 + 256;
        o.expertIntermediate = 1536 + 32;
        o.experts = 16;
        o.layers = 2;
      }
      auto w = synth::write(o);
      CHECK(w.ok(), "synth %s %s", like, scheme.c_str());
      if (auto c = open(o.out)) kernelsEqualReference(*c, std::string(like) + " " + scheme);
      fs::remove_all(o.out);
    }
  if (large) {  // 3.2 GiB, sparse: the device memory is taken all the same
    synth::Options o;
    o.like = "deepseek-v3";
    o.scheme = "bf16";
    o.hidden = 4096;
    o.expertIntermediate = 2048;
    o.experts = 32;
    o.layers = 2;
    o.sparse = true;
    o.out = (tmp / "multi-gib").string();
    CHECK(synth::write(o).ok(), "synth the multi-GiB checkpoint");
    if (auto c = open(o.out)) residencyCatchesAWastefulAllocator(*c, "multi-GiB deepseek-v3 bf16");
    fs::remove_all(o.out);
  }
  fs::remove_all(tmp);
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
