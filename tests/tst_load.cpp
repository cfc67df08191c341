// The full load on the host backend: the bytes read equal the planner's prediction, the bytes on
// the "device" equal the file's, a few arenas instead of one allocation per tensor, an allocator
// that rounds otherwise than it claims turns into a residency mismatch, failures and cancel leave
// nothing allocated, the OOM guard refuses, derived buffers equal their CPU references.
#include <QtTest>

#include <atomic>
#include <set>

#include <cmath>
#include <cstring>
#include <fstream>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/load/loader.h"
#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"
#include "core/plan/derived_buffers.h"
#include "core/synth/synth.h"
#include "corpus_support.h"
#include "derived_reference.h"
#include "device_corpus.h"
#include "test_support.h"

using namespace ws;
using wstest::expectedCopy;
using wstest::fileBytes;

namespace {

load::LoadOptions options(const Checkpoint& c, int ep, int rank) {
  load::LoadOptions o;
  auto p = plan::makePlacement(plan::PlacementKind::Linear, plan::Remainder::First, ep, c.model.numExperts);
  if (!p) throw std::runtime_error(p.error().describe());
  o.plan.placement = p.value();
  o.epRank = rank;
  o.stagingBytes = 64 << 10;  // small, so tensors span several chunks and readers interleave
  return o;
}

// A host "device" that flips one bit of the upload that covers a chosen byte of its first
// allocation (the tensors' arena): what --verify exists to catch (a bad copy, a wrong offset).
class CorruptingBackend : public load::HostBackend {
 public:
  explicit CorruptingBackend(uint64_t byte) : byte_(byte) {}
  Result<load::DeviceBuffer> allocate(uint64_t bytes, const std::string& tag) override {
    auto b = HostBackend::allocate(bytes, tag);
    if (b && !first_) first_ = static_cast<uint8_t*>(b.value().ptr);
    return b;
  }
  Result<bool> upload(const load::DeviceBuffer& b, uint64_t offset, const void* src, uint64_t bytes, int stream) override {
    auto r = HostBackend::upload(b, offset, src, bytes, stream);
    uint8_t* target = first_ + byte_;
    uint8_t* from = static_cast<uint8_t*>(b.ptr) + offset;
    if (r && target >= from && target < from + bytes) *target ^= 0x10;
    return r;
  }

 private:
  uint64_t byte_;
  uint8_t* first_ = nullptr;
};

// A host "device" whose allocator takes 2 MiB per allocation while it tells the planner 256 bytes:
// what a wrong granularity model, or an allocator that pads, looks like from the outside.
class PaddingBackend : public load::HostBackend {
 public:
  PaddingBackend() : HostBackend(UINT64_MAX / 2, 4, uint64_t(2) << 20) {}
  uint64_t granularity() const override { return 256; }
};

}  // namespace

class TstLoad : public QObject {
  Q_OBJECT
 private slots:
  void everyFixtureLoadsAsPredicted_data() {
    QTest::addColumn<QString>("rel");
    QTest::addColumn<int>("ep");
    for (const char* p : {"hf/qwen3_moe", "hf/qwen3_moe_fp8", "hf/deepseek_v3", "hf/mixtral", "hf/qwen3_vl_moe", "gguf/tiny-qwen3moe-kquants.gguf",
                          "gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf"})
      for (int ep : {1, 3}) QTest::newRow((std::string(p) + " EP" + std::to_string(ep)).c_str()) << QString(p) << ep;
  }

  void everyFixtureLoadsAsPredicted() {
    QFETCH(QString, rel);
    QFETCH(int, ep);
    auto c = wstest::openOrFail(wstest::fixture(rel.toStdString()));
    for (int rank = 0; rank < ep; ++rank) {
      load::HostBackend host;
      auto r = load::loadCheckpoint(*c, host, options(*c, ep, rank));
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
      const auto& rep = r.value().report;
      QCOMPARE(rep.resident, rep.predicted.resident);
      QCOMPARE(rep.residentDifference, int64_t(0));
      for (int k = 0; k < plan::kCategories; ++k) QCOMPARE(rep.bytes[size_t(k)], rep.predicted.bytes[size_t(k)]);
      // One arena for all of the rank's tensors, not one allocation per tensor; the stand-in's
      // bookkeeping fell by exactly the predicted footprint, and it does not call that measured.
      QCOMPARE(host.liveAllocations(), uint64_t(1));
      QCOMPARE(rep.residency.arenas, uint64_t(1));
      QCOMPARE(host.liveBytes(), rep.residency.reserved);
      QVERIFY(rep.residency.reserved >= rep.resident && rep.residency.slack == rep.residency.reserved - rep.resident);
      QCOMPARE(rep.residency.used, int64_t(rep.residency.predictedFootprint));
      QVERIFY(!rep.residency.measured && !rep.residency.mismatch);
      QVERIFY(load::residencyMismatch(rep).empty());
      for (const auto& t : r.value().store->tensors()) QCOMPARE(reinterpret_cast<uintptr_t>(t.buffer.ptr) % load::kArenaAlignment, uintptr_t(0));
      // The bytes on the "device" are the file's bytes: whole tensors, or the rank's experts' slices.
      const auto o = options(*c, ep, rank);
      for (const auto& t : r.value().store->tensors()) {
        const auto want = expectedCopy(*c, *c->find(t.name), o);
        QCOMPARE(t.buffer.bytes, uint64_t(want.size()));
        QVERIFY2(std::memcmp(t.buffer.ptr, want.data(), want.size()) == 0, t.name.c_str());
      }
      r.value().store->release();
      QCOMPARE(host.liveAllocations(), uint64_t(0));
    }
  }

  void fusedSlicesAreTheRanksExperts() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_vl_moe"));
    load::HostBackend host;
    auto r = load::loadCheckpoint(*c, host, options(*c, 4, 2));  // experts 4 and 5
    QVERIFY(r.ok());
    const auto* t = r.value().store->find("model.language_model.layers.1.mlp.experts.down_proj");
    const TensorRecord* rec = c->find(t->name);
    const uint64_t per = rec->bytes / 8;
    QCOMPARE(t->buffer.bytes, 2 * per);
    QVERIFY(std::memcmp(t->buffer.ptr, fileBytes(*c, *rec) + 4 * per, 2 * per) == 0);
  }

  // Small arenas (64 KiB) so there are many allocations to fail, derived buffers included: a
  // failure at any of them, first to last, leaves nothing allocated and names a tensor.
  void injectedFailuresLeaveNothing() {
    auto c = wstest::openOrFail(wstest::fixture("hf/deepseek_v3"));
    auto o = options(*c, 1, 0);
    o.arenaBytes = 64 << 10;
    o.plan.deriveBf16 = o.plan.deriveFusedGateUp = true;
    load::HostBackend probe;
    auto whole = load::loadCheckpoint(*c, probe, o);
    QVERIFY2(whole.ok(), whole.ok() ? "" : whole.error().describe().c_str());
    const uint64_t allocations = whole.value().report.residency.arenas;
    QVERIFY(allocations > 8);
    whole.value().store->release();
    for (uint64_t k : {uint64_t(1), uint64_t(2), allocations / 2, allocations - 1, allocations}) {
      load::HostBackend host;
      load::FaultyBackend faulty(host, k);
      auto r = load::loadCheckpoint(*c, faulty, o);
      QVERIFY(!r.ok());
      const QString msg = QString::fromStdString(r.error().describe());
      QVERIFY2(msg.contains("injected allocation failure") && !r.error().tensor.empty(), qPrintable(msg));
      QCOMPARE(host.liveAllocations(), uint64_t(0));
      QCOMPARE(host.liveBytes(), uint64_t(0));
    }
  }

  // The host stand-in's memory: zeros uploaded onto unwritten memory take no pages (a sparse
  // checkpoint's holes), anything else is written - zeros over earlier data included.
  void hostStandInSkipsOnlyZerosOntoZeros() {
    load::HostBackend host;
    const uint64_t size = uint64_t(64) << 20, page = uint64_t(::sysconf(_SC_PAGESIZE));
    auto rss = [&] {  // resident pages of this process (/proc/self/statm, second field)
      std::ifstream in("/proc/self/statm");
      uint64_t total = 0, resident = 0;
      in >> total >> resident;
      return resident * page;
    };
    std::vector<uint8_t> zeros(size, 0), data(page, 0x5A);
    auto b = host.allocate(size, "t");
    QVERIFY(b.ok());
    const uint64_t before = rss();
    QVERIFY(host.upload(b.value(), 0, zeros.data(), size, 0).ok());
    QVERIFY2(rss() < before + size / 8, qPrintable(QString("resident grew by %1 bytes").arg(rss() - before)));
    QVERIFY(host.upload(b.value(), 3 * page, data.data(), page, 0).ok());
    QVERIFY(host.upload(b.value(), 3 * page, zeros.data(), page, 0).ok());  // zeros over data: written
    std::vector<uint8_t> back(size, 1);
    QVERIFY(host.download(b.value(), 0, back.data(), size).ok());
    QVERIFY(back == zeros);
    host.free(b.value());
  }

  // The arena layout itself: in order, each buffer aligned, an arena closed when the next buffer
  // would overflow it, a larger buffer alone in its own, empty buffers in none.
  void arenaLayout() {
    const auto l = load::layoutArenas({100, 0, 300, 1000, 50}, 256, 600);
    QCOMPARE(l.arenaBytes, (std::vector<uint64_t>{556, 1000, 50}));
    QCOMPARE(l.places[0].offset, uint64_t(0));
    QCOMPARE(l.places[1].arena, load::ArenaLayout::kNoArena);
    QCOMPARE(l.places[2].offset, uint64_t(256));
    QCOMPARE(l.places[3].arena, 1u);
    QCOMPARE(l.places[4].arena, 2u);
    QCOMPARE(l.payload, uint64_t(1450));
    QCOMPARE(l.slack(), uint64_t(156));
    QCOMPARE(l.footprint(512), uint64_t(1024 + 1024 + 512));
  }

  // An allocator that takes more than it said it would: the free memory falls by more than the
  // predicted footprint, and the load says so (WS-L002's message); told the truth, it agrees.
  void residencyMismatchWhenTheAllocatorPads() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    auto o = options(*c, 1, 0);
    o.arenaBytes = 1 << 20;  // several arenas, each padded to 2 MiB
    PaddingBackend padding;
    auto r = load::loadCheckpoint(*c, padding, o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
    const auto& m = r.value().report.residency;
    QVERIFY(m.arenas > 2);
    QVERIFY(m.mismatch);
    QVERIFY(m.predictedFootprint >= m.reserved && m.predictedFootprint < m.reserved + m.arenas * 256);  // as laid out, to 256 bytes
    QCOMPARE(m.used, int64_t(m.arenas * (uint64_t(2) << 20)));
    QVERIFY(QString::fromStdString(load::residencyMismatch(r.value().report)).contains("free memory on the device fell by"));
    QCOMPARE(r.value().report.residentDifference, int64_t(0));  // the bytes read were right all along
    load::HostBackend honest(UINT64_MAX / 2, 4, uint64_t(2) << 20);  // the same padding, declared
    auto r2 = load::loadCheckpoint(*c, honest, o);
    QVERIFY(r2.ok());
    QVERIFY(!r2.value().report.residency.mismatch);
    QCOMPARE(r2.value().report.residency.predictedFootprint, r2.value().report.residency.arenas * (uint64_t(2) << 20));
  }

  // --defer names what a rank would load: another rank's expert is not this rank's deferral.
  void deferOnlyWhatTheRankHolds() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    for (int rank = 0; rank < 2; ++rank) {
      load::HostBackend host;
      auto o = options(*c, 2, rank);
      o.plan.defer = {"*.experts.0.*"};
      auto r = load::loadCheckpoint(*c, host, o);
      QVERIFY(r.ok());
      uint64_t bytes = 0;
      for (const auto& t : c->tensors)
        if (t.expert == 0 && t.role == Role::RoutedExpert) bytes += t.bytes;
      const auto& deferred = r.value().store->deferred();
      QCOMPARE(deferred.empty(), rank == 1);  // linear placement: expert 0 is rank 0's
      QCOMPARE(r.value().report.bytes[plan::Deferred], rank == 0 ? bytes : 0);
      QCOMPARE(r.value().report.residency.mismatch, false);
    }
  }

  // Whether the filesystem holding `path` drops a file's pages when told to: read the file, advise
  // POSIX_FADV_DONTNEED, and count with mincore what stays. tmpfs, and some overlay and network
  // filesystems, keep every page whatever they are told; there the eviction cannot be observed.
  static bool filesystemDropsPages(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::vector<char> buf(1 << 20);
    off_t size = 0;
    for (ssize_t n; (n = ::pread(fd, buf.data(), buf.size(), size)) > 0;) size += n;
    ::posix_fadvise(fd, 0, size, POSIX_FADV_DONTNEED);
    void* m = size ? ::mmap(nullptr, size_t(size), PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    ::close(fd);
    if (m == MAP_FAILED) return false;
    const size_t page = size_t(::sysconf(_SC_PAGESIZE)), pages = (size_t(size) + page - 1) / page;
    std::vector<unsigned char> resident(pages);
    size_t kept = 0;
    if (::mincore(m, size_t(size), resident.data()) == 0)
      for (unsigned char r : resident) kept += r & 1;
    ::munmap(m, size_t(size));
    return kept * 4 < pages;
  }

  // --evict-page-cache: the pages of the loaded ranges are dropped as they are read, and mincore
  // (on a fresh mapping, after the load) finds few of them left; without it nothing is claimed.
  void pageCacheEviction() {
    auto c = wstest::openOrFail(wstest::fixture("hf/mixtral"));
    if (!filesystemDropsPages(c->files.front().path))
      QSKIP(qPrintable(QString("%1: this filesystem keeps pages after POSIX_FADV_DONTNEED").arg(QString::fromStdString(c->files.front().path))));
    load::HostBackend host;
    auto o = options(*c, 1, 0);
    auto kept = load::loadCheckpoint(*c, host, o);
    QVERIFY(kept.ok() && !kept.value().report.pageCache.checked);
    kept.value().store->release();
    o.evictPageCache = true;
    auto r = load::loadCheckpoint(*c, host, o);
    QVERIFY(r.ok());
    const auto& pc = r.value().report.pageCache;
    QVERIFY(pc.checked);
    QVERIFY(pc.bytes >= r.value().report.resident);
    QVERIFY2(pc.cached * 4 < pc.bytes, qPrintable(QString("%1 of %2 bytes still cached").arg(pc.cached).arg(pc.bytes)));
  }

  // --verify reads every uploaded byte back: all of them on an honest backend (sliced EP ranks
  // included), and a single flipped bit is caught, named by tensor and file offset.
  void verifyReadsBackEveryByte() {
    auto c = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));  // stacked experts: sliced per rank
    for (int rank = 0; rank < 3; ++rank) {
      load::HostBackend host;
      auto o = options(*c, 3, rank);
      o.verify = true;
      auto r = load::loadCheckpoint(*c, host, o);
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
      QVERIFY(r.value().report.resident > 0);
      QCOMPARE(r.value().report.verifiedBytes, r.value().report.resident);
    }
    // 300,000 bytes into the tensors' arena (past the first 64 KiB chunk of a larger tensor).
    const uint64_t byte = 300000;
    CorruptingBackend bad(byte);
    auto o = options(*c, 1, 0);
    o.verify = true;
    auto r = load::loadCheckpoint(*c, bad, o);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("differ from the file"), r.error().describe().c_str());
    const TensorRecord* t = c->find(r.error().tensor);
    QVERIFY2(t, r.error().describe().c_str());
    // The tensor whose view covers that byte, and the file offset of that byte, worked out here
    // from an honest load's views (EP 1: every tensor whole, so view offset = file offset).
    load::HostBackend honest;
    auto ok = load::loadCheckpoint(*c, honest, o);
    QVERIFY(ok.ok());
    const auto* base = static_cast<const uint8_t*>(ok.value().store->tensors()[0].buffer.ptr);
    const load::ResidentTensor* hit = nullptr;
    for (const auto& rt : ok.value().store->tensors())
      if (base + byte >= rt.buffer.ptr && base + byte < static_cast<const uint8_t*>(rt.buffer.ptr) + rt.buffer.bytes) hit = &rt;
    QVERIFY(hit);
    QCOMPARE(r.error().tensor, hit->name);
    QCOMPARE(r.error().offset.value_or(0), t->offset + uint64_t(base + byte - static_cast<const uint8_t*>(hit->buffer.ptr)));
    QCOMPARE(bad.liveAllocations(), uint64_t(0));
    o.verify = false;  // without --verify the same corruption goes unseen: this is what it adds
    CorruptingBackend unseen(byte);
    QVERIFY(load::loadCheckpoint(*c, unseen, o).ok());
  }

  // However many readers and whatever the staging size (--readers, --staging), the same bytes land.
  // Every reader's staging ring is allocated before the first upload, in a phase of its own
  // ("stage": pinning is slow on CUDA and is not the reads' time), and all of it freed.
  void readersAndStagingKeepTheBytes() {
    struct StagingWatch : load::ForwardingBackend {
      using ForwardingBackend::ForwardingBackend;
      std::atomic<int> staged{0}, freed{0}, stagedAfterUpload{0};
      std::atomic<bool> uploaded{false};
      void* allocateStaging(uint64_t n) override {
        ++staged;
        stagedAfterUpload += uploaded.load();
        return inner_.allocateStaging(n);
      }
      void freeStaging(void* p) override {
        ++freed;
        inner_.freeStaging(p);
      }
      Result<bool> upload(const load::DeviceBuffer& b, uint64_t o, const void* s, uint64_t n, int st) override {
        uploaded = true;
        return inner_.upload(b, o, s, n, st);
      }
    };
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe_fp8"));
    QVERIFY(load::defaultReaders() >= 2 && load::defaultReaders() <= 8);
    for (auto [readers, staging] : {std::pair{1u, uint64_t(4096)}, std::pair{7u, uint64_t(1) << 20}, std::pair{3u, uint64_t(32) << 20}}) {
      load::HostBackend host;
      StagingWatch watch(host);
      auto o = options(*c, 2, 1);
      o.readers = readers;
      o.stagingBytes = staging;
      o.verify = true;
      auto r = load::loadCheckpoint(*c, watch, o);
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
      const auto& rep = r.value().report;
      QCOMPARE(rep.verifiedBytes, rep.resident);
      QCOMPARE(rep.resident, rep.predicted.resident);
      QCOMPARE(watch.staged.load(), int(rep.readers * o.buffersPerReader));
      QCOMPARE(watch.stagedAfterUpload.load(), 0);
      QCOMPARE(watch.freed.load(), watch.staged.load());
      auto stage = std::find_if(rep.phases.begin(), rep.phases.end(), [](const auto& p) { return p.phase == "stage"; });
      QVERIFY(stage != rep.phases.end() && stage + 1 != rep.phases.end() && (stage + 1)->phase == "read+upload");
      QCOMPARE(stage->bytes, uint64_t(watch.staged.load()) * rep.stagingBytes);
    }
  }

  // A per-layer EPLB map: each MoE layer's stacked tensors are sliced by that layer's own row. The
  // bytes that land are compared with the file's bytes of exactly the experts the row gives the
  // rank, computed here from the map, not by the loader.
  void perLayerMapSlicesEachLayerByItsRow() {
    auto c = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));  // 2 MoE layers, 8 stacked experts
    QCOMPARE(c->model.moeLayers, (std::vector<int>{0, 1}));
    wstest::TempDir d;
    wstest::writeFile(d.file("map.json"), std::string(R"({"physical_to_logical": [[0, 1, 2, 3, 4, 5, 6, 7], [7, 6, 5, 4, 3, 2, 1, 0]]})"));
    auto pl = plan::loadMap(d.file("map.json"), plan::Remainder::First, 2, 8);
    QVERIFY2(pl.ok(), pl.ok() ? "" : pl.error().describe().c_str());
    const std::vector<int64_t> want[2][2] = {{{0, 1, 2, 3}, {4, 5, 6, 7}}, {{4, 5, 6, 7}, {0, 1, 2, 3}}};  // [rank][layer]
    for (int rank = 0; rank < 2; ++rank) {
      load::HostBackend host;
      auto o = options(*c, 1, 0);
      o.plan.placement = pl.value();
      o.epRank = rank;
      auto r = load::loadCheckpoint(*c, host, o);
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
      int sliced = 0;
      for (const auto& rt : r.value().store->tensors()) {
        const TensorRecord* t = c->find(rt.name);
        QVERIFY(t);
        if (t->role != Role::RoutedExpert || t->expert >= 0 || t->shape.empty() || t->shape[0] != 8) continue;
        const uint64_t per = t->bytes / 8;
        const auto& experts = want[rank][t->layer];
        QCOMPARE(rt.buffer.bytes, per * experts.size());
        for (size_t k = 0; k < experts.size(); ++k)
          QVERIFY2(std::memcmp(static_cast<const uint8_t*>(rt.buffer.ptr) + k * per, fileBytes(*c, *t) + uint64_t(experts[k]) * per, per) == 0,
                   qPrintable(QString("%1, rank %2: slot %3 is not expert %4").arg(QString::fromStdString(t->name)).arg(rank).arg(k).arg(experts[k])));
        ++sliced;
      }
      QCOMPARE(sliced, 6);  // gate, up and down of both layers
    }
  }

  void cancelLeavesNothing() {
    auto c = wstest::openOrFail(wstest::fixture("hf/mixtral"));
    load::HostBackend host;
    std::atomic<bool> cancel{false};
    auto o = options(*c, 1, 0);
    o.cancel = &cancel;
    std::atomic<uint64_t> seen{0};  // the readers report from their own threads
    o.progress = [&](const char*, uint64_t done, uint64_t) {
      seen = done;
      if (done > (1u << 20)) cancel = true;  // a megabyte in
    };
    auto r = load::loadCheckpoint(*c, host, o);
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.error().message).contains("cancelled"));
    QVERIFY(seen < c->totalBytes());
    QCOMPARE(host.liveAllocations(), uint64_t(0));
  }

  void oomGuardRefusesBeforeAllocating() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    load::HostBackend small(c->totalBytes() * 4 / 5);  // the whole model does not fit, one of two EP ranks does
    auto r = load::loadCheckpoint(*c, small, options(*c, 1, 0));
    QVERIFY(!r.ok());
    QVERIFY(QString::fromStdString(r.error().message).contains("exceeds"));
    QCOMPARE(small.liveAllocations(), uint64_t(0));
    auto r2 = load::loadCheckpoint(*c, small, options(*c, 2, 1));  // half the experts fits
    QVERIFY2(r2.ok(), r2.ok() ? "" : r2.error().describe().c_str());
  }

  // Every derive option on every fixture and on synthetic families of every layout (per-expert,
  // stacked GGUF, fused, KTransformers NUMA parts): what is built is what was predicted, names are
  // unique, and each buffer's contents equal an independent reference worked out here - gate then
  // up from the file, the file's matrices transposed element by element, the CPU decoder's values
  // rounded to BF16.
  void derivedEqualTheirReferences_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("like");
    QTest::addColumn<QString>("scheme");
    QTest::addColumn<QString>("runtime");
    for (const char* p : {"hf/qwen3_moe", "hf/qwen3_moe_fp8", "hf/deepseek_v3", "hf/mixtral", "hf/qwen3_vl_moe", "gguf/tiny-qwen3moe-kquants.gguf"})
      QTest::newRow(p) << QString(p) << QString() << QString() << QString("vllm");
    // The checked-in rows of the device corpus that tst_gpu loads (tests/device_corpus.h): their
    // references hold on the host stand-in before a device is asked.
    for (const auto& row : wstest::kDeviceCorpus)
      if (row.load && !row.carried)
        QTest::newRow(std::string(row.path).c_str()) << QString::fromStdString(wstest::trackedData(row.path)) << QString() << QString()
                                                     << QString("vllm");
    for (auto [like, scheme] : {std::pair{"qwen3-moe", "kt-int8"}, std::pair{"deepseek-v3", "gguf-q4_k"}, std::pair{"gpt-oss", "mxfp4"}, std::pair{"qwen3-vl-moe", "bf16"},
                                std::pair{"mixtral", "fp8-block"}, std::pair{"glm-4.5", "nvfp4"}, std::pair{"kimi-k2", "int4-ct"}})
      QTest::newRow((std::string(like) + " " + scheme).c_str()) << QString() << QString(like) << QString(scheme) << QString("vllm");
    // The seed's rules: stacked and fused expert tensors whole on every rank.
    QTest::newRow("gguf seed") << QString("gguf/tiny-qwen3moe-kquants.gguf") << QString() << QString() << QString("seed");
    QTest::newRow("qwen3_vl_moe seed") << QString("hf/qwen3_vl_moe") << QString() << QString() << QString("seed");
    QTest::newRow("deepseek-v3 gguf-q4_k seed") << QString() << QString("deepseek-v3") << QString("gguf-q4_k") << QString("seed");
  }

  void derivedEqualTheirReferences() {
    QFETCH(QString, path);
    QFETCH(QString, like);
    QFETCH(QString, scheme);
    QFETCH(QString, runtime);
    wstest::TempDir d;
    std::string where = path.isEmpty() ? d.file("c") : path.startsWith('/') ? path.toStdString() : wstest::fixture(path.toStdString());
    if (path.isEmpty()) {
      synth::Options so;
      so.like = like.toStdString();
      so.scheme = scheme.toStdString();
      so.out = where;
      if (so.scheme == "kt-int8") so.numaNodes = 2;
      QVERIFY(synth::write(so).ok());
    }
    auto c = wstest::openOrFail(where);
    int checked[3] = {0, 0, 0};
    uint64_t fromUploaded = 0, staged = 0;
    for (auto [ep, rank] : {std::pair{1, 0}, std::pair{3, 1}}) {
      load::HostBackend host;
      auto o = options(*c, ep, rank);
      o.plan.rules = &plan::residencyRules(runtime.toStdString());
      o.plan.deriveFusedGateUp = o.plan.deriveTranspose = o.plan.deriveBf16 = true;
      o.verify = true;
      auto r = load::loadCheckpoint(*c, host, o);
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
      const auto& rep = r.value().report;
      QVERIFY(!rep.residency.mismatch);
      uint64_t referenceBytes = 0;  // the derived buffers' bytes as this test's own references make them
      for (const auto& t : r.value().store->tensors()) QCOMPARE(t.buffer.bytes, uint64_t(expectedCopy(*c, *c->find(t.name), o).size()));
      std::set<std::string> names;
      for (const auto& db : r.value().store->derived()) {
        QVERIFY2(names.insert(db.name).second, db.name.c_str());
        const auto* got = static_cast<const uint8_t*>(db.buffer.ptr);
        const wstest::DerivedReference ref = wstest::derivedReference(*c, db, o);
        QVERIFY2(ref.problem.empty(), ref.problem.c_str());
        const std::vector<uint8_t>& want = ref.bytes;
        checked[db.kind == "fused-gate-up" ? 0 : db.kind == "transpose" ? 1 : 2]++;
        QCOMPARE(db.buffer.bytes, uint64_t(want.size()));
        QVERIFY2(std::memcmp(got, want.data(), want.size()) == 0, db.name.c_str());
        referenceBytes += want.size();
      }
      // The report's and the planner's derived bytes against the references' (the two of them come
      // from one list, derivedBuffers(): comparing them with each other could not fail).
      QCOMPARE(rep.derivedBytes, referenceBytes);
      QCOMPARE(rep.predicted.derived, referenceBytes);
      fromUploaded += rep.bf16FromUploaded;
      staged += rep.bf16Staged;
      r.value().store->release();
      QCOMPARE(host.liveAllocations(), uint64_t(0));
    }
    qInfo("%d fused, %d transposed, %d BF16 buffers checked; BF16 row ranges %llu from the uploaded bytes, %llu staged", checked[0], checked[1], checked[2],
          (unsigned long long)fromUploaded, (unsigned long long)staged);
    // Each BF16 twin decodes from the bytes the load uploaded, but from KTransformers' NUMA parts
    // (staged from the file as before).
    if (scheme == "kt-int8") QVERIFY(staged > 0 && fromUploaded == 0);
    else QCOMPARE(staged, uint64_t(0));
    QCOMPARE(checked[2] > 0, fromUploaded + staged > 0);
    QVERIFY(checked[0] + checked[1] + checked[2] > 0);
  }

  // A BF16 twin whose scales this rank did not upload (deferred) is decoded with them staged from the
  // file, not from a device address the load never wrote, and still equals the CPU dequantizer's.
  void bf16TwinStagesWhatTheLoadDidNotUpload() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe_fp8"));
    load::HostBackend host;
    auto o = options(*c, 1, 0);
    o.plan.deriveBf16 = true;
    o.plan.defer = {"*layers.1.*weight_scale_inv"};
    auto r = load::loadCheckpoint(*c, host, o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
    const auto& rep = r.value().report;
    QVERIFY(rep.bf16Staged > 0 && rep.bf16FromUploaded > 0);  // layer 1's twins staged, the others from the uploaded bytes
    for (const auto& db : r.value().store->derived()) {
      const wstest::DerivedReference ref = wstest::derivedReference(*c, db, o);
      QVERIFY2(ref.problem.empty(), ref.problem.c_str());
      QVERIFY2(db.buffer.bytes == ref.bytes.size() && std::memcmp(db.buffer.ptr, ref.bytes.data(), ref.bytes.size()) == 0, db.name.c_str());
    }
  }

  // The seed's F16 rule: an F16 tensor lands as BF16 (each value through F32, rounded to nearest
  // even), --verify compares with that, and the report says how much was converted; under vLLM's
  // rules the same tensor lands as the file's bytes.
  void seedConvertsF16ToBf16() {
    auto c = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    const TensorRecord* f16 = nullptr;
    for (const auto& t : c->tensors)
      if (t.dtype->name == "F16") f16 = &t;
    QVERIFY(f16);
    for (const char* runtime : {"seed", "vllm"}) {
      load::HostBackend host;
      auto o = options(*c, 1, 0);
      o.plan.rules = &plan::residencyRules(runtime);
      o.verify = true;
      auto r = load::loadCheckpoint(*c, host, o);
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
      const bool seed = std::string(runtime) == "seed";
      QCOMPARE(r.value().report.convertedBytes, seed ? f16->bytes : 0);
      const auto* got = static_cast<const uint16_t*>(r.value().store->find(f16->name)->buffer.ptr);
      const auto* file = reinterpret_cast<const uint16_t*>(fileBytes(*c, *f16));
      for (uint64_t i = 0; i < f16->bytes / 2; ++i) {
        float x = 0;  // IEEE half to float, written out here
        const uint32_t sign = (file[i] >> 15) & 1, exp = (file[i] >> 10) & 0x1F, man = file[i] & 0x3FF;
        if (exp == 0) x = std::ldexp(float(man), -24);
        else if (exp == 31) x = man ? NAN : INFINITY;
        else x = std::ldexp(float(man | 0x400), int(exp) - 25);
        x = sign ? -x : x;
        QCOMPARE(got[i], seed ? num::toBf16Rne(x) : file[i]);
      }
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan::residencyRules("trtllm"));
  }

  // NaNs as the seed converts them (issue 50 item 10): half's f16 -> f32 keeps sign and payload
  // and sets the quiet bit, its f32 -> bf16 keeps the top bits, so an F16 NaN s.11111.m becomes
  // s.11111111 and m's top 7 bits with the quiet bit set - not one canonical NaN. The other values round to
  // nearest even as before (their rule is held by seedConvertsF16ToBf16).
  void seedKeepsNanSignAndPayload() {
    wstest::TempDir d;
    const std::vector<uint16_t> halves = {0x7C01, 0x7E00, 0xFC01, 0xFE00, 0x7FFF, 0xFFFF, 0x7D55, 0xFEAA,  // NaNs
                                          0x7C00, 0xFC00, 0x0001, 0x8001, 0x3C00, 0xC000, 0x7BFF, 0x0000};  // Inf, subnormal, normal
    wstest::StFile f;
    std::vector<uint8_t> bytes(halves.size() * 2);
    std::memcpy(bytes.data(), halves.data(), bytes.size());
    f.tensors = {{"model.norm.weight", "F16", {halves.size()}, bytes}};
    wstest::writeSt(d.file("model.safetensors"), f);
    wstest::writeFile(d.file("config.json"), R"({"model_type":"llama","num_hidden_layers":1})");
    auto c = wstest::openOrFail(d.path());
    load::HostBackend host;
    auto o = options(*c, 1, 0);
    o.plan.rules = &plan::residencyRules("seed");
    auto r = load::loadCheckpoint(*c, host, o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
    const auto* got = static_cast<const uint16_t*>(r.value().store->find("model.norm.weight")->buffer.ptr);
    const std::vector<uint16_t> want = {0x7FC0, 0x7FC0, 0xFFC0, 0xFFC0, 0x7FFF, 0xFFFF, 0x7FEA, 0xFFD5,
                                        0x7F80, 0xFF80, 0x3380, 0xB380, 0x3F80, 0xC000, 0x4780, 0x0000};
    for (size_t i = 0; i < halves.size(); ++i) QCOMPARE(got[i], want[i]);
  }

  // free_matching: dropping views gives an arena back only when nothing else lives in it;
  // teardown gives everything back.
  void freeMatchingReturnsWholeArenas() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe_fp8"));
    load::HostBackend host;
    auto o = options(*c, 2, 0);
    o.plan.deriveBf16 = true;
    auto r = load::loadCheckpoint(*c, host, o);
    QVERIFY(r.ok());
    const auto& rep = r.value().report;
    QCOMPARE(host.liveAllocations(), uint64_t(2));
    const uint64_t before = host.liveBytes();
    auto some = r.value().store->freeMatching("model.layers.1.*");
    QVERIFY(some.views > 0 && some.bytes > 0);
    QCOMPARE(some.arenas, uint64_t(0));  // the rest of both arenas is still in use
    QCOMPARE(host.liveBytes(), before);
    auto derived = r.value().store->freeMatching("* (bf16)");
    QCOMPARE(derived.arenas, uint64_t(1));  // every derived buffer gone: their arena goes back
    QCOMPARE(host.liveAllocations(), uint64_t(1));
    QCOMPARE(host.liveBytes(), before - derived.arenaBytes);
    QVERIFY(derived.arenaBytes >= rep.derivedBytes - some.bytes);
    r.value().store->release();
    QCOMPARE(host.liveAllocations(), uint64_t(0));
  }

  // N-gram embedding tables stay on disk only when asked (--defer-ngram, as the seed runtime does
  // for the models whose loaders serve them from NVMe), recorded with file and offset in their
  // numeric order (embedders.2 before embedders.10).
  void ngramTablesDeferredOnlyWhenAsked() {
    wstest::TempDir d;
    wstest::SafetensorsBuilder b;
    b.add("model.embed_tokens.weight", "BF16", {16, 8});
    for (int i : {10, 2}) b.add("model.ngram_embeddings.embedders." + std::to_string(i) + ".weight", "BF16", {32, 8});
    b.add("model.norm.weight", "BF16", {8});
    b.write(d.file("model.safetensors"));
    auto c = wstest::openOrFail(d.file("model.safetensors"));
    for (bool ask : {false, true}) {
      load::HostBackend host;
      auto o = options(*c, 1, 0);
      o.plan.deferNgramTables = ask;
      auto r = load::loadCheckpoint(*c, host, o);
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
      const auto& deferred = r.value().store->deferred();
      if (!ask) {
        QVERIFY(deferred.empty());
        QVERIFY(r.value().store->find("model.ngram_embeddings.embedders.10.weight"));
        continue;
      }
      QCOMPARE(deferred.size(), size_t(2));
      QCOMPARE(deferred[0].name, std::string("model.ngram_embeddings.embedders.2.weight"));
      QCOMPARE(deferred[1].name, std::string("model.ngram_embeddings.embedders.10.weight"));
      QCOMPARE(deferred[1].offset, c->find(deferred[1].name)->offset);
      QCOMPARE(r.value().report.bytes[plan::Deferred], uint64_t(2 * 32 * 8 * 2));
      QVERIFY(!r.value().store->find("model.ngram_embeddings.embedders.2.weight"));
    }
  }

  // The seed runtime counts the checkpoint's calibrated FP8 KV-cache scales - one *.k_scale a
  // layer, not their *.v_scale twins (spark_runtime_weights.rs fp8_kv_scale_count) - to say whether
  // FP8 KV needs online calibration: the load report counts them so and gives that guidance.
  void kvCacheScalesAreCounted() {
    wstest::TempDir d;
    wstest::SafetensorsBuilder b;
    b.add("model.embed_tokens.weight", "BF16", {16, 8});
    b.add("model.layers.0.mlp.down_proj.weight", "F8_E4M3", {16, 8});
    for (int layer : {0, 1})
      for (const char* kv : {"k_scale", "v_scale"}) b.add("model.layers." + std::to_string(layer) + ".self_attn." + kv, "F32", {});
    b.add("model.layers.0.self_attn.q_scale_not_kv", "F32", {});
    b.write(d.file("model.safetensors"));
    auto c = wstest::openOrFail(d.file("model.safetensors"));
    load::HostBackend host;
    auto r = load::loadCheckpoint(*c, host, options(*c, 1, 0));
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
    QCOMPARE(r.value().report.kvCacheScales, uint64_t(2));
    const auto& notes = r.value().report.notes;
    QVERIFY(std::find(notes.begin(), notes.end(), "2 calibrated FP8 KV-cache scales (k_scale): an FP8 KV cache needs no online calibration") != notes.end());
  }

  void deferredAreRecordedNotUploaded() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    load::HostBackend host;
    auto o = options(*c, 1, 0);
    o.plan.defer = {"lm_head.*"};
    auto r = load::loadCheckpoint(*c, host, o);
    QVERIFY(r.ok());
    QCOMPARE(r.value().store->deferred().size(), size_t(1));
    const auto& d = r.value().store->deferred()[0];
    QCOMPARE(d.name, std::string("lm_head.weight"));
    QCOMPARE(d.offset, c->find("lm_head.weight")->offset);
    QVERIFY(!r.value().store->find("lm_head.weight"));
    QCOMPARE(r.value().report.bytes[plan::Deferred], c->find("lm_head.weight")->bytes);
  }
};

QTEST_GUILESS_MAIN(TstLoad)
#include "tst_load.moc"
