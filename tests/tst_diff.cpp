// diff's own wiring, beside the reference comparisons of tests/scripts/diff_reference.py: the
// device dequantizer is used when registered (and not when turned off), and gives the same report.
#include <QtTest>

#include <atomic>

#include "core/diff/diff.h"
#include "core/numerics/dequant.h"
#include "core/numerics/device_dequant.h"
#include "test_support.h"

using namespace ws;

class TstDiff : public QObject {
  Q_OBJECT
 private slots:
  void usesTheRegisteredDevice() {
    auto a = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    auto b = wstest::openOrFail(wstest::fixture("hf/qwen3_moe_fp8"));
    // A stand-in device: the CPU decoder behind the device interface, counting its calls.
    std::atomic<int> calls{0};
    num::registerDeviceDequant([&](const Checkpoint& c, uint32_t logical, uint64_t firstRow, uint64_t rows) -> Result<std::vector<float>> {
      ++calls;
      auto d = num::makeDecoder(c, logical);
      if (!d) return d.error();
      std::vector<float> v(rows * d.value()->cols());
      d.value()->decode(firstRow, rows, v.data());
      return v;
    }, "test:0");
    diff::DiffOptions withDevice, cpuOnly;
    cpuOnly.useDevice = false;
    auto g = diff::diffCheckpoints(*a, *b, withDevice);
    const int used = calls.load();
    auto h = diff::diffCheckpoints(*a, *b, cpuOnly);
    num::unregisterDeviceDequant();
    QVERIFY(g.ok() && h.ok());
    QCOMPARE(g.value().device, std::string("test:0"));
    QCOMPARE(h.value().device, std::string("cpu"));
    QCOMPARE(used, int(2 * g.value().pairs.size()));  // both sides of every pair
    QCOMPARE(calls.load(), used);                     // and none with the device turned off
    QCOMPARE(g.value().pairs.size(), h.value().pairs.size());
    for (size_t i = 0; i < g.value().pairs.size(); ++i) {
      QCOMPARE(g.value().pairs[i].metrics.nmse, h.value().pairs[i].metrics.nmse);
      QCOMPARE(g.value().pairs[i].metrics.differing, h.value().pairs[i].metrics.differing);
    }
  }

  void tensorsGlobSelects() {
    auto a = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    auto b = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.expected.gguf"));
    diff::DiffOptions opt;
    opt.tensors = "blk.1.ffn_down_exps.*";
    auto r = diff::diffCheckpoints(*a, *b, opt);
    QVERIFY(r.ok());
    QCOMPARE(r.value().pairs.size(), size_t(a->model.numExperts));
    for (const auto& p : r.value().pairs) QVERIFY(p.pair.key.rfind("blk.1.ffn_down_exps.", 0) == 0 && p.metrics.identical);
  }
};

QTEST_GUILESS_MAIN(TstDiff)
#include "tst_diff.moc"
