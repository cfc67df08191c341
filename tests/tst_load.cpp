// The full load on the host backend: residency equal to the planner's prediction, bytes equal to
// the file's, failures and cancel leave nothing allocated, the OOM guard refuses, derived buffers.
#include <QtTest>

#include <atomic>

#include <cstring>

#include "core/load/loader.h"
#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"
#include "test_support.h"

using namespace ws;

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

const uint8_t* fileBytes(const Checkpoint& c, const TensorRecord& t) { return c.files[t.file].map->bytes().data() + t.offset; }

// A host "device" that flips one bit of the upload that covers a chosen byte of a chosen buffer:
// what --verify exists to catch (a bad copy, a wrong offset).
class CorruptingBackend : public load::HostBackend {
 public:
  explicit CorruptingBackend(uint64_t bufferId, uint64_t byte) : bufferId_(bufferId), byte_(byte) {}
  Result<bool> upload(const load::DeviceBuffer& b, uint64_t offset, const void* src, uint64_t bytes, int stream) override {
    auto r = HostBackend::upload(b, offset, src, bytes, stream);
    if (r && b.id == bufferId_ && byte_ >= offset && byte_ < offset + bytes) static_cast<uint8_t*>(b.ptr)[byte_] ^= 0x10;
    return r;
  }

 private:
  uint64_t bufferId_, byte_;
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
      QCOMPARE(host.liveAllocations(), uint64_t(rep.predicted.held.size()));  // one allocation per tensor
      QCOMPARE(host.liveBytes(), rep.resident);
      // The bytes on the "device" are the file's bytes (per-expert and replicated tensors whole).
      for (const auto& t : r.value().store->tensors()) {
        const TensorRecord* rec = c->find(t.name);
        if (t.buffer.bytes == rec->bytes) QVERIFY2(std::memcmp(t.buffer.ptr, fileBytes(*c, *rec), rec->bytes) == 0, t.name.c_str());
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

  void injectedFailuresLeaveNothing() {
    auto c = wstest::openOrFail(wstest::fixture("hf/deepseek_v3"));
    const uint64_t tensors = c->tensors.size();
    for (uint64_t k : {uint64_t(1), uint64_t(2), uint64_t(17), tensors / 2, tensors}) {
      load::HostBackend host;
      load::FaultyBackend faulty(host, k);
      auto r = load::loadCheckpoint(*c, faulty, options(*c, 1, 0));
      QVERIFY(!r.ok());
      const QString msg = QString::fromStdString(r.error().describe());
      QVERIFY2(msg.contains("injected allocation failure") && !r.error().tensor.empty(), qPrintable(msg));
      QCOMPARE(host.liveAllocations(), uint64_t(0));
      QCOMPARE(host.liveBytes(), uint64_t(0));
    }
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
    // The 7th buffer allocated, 1000 bytes in (past the first 64 KiB chunk of larger tensors too).
    const uint64_t buffer = 7, byte = 1000;
    CorruptingBackend bad(buffer, byte);
    auto o = options(*c, 1, 0);
    o.verify = true;
    auto r = load::loadCheckpoint(*c, bad, o);
    QVERIFY(!r.ok());
    QVERIFY2(QString::fromStdString(r.error().message).contains("differ from the file"), r.error().describe().c_str());
    const TensorRecord* t = c->find(r.error().tensor);
    QVERIFY2(t, r.error().describe().c_str());
    QCOMPARE(r.error().offset.value_or(0), t->offset + byte);
    QCOMPARE(bad.liveAllocations(), uint64_t(0));
    o.verify = false;  // without --verify the same corruption goes unseen: this is what it adds
    CorruptingBackend unseen(buffer, byte);
    QVERIFY(load::loadCheckpoint(*c, unseen, o).ok());
  }

  // However many readers and whatever the staging size (--readers, --staging), the same bytes land.
  void readersAndStagingKeepTheBytes() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe_fp8"));
    QVERIFY(load::defaultReaders() >= 2 && load::defaultReaders() <= 8);
    for (auto [readers, staging] : {std::pair{1u, uint64_t(4096)}, std::pair{7u, uint64_t(1) << 20}, std::pair{3u, uint64_t(32) << 20}}) {
      load::HostBackend host;
      auto o = options(*c, 2, 1);
      o.readers = readers;
      o.stagingBytes = staging;
      o.verify = true;
      auto r = load::loadCheckpoint(*c, host, o);
      QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
      QCOMPARE(r.value().report.verifiedBytes, r.value().report.resident);
      QCOMPARE(r.value().report.resident, r.value().report.predicted.resident);
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

  void derivedBuffers() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe_fp8"));
    load::HostBackend host;
    auto o = options(*c, 2, 0);
    o.plan.deriveFusedGateUp = true;
    o.plan.deriveBf16 = true;
    auto r = load::loadCheckpoint(*c, host, o);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().describe().c_str());
    const auto& rep = r.value().report;
    QCOMPARE(rep.derivedBytes, rep.predicted.derived);
    QCOMPARE(host.liveBytes(), rep.resident + rep.derivedBytes);
    const auto& store = *r.value().store;
    // A fused gate_up is gate then up; a BF16 copy equals the CPU reference rounded to BF16.
    const load::DerivedBuffer* fused = nullptr;
    const load::DerivedBuffer* bf16 = nullptr;
    for (const auto& d : store.derived()) {
      if (d.kind == "fused-gate-up" && d.sources[0] == "model.layers.1.mlp.experts.2.gate_proj.weight") fused = &d;
      if (d.kind == "bf16" && d.sources[0] == "model.layers.1.mlp.experts.2.gate_proj.weight") bf16 = &d;
    }
    QVERIFY(fused && bf16);
    const TensorRecord* g = c->find("model.layers.1.mlp.experts.2.gate_proj.weight");
    const TensorRecord* u = c->find("model.layers.1.mlp.experts.2.up_proj.weight");
    QVERIFY(std::memcmp(fused->buffer.ptr, fileBytes(*c, *g), g->bytes) == 0);
    QVERIFY(std::memcmp(static_cast<uint8_t*>(fused->buffer.ptr) + g->bytes, fileBytes(*c, *u), u->bytes) == 0);
    num::DequantRequest req;
    req.logical = g->logical;
    auto ref = num::dequantize(*c, req);
    const uint16_t* got = static_cast<const uint16_t*>(bf16->buffer.ptr);
    for (size_t i = 0; i < ref.value().values.size(); ++i) QCOMPARE(got[i], num::toBf16Rne(ref.value().values[i]));
    // free_matching and teardown give everything back
    auto [n, bytes] = r.value().store->freeMatching("model.layers.1.*");
    QVERIFY(n > 0 && bytes > 0);
    QCOMPARE(host.liveBytes(), rep.resident + rep.derivedBytes - bytes);
    r.value().store->release();
    QCOMPARE(host.liveAllocations(), uint64_t(0));
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
