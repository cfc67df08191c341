// The pieces of --distributed that need no MPI (docs/distributed.md): the split of work by
// bytes, statistics sent between ranks bit for bit, and the cross-rank expert coverage of a load.
// The launcher end to end is mpi_distributed.py's.
#include <QtTest>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "core/dist/communicator.h"
#include "core/load/expert_coverage.h"
#include "core/load/loader.h"
#include "core/numerics/stats_wire.h"
#include "test_support.h"

using namespace ws;

namespace {

load::LoadOptions linear(const Checkpoint& c, int ep, int rank) {
  load::LoadOptions o;
  auto p = plan::makePlacement(plan::PlacementKind::Linear, plan::Remainder::First, ep, c.model.numExperts);
  if (!p) throw std::runtime_error(p.error().describe());
  o.plan.placement = p.value();
  o.epRank = rank;
  return o;
}

}  // namespace

class TstDist : public QObject {
  Q_OBJECT
 private slots:
  // Every item goes to exactly one rank, in order, and each rank's bytes are within one item of
  // an equal share, on random sizes (zeros and one huge item among them) and on no bytes at all.
  void sharesAreContiguousCompleteAndEven() {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
      const size_t n = rng() % 300;
      std::vector<uint64_t> bytes(n);
      for (auto& b : bytes) b = rng() % 5 == 0 ? 0 : rng() % (1u << 20);
      if (n && trial % 7 == 0) bytes[rng() % n] = uint64_t(1) << 40;
      if (trial % 11 == 0) std::fill(bytes.begin(), bytes.end(), 0);
      const int size = 1 + int(rng() % 9);
      uint64_t total = 0, largest = 0;
      for (uint64_t b : bytes) total += b, largest = std::max(largest, b);
      size_t next = 0;
      for (int r = 0; r < size; ++r) {
        const auto [begin, end] = dist::shareByBytes(bytes, r, size);
        QVERIFY2(begin == next || begin == end, qPrintable(QString("rank %1 starts at %2, not %3").arg(r).arg(begin).arg(next)));
        if (begin != end) next = end;
        uint64_t mine = 0;
        for (size_t i = begin; i < end; ++i) mine += bytes[i];
        const double share = double(total) / size;
        QVERIFY2(std::fabs(double(mine) - share) <= double(largest) + 1,
                 qPrintable(QString("rank %1 of %2 holds %3 of %4 bytes (largest item %5)").arg(r).arg(size).arg(mine).arg(total).arg(largest)));
      }
      QCOMPARE(next, n);
    }
  }

  // Statistics survive the wire bit for bit, NaN, infinities, subnormals and the histogram too;
  // a JSON number would have turned NaN into null and rounded the moments.
  void statsWireIsExact() {
    // Each class a different number of times (1 NaN, 2 infinities, 3 zeros, 4 subnormals, and the
    // negatives more again), so a reader that swapped two counts' slots would not pass.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> v = {1.0f, nan, INFINITY, -INFINITY, -0.0f, 0.0f, 0.0f, 3.5e-39f, 1e-40f, 2e-39f, 5e-45f,
                            1e-7f, 0.1f, -2.75f, -1.5f, -3.0f, -7.0f, -9.0f, -11.0f, 65504.0f};
    num::Stats s;
    num::Histogram h = num::Histogram::log2Fine();
    s.add(v.data(), v.size());
    for (float x : v) h.add(x);
    const num::Stats t = num::statsFromWire(nlohmann::json::parse(num::statsWire(s).dump()));
    const std::set<uint64_t> classes = {s.nan, s.inf, s.zero, s.subnormal, s.negative};
    QCOMPARE(classes.size(), size_t(5));  // every class on the wire, each with its own count
    QVERIFY(!classes.count(0));
    // Every count and the bits of every moment, read through the accessors (not the wire).
    auto everything = [](const num::Stats& x) {
      auto bits = [](double d) { return std::bit_cast<uint64_t>(d); };
      return std::vector<uint64_t>{x.count,      x.nan,           x.inf,          x.zero,          x.subnormal,   x.negative,        x.finite(),
                                   bits(x.min()), bits(x.max()), bits(x.absmax()), bits(x.mean()), bits(x.m2()), bits(x.stddev())};
    };
    QCOMPARE(everything(t), everything(s));
    const num::Histogram g = num::histogramFromWire(nlohmann::json::parse(num::histogramWire(h).dump()));
    QCOMPARE(g.counts, h.counts);
    QCOMPARE(g.below, h.below);
    QCOMPARE(g.above, h.above);
    QCOMPARE(std::bit_cast<uint64_t>(g.lo), std::bit_cast<uint64_t>(h.lo));
    QCOMPARE(g.fine, h.fine);
  }

  // What each rank's loader read against the plan: whole on every fixture, and a gap named by
  // rank, layer and expert when a rank lacks a part or holds one twice, a dense tensor missing
  // or repeated, or an expert the placement gives no rank.
  void coverageNamesWhatARankLacksOrRepeats() {
    for (const char* fixture : {"hf/qwen3_moe", "hf/qwen3_vl_moe", "hf/mixtral", "hf/deepseek_v3"}) {
      auto c = wstest::openOrFail(wstest::fixture(fixture));
      const int ranks = 3;
      auto planned = plan::planCheckpoint(*c, linear(*c, ranks, 0).plan);
      QVERIFY(planned.ok());
      std::vector<load::Holdings> expected;
      std::vector<std::optional<load::Holdings>> held;
      for (int r = 0; r < ranks; ++r) {
        load::HostBackend host;
        auto o = linear(*c, ranks, r);
        auto loaded = load::loadCheckpoint(*c, host, o);
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().describe().c_str());
        held.push_back(load::heldBy(*c, *loaded.value().store));
        expected.push_back(load::expectedOf(*c, o.plan, planned.value().ranks[size_t(r)]));
        QCOMPARE(load::expertIdsOf(*held.back()), planned.value().ranks[size_t(r)].experts);
      }
      const auto placement = linear(*c, ranks, 0).plan.placement;
      QVERIFY2(load::checkCoverage(*c, placement, expected, held).ok(), fixture);

      auto lacking = held;  // rank 1 lost one part of its first expert
      auto first = lacking[1]->expertParts.begin();
      const auto key = first->first;
      first->second -= 1;
      auto v = load::checkCoverage(*c, placement, expected, lacking);
      QVERIFY(!v.ok());
      QCOMPARE(v.missing.size(), size_t(1));
      QCOMPARE(v.missing[0].rank, 1);
      QCOMPARE(v.missing[0].layer, key.first);
      QCOMPARE(v.missing[0].expert, key.second);
      QVERIFY(v.duplicated.empty());

      auto twice = held;  // rank 2 holds rank 0's first expert as well, and the embedding twice
      const auto theirs = *expected[0].expertParts.begin();
      twice[2]->expertParts[theirs.first] += theirs.second;
      twice[2]->tensors.begin()->second += 1;
      v = load::checkCoverage(*c, placement, expected, twice);
      QCOMPARE(v.duplicated.size(), size_t(1));
      QCOMPARE(v.duplicated[0].rank, 2);
      QCOMPARE(v.tensorsDuplicated.size(), size_t(1));
      QVERIFY(v.missing.empty() && v.tensorsMissing.empty());

      auto failed = held;  // a rank whose load failed is left unchecked, and so not ok
      failed[0].reset();
      v = load::checkCoverage(*c, placement, expected, failed);
      QCOMPARE(v.unchecked, std::vector<int>{0});
      QVERIFY(!v.ok());

      // A placement that gives the last expert to nobody (its slot carries expert 0 again) is caught.
      auto p = plan::trivialMap(c->model.numExperts, plan::Remainder::First, ranks, c->model.numExperts);
      QVERIFY(p.ok());
      p.value().physicalToLogical[0].back() = 0;
      v = load::checkCoverage(*c, p.value(), expected, held);
      QVERIFY(!v.unplaced.empty());
      for (const auto& [layer, expert] : v.unplaced) QCOMPARE(expert, c->model.numExperts - 1);
    }
  }
};

QTEST_GUILESS_MAIN(TstDist)
#include "tst_dist.moc"
