// Streaming statistics and histograms, and scale statistics that read only scale bytes.
#include <QtTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/model/quant_scheme.h"
#include "core/numerics/dequant.h"
#include "core/numerics/element_reader.h"
#include "core/numerics/float_formats.h"
#include "core/numerics/grid_stats.h"
#include "core/numerics/gguf_scale_formulas.h"
#include "core/numerics/hd.h"
#include "core/numerics/read_ahead.h"
#include "core/numerics/scale_stats.h"
#include "core/numerics/stats.h"
#include "core/synth/synth.h"
#include "page_watch.h"
#include "test_paths.h"
#include "test_support.h"

using namespace ws;

// ggml's block layouts (docs/formats.md, ggml-common.h): bytes per block and the byte ranges
// holding scales (d, dmin/m, sub-block scales, E8M0 exponents), written out here on their own
// rather than taken from the decoders under test.
struct BlockLayout {
  uint64_t bytes;
  std::vector<std::pair<uint64_t, uint64_t>> scaleFields;  // [begin, end)
};
const std::map<std::string, BlockLayout, std::less<>>& ggmlBlocks() {
  static const std::map<std::string, BlockLayout, std::less<>> t = {
      {"Q4_0", {18, {{0, 2}}}},         {"Q4_1", {20, {{0, 4}}}},  {"Q5_0", {22, {{0, 2}}}},
      {"Q5_1", {24, {{0, 4}}}},         {"Q8_0", {34, {{0, 2}}}},  {"Q2_K", {84, {{0, 16}, {80, 84}}}},
      {"Q3_K", {110, {{96, 110}}}},     {"Q4_K", {144, {{0, 16}}}}, {"Q5_K", {176, {{0, 16}}}},
      {"Q6_K", {210, {{192, 210}}}},    {"MXFP4", {17, {{0, 1}}}},
  };
  return t;
}

// A copy of the GGUF at `path` in the temp dir whose quantized blocks carry noise outside their
// scale fields (or, with `inScales`, inside them).
std::string withNoise(const std::string& path, bool inScales) {
  static wstest::TempDir dir;
  auto c = wstest::openOrFail(path);
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::mt19937 rng(7);
  for (const auto& t : c->tensors) {
    auto it = ggmlBlocks().find(t.dtype->name);
    if (it == ggmlBlocks().end()) continue;
    const BlockLayout& b = it->second;
    for (uint64_t block = t.offset; block + b.bytes <= t.offset + t.bytes; block += b.bytes)
      for (uint64_t i = 0; i < b.bytes; ++i) {
        bool scale = false;
        for (const auto& [lo, hi] : b.scaleFields) scale |= i >= lo && i < hi;
        if (scale == inScales) bytes[block + i] = char(rng());
      }
  }
  const std::string out = dir.file(inScales ? "noisy-scales.gguf" : "noisy-values.gguf");
  std::ofstream(out, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  return out;
}

// Every group's and kind's statistics and histogram, per tensor, as one comparable text.
std::string scaleJson(const std::string& path) {
  auto c = wstest::openOrFail(path);
  auto r = num::scaleStatistics(*c, num::ScaleGrouping::Tensor);
  if (!r.ok()) return "error: " + r.error().message;
  nlohmann::json j;
  for (const auto& [group, kinds] : r.value().groups)
    for (const auto& [kind, g] : kinds) j[group][kind] = {num::statsJson(g.stats), num::histogramJson(g.hist)};
  return j.dump();
}

// The config.json of a DeepSeek-V3-named compressed-tensors int4 checkpoint (32-code groups).
void writeInt4Config(const wstest::TempDir& d, int hidden, int intermediate, int experts) {
  nlohmann::json j = nlohmann::json::parse(R"({"model_type":"deepseek_v3","num_hidden_layers":1,"quantization_config":{"quant_method":"compressed-tensors",
      "config_groups":{"g":{"weights":{"num_bits":4,"symmetric":true,"strategy":"group","group_size":32}}}}})");
  j["hidden_size"] = hidden, j["moe_intermediate_size"] = intermediate, j["n_routed_experts"] = experts;
  wstest::writeFile(d.file("config.json"), j.dump());
}

class TstStats : public QObject {
  Q_OBJECT
 private slots:
  // The scale pass reports its progress in bytes of what it reads the scales from: every scale
  // tensor of a safetensors checkpoint (all read, so the total is also the bytes the pass read),
  // every block-quantized weight of a GGUF one (the scales sit in its blocks). The count only
  // grows, ends at the total, and a callback that says stop cancels the pass.
  void scaleProgressCountsTheBytesScalesAreReadFrom_data() {
    QTest::addColumn<QString>("fixture");
    QTest::newRow("fp8 safetensors") << "hf/qwen3_moe_fp8";
    QTest::newRow("k-quant gguf") << "gguf/tiny-qwen3moe-kquants.gguf";
  }
  void scaleProgressCountsTheBytesScalesAreReadFrom() {
    QFETCH(QString, fixture);
    auto c = wstest::openOrFail(wstest::fixture(fixture.toStdString()));
    uint64_t expected = 0;
    for (const auto& t : c->tensors)
      if (t.dtype->isBlockQuant() || t.component == Component::Scale || t.component == Component::GlobalScale) expected += t.bytes;
    QVERIFY(expected > 0);
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    auto r = num::scaleStatistics(*c, num::ScaleGrouping::Checkpoint, [&](uint64_t done, uint64_t total) {
      calls.emplace_back(done, total);
      return true;
    });
    QVERIFY(r.ok());
    QVERIFY(!calls.empty());
    for (size_t i = 0; i < calls.size(); ++i) {
      QCOMPARE(calls[i].second, expected);
      if (i) QVERIFY2(calls[i].first >= calls[i - 1].first, "the count went back");
    }
    QCOMPARE(calls.back().first, expected);
    if (c->format == "safetensors") QCOMPARE(r.value().bytesRead, expected);

    int asked = 0;
    auto stopped = num::scaleStatistics(*c, num::ScaleGrouping::Checkpoint, [&](uint64_t, uint64_t) { return ++asked > 1; });
    QVERIFY(!stopped.ok());
    QVERIFY2(stopped.error().message.find("cancelled") != std::string::npos, stopped.error().message.c_str());
    QCOMPARE(asked, 1);  // nothing is asked after the stop
  }

  // The statistics kernels' bodies (stats_threads.h) over their whole grid on the CPU give what
  // num::Stats and the log2Fine histogram give: counts, min, max, absmax and every bin exactly,
  // mean and standard deviation within 1e-9 relative - on every decoded fixture tensor and on
  // values that stress every branch (NaN, +-inf, zeros of both signs, subnormals, the extremes),
  // long enough that each thread strides over several.
  // The device's scale-statistics path for GGUF blocks, emulated: the ggufScales body over its
  // launch grid (and a tiny striding one) lays out each kind's values, and the statistics grid over
  // each array gives what the CPU scale pass reports for that tensor and kind.
  void ggufScaleGridEqualsCpuScalePass() {
    auto c = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    auto cpu = num::scaleStatistics(*c, num::ScaleGrouping::Tensor);
    QVERIFY(cpu.ok());
    int compared = 0;
    for (const auto& l : c->logical) {
      if (l.weight < 0) continue;
      const TensorRecord& w = c->tensors[uint32_t(l.weight)];
      if (!w.dtype->isBlockQuant()) continue;
      const uint64_t n = w.bytes / w.dtype->blockBytes;
      const uint8_t* bytes = c->files[w.file].map->bytes().data() + w.offset;
      const num::GgufBlockScales probe = num::ggufBlockScales(w.dtype->ggmlId, bytes);
      const auto group = cpu.value().groups.find(num::scaleGroupKey(*c, w, l, num::ScaleGrouping::Tensor));
      for (num::LaunchGrid g : {num::launchGrid(n), num::LaunchGrid{3, 32}}) {
        std::vector<float> d(n), dmin(n), sub(n * uint64_t(probe.nSub)), subMin(n * uint64_t(probe.nSubMin));
        num::emulateGrid(g, [&](num::ThreadIndex t) {
          num::ggufScalesThread(bytes, w.dtype->blockBytes, w.dtype->ggmlId, n, probe.nSub, probe.nSubMin, probe.hasD ? d.data() : nullptr,
                                probe.hasDmin ? dmin.data() : nullptr, sub.data(), subMin.data(), t);
        });
        const std::pair<const char*, const std::vector<float>*> kinds[] = {
            {"d", probe.hasD ? &d : nullptr}, {"dmin", probe.hasDmin ? &dmin : nullptr}, {"sub_scale", probe.nSub ? &sub : nullptr}, {"sub_min", probe.nSubMin ? &subMin : nullptr}};
        for (auto [kind, values] : kinds) {
          if (!values) continue;
          QVERIFY2(group != cpu.value().groups.end() && group->second.count(kind), qPrintable(QString::fromStdString(l.name) + " " + kind));
          const num::ScaleGroup& want = group->second.at(kind);
          const num::GridStats got = num::emulateGridStats(values->data(), values->size());
          QCOMPARE(got.stats.count, want.stats.count);
          QCOMPARE(got.stats.zero, want.stats.zero);
          QCOMPARE(got.stats.negative, want.stats.negative);
          QCOMPARE(got.stats.min(), want.stats.min());
          QCOMPARE(got.stats.max(), want.stats.max());
          QVERIFY(got.histogram.counts == want.hist.counts && got.histogram.lo == want.hist.lo);
          ++compared;
        }
      }
    }
    QVERIFY(compared >= 20);
  }

  // The I-quants' scale formulas (gguf_scale_formulas.h) against the decoder, on the files
  // llama.cpp's llama-quantize wrote: every decoded value of a sub-block is its sub-scale times a
  // coordinate of the type's grid (ggml-common.h: IQ2 8, 25, 43; IQ3_XXS 4 ... 62; IQ3_S the odd
  // 1 ... 15; IQ1 -1, 0, 1 plus or minus 1/8),
  // so a sub-scale read from the wrong bits, or for the wrong values, fails here.
  void iquantSubScalesExplainEveryValue_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<QVector<double>>("levels");
    const QVector<double> iq2{8, 25, 43}, iq3xxs{4, 12, 20, 28, 36, 44, 52, 62}, iq3s{1, 3, 5, 7, 9, 11, 13, 15},
                          iq1{-1.125, -0.875, -0.125, 0.125, 0.875, 1.125};
    QTest::newRow("IQ2_XXS") << QString("iq2_xxs") << iq2;
    QTest::newRow("IQ2_XS") << QString("iq2_xs") << iq2;
    QTest::newRow("IQ2_S") << QString("iq2_s") << iq2;
    QTest::newRow("IQ3_XXS") << QString("iq3_xxs") << iq3xxs;
    QTest::newRow("IQ3_S") << QString("iq3_s") << iq3s;
    QTest::newRow("IQ1_S") << QString("iq1_s") << iq1;
    QTest::newRow("IQ1_M") << QString("iq1_m") << iq1;
  }
  void iquantSubScalesExplainEveryValue() {
    QFETCH(QString, type);
    QFETCH(QVector<double>, levels);
    auto c = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/iquants/mixtral-" + type.toStdString() + ".gguf");
    const std::string name = "blk.0.ffn_down_exps.weight";
    const TensorRecord* w = c->find(name);
    QVERIFY(w && w->dtype->name == type.toUpper().toStdString());
    auto li = num::findLogical(*c, name);
    QVERIFY(li.ok());
    num::DequantRequest req;
    req.logical = li.value();
    auto out = num::dequantize(*c, req);
    QVERIFY2(out.ok(), out.ok() ? "" : out.error().describe().c_str());
    const std::vector<float>& v = out.value().values;
    const uint8_t* bytes = c->files[w->file].map->bytes().data() + w->offset;
    const uint64_t blocks = w->bytes / w->dtype->blockBytes;
    uint64_t checked = 0;
    for (uint64_t b = 0; b < blocks; ++b) {
      const num::GgufBlockScales s = num::ggufBlockScales(w->dtype->ggmlId, bytes + b * w->dtype->blockBytes);
      QVERIFY(s.nSub == 8 || s.nSub == 16);
      const int per = 256 / s.nSub;
      for (int k = 0; k < 256; ++k) {
        const double x = v[b * 256 + k] / double(s.sub[k / per]);
        double nearest = 1e30;
        for (double l : levels) nearest = std::min({nearest, std::abs(std::abs(x) - l), std::abs(x - l)});
        if (nearest > 1e-5)
          QFAIL(qPrintable(QString("%1 block %2 value %3: %4 / sub-scale %5 = %6, not a codebook value")
                               .arg(type).arg(b).arg(k).arg(v[b * 256 + k]).arg(s.sub[k / per]).arg(x)));
        ++checked;
      }
    }
    QVERIFY(checked >= 256 * 64);
  }

  void gridStatsEmulationEqualsCpu() {
    std::vector<std::vector<float>> cases;
    std::mt19937 rng(7);
    std::vector<float> special;
    for (int i = 0; i < 600000; ++i) {
      uint32_t u = uint32_t(rng());
      if (i % 97 == 0) u = 0x7FC00000u | (u & 0xFFFF);  // NaN payloads
      if (i % 101 == 0) u = (u & 0x80000000u) | 0x7F800000u;  // +-inf
      if (i % 103 == 0) u &= 0x80000000u;  // +-0
      if (i % 107 == 0) u &= 0x807FFFFFu;  // subnormal
      float f;
      std::memcpy(&f, &u, 4);
      special.push_back(f);
    }
    cases.push_back(special);
    cases.push_back({});
    cases.push_back({1.0f});
    auto c = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    for (uint32_t li = 0; li < c->logical.size(); ++li) {
      num::DequantRequest req;
      req.logical = li;
      auto r = num::dequantize(*c, req);
      if (r.ok()) cases.push_back(r.value().values);
    }
    for (const auto& v : cases) {
      num::Stats want;
      want.add(v.data(), v.size());
      num::Histogram h = num::Histogram::log2Fine();
      for (float x : v) h.add(x);
      const num::GridStats got = num::emulateGridStats(v.data(), v.size());
      const num::Stats& s = got.stats;
      QCOMPARE(s.count, want.count);
      QCOMPARE(s.nan, want.nan);
      QCOMPARE(s.inf, want.inf);
      QCOMPARE(s.zero, want.zero);
      QCOMPARE(s.subnormal, want.subnormal);
      QCOMPARE(s.negative, want.negative);
      QCOMPARE(s.finite(), want.finite());
      QCOMPARE(s.min(), want.min());
      QCOMPARE(s.max(), want.max());
      QCOMPARE(s.absmax(), want.absmax());
      QVERIFY(std::fabs(s.mean() - want.mean()) <= 1e-9 * std::max(1.0, std::fabs(want.mean())));
      QVERIFY(std::fabs(s.stddev() - want.stddev()) <= 1e-9 * std::max(1.0, want.stddev()));
      QVERIFY(got.histogram.counts == h.counts);
      QCOMPARE(got.histogram.lo, h.lo);
      QCOMPARE(got.histogram.below, h.below);
      QCOMPARE(got.histogram.above, h.above);
    }
    QVERIFY(cases.size() > 10);
  }

  void streamingMatchesTwoPass() {
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(3.0f, 2.0f);
    std::vector<float> v(100001);
    for (auto& x : v) x = nd(rng);
    v[5] = NAN;
    v[6] = INFINITY;
    v[7] = 0.0f;
    v[8] = 1e-40f;  // subnormal
    num::Stats s;
    // uneven chunks, as a streaming caller would feed them
    for (size_t i = 0; i < v.size(); i += 777) s.add(v.data() + i, std::min<size_t>(777, v.size() - i));
    double sum = 0, mn = INFINITY, mx = -INFINITY, amax = 0;
    uint64_t n = 0, neg = 0;
    for (float x : v)
      if (std::isfinite(x)) sum += x, ++n, mn = std::min(mn, double(x)), mx = std::max(mx, double(x)), amax = std::max(amax, std::fabs(double(x))), neg += x < 0;
    double mean = sum / double(n), ss = 0;
    for (float x : v)
      if (std::isfinite(x)) ss += (x - mean) * (x - mean);
    QCOMPARE(s.count, uint64_t(v.size()));
    QCOMPARE(s.finite(), n);
    QCOMPARE(s.nan, uint64_t(1));
    QCOMPARE(s.inf, uint64_t(1));
    QCOMPARE(s.zero, uint64_t(1));
    QCOMPARE(s.subnormal, uint64_t(1));
    QCOMPARE(s.negative, neg);
    QCOMPARE(s.min(), mn);
    QCOMPARE(s.max(), mx);
    QCOMPARE(s.absmax(), amax);
    QVERIFY(std::fabs(s.mean() - mean) < 1e-12 * std::fabs(mean) + 1e-12);
    QVERIFY(std::fabs(s.stddev() - std::sqrt(ss / double(n))) < 1e-9);
    num::Stats a, b;  // merge equals one pass
    a.add(v.data(), 50000);
    b.add(v.data() + 50000, v.size() - 50000);
    a.merge(b);
    QCOMPARE(a.finite(), s.finite());
    QVERIFY(std::fabs(a.stddev() - s.stddev()) < 1e-9);
  }

  // Merged into a Stats with no finite value, a Stats is copied exactly: the scale pass builds
  // each tensor's statistics apart and merges them in, and a tensor's own group must then equal
  // its direct pass to the bit (the distributed and one-process reports compare exactly).
  void mergeIntoNothingIsExact() {
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.3f, 2.0f);
    for (int t = 0; t < 50; ++t) {
      std::vector<float> v(1 + rng() % 20000);
      for (auto& x : v) x = nd(rng);
      num::Stats direct;
      direct.add(v.data(), v.size());
      num::Stats merged;
      const float nan = NAN;
      merged.add(&nan, 1);  // counts but no finite value
      merged.merge(direct);
      QCOMPARE(std::bit_cast<uint64_t>(merged.mean()), std::bit_cast<uint64_t>(direct.mean()));
      QCOMPARE(std::bit_cast<uint64_t>(merged.m2()), std::bit_cast<uint64_t>(direct.m2()));
      QCOMPARE(merged.min(), direct.min());
      QCOMPARE(merged.max(), direct.max());
      QCOMPARE(merged.count, direct.count + 1);
    }
  }

  // Extent (what the value rules read) equals Stats' same fields on the same values: random
  // lengths (the eight lanes' tails), every float class at random places - NaN of both signs and
  // payloads, infinities, zeros of both signs, subnormals - all-non-finite and empty runs, a
  // constant run (the placeholder expert), and chunked feeding merged.
  void extentEqualsStats() {
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 0.02f);
    const float specials[] = {NAN, -NAN, std::bit_cast<float>(0x7FC01234u), INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -1e-42f, 3.0e38f, -3.0e38f};
    for (int trial = 0; trial < 400; ++trial) {
      const size_t n = trial < 20 ? size_t(trial) : size_t(rng() % 5000);
      std::vector<float> v(n);
      const int kind = trial % 4;  // 0 normal, 1 with specials, 2 only non-finite, 3 constant
      for (auto& x : v) x = kind == 3 ? 0.25f : kind == 2 ? specials[rng() % 5] : nd(rng);
      if (kind == 1)
        for (size_t k = 0; k < n / 10 + 1 && n; ++k) v[rng() % n] = specials[rng() % std::size(specials)];
      num::Stats s;
      num::Extent e, chunked;
      s.add(v.data(), n);
      e.add(v.data(), n);
      for (size_t i = 0; i < n; i += 333) {
        num::Extent part;
        part.add(v.data() + i, std::min<size_t>(333, n - i));
        chunked.merge(part);
      }
      for (const num::Extent* x : {&e, &chunked}) {
        QCOMPARE(x->count, s.count);
        QCOMPARE(x->nan, s.nan);
        QCOMPARE(x->inf, s.inf);
        QCOMPARE(x->finite, s.finite());
        // exactly (QCOMPARE of doubles is fuzzy); signed zeros compare equal, as the rules compare them
        QVERIFY2(x->min() == s.min() && x->max() == s.max() && x->absmax() == s.absmax(),
                 qPrintable(QString("trial %1: extent %2..%3 |%4|, stats %5..%6 |%7|").arg(trial).arg(x->min()).arg(x->max()).arg(x->absmax())
                                .arg(s.min()).arg(s.max()).arg(s.absmax())));
      }
    }
  }

  void histograms() {
    num::Histogram lin = num::Histogram::linear(0, 10, 5);
    for (float x : {-1.0f, 0.0f, 1.9f, 2.0f, 9.99f, 10.0f, 11.0f, NAN}) lin.add(x);
    QCOMPARE(lin.counts, (std::vector<uint64_t>{2, 1, 0, 0, 2}));  // 10 falls in the last bin
    QCOMPARE(lin.below, uint64_t(1));
    QCOMPARE(lin.above, uint64_t(1));

    num::Histogram fine = num::Histogram::log2Fine();
    for (float x : {0.5f, 0.55f, 1.0f, -1.0f, 4.0f, 0.0f}) fine.add(x);
    QCOMPARE(fine.below, uint64_t(1));  // the zero
    num::Histogram coarse = fine.coarsened(100);
    uint64_t total = 0;
    for (auto c : coarse.counts) total += c;
    QCOMPARE(total, uint64_t(5));
    QCOMPARE(coarse.lo, -1.0);  // the 0.5 bin starts at log2 = -1
    QCOMPARE(coarse.counts.front(), uint64_t(2));  // 0.5 and 0.55 share the quarter octave [-1, -0.75)
    num::Histogram two = fine.coarsened(2);
    QVERIFY(two.counts.size() <= 2);
    QCOMPARE(two.counts[0] + two.counts[1], uint64_t(5));
  }

  // A fine histogram holds the bins from its first occupied one to its last, however its values
  // came: one by one, in a batch, merged from parts in any order, or as the kernels' grid bins.
  // Each equals a plain array of every grid bin counted here.
  void fineHistogramsHoldOnlyTheirOccupiedBins() {
    std::mt19937 rng(23);
    std::vector<float> v;
    for (int i = 0; i < 5000; ++i) {
      const float mag = std::ldexp(std::uniform_real_distribution<float>(1.0f, 2.0f)(rng), std::uniform_int_distribution<int>(-20, 9)(rng));
      v.push_back(rng() & 1 ? -mag : mag);
    }
    for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 3.5e-39f, 1e-45f, 3.0e38f}) v.push_back(x);
    std::shuffle(v.begin(), v.end(), rng);
    std::vector<uint64_t> grid(num::kStatsBins, 0);
    uint64_t zeros = 0, infinities = 0;
    for (float x : v) {
      if (x == 0.0f) ++zeros;
      else if (std::isinf(x)) ++infinities;
      else if (!std::isnan(x)) ++grid[size_t(num::hdQuarterOctave(x) + num::kStatsBinOffset)];
    }
    size_t first = 0, last = grid.size() - 1;
    while (!grid[first]) ++first;
    while (!grid[last]) --last;
    auto check = [&](const num::Histogram& h, const char* how) {
      QVERIFY2(h.fine && h.counts.size() == last - first + 1, how);
      QVERIFY2(std::equal(h.counts.begin(), h.counts.end(), grid.begin() + ptrdiff_t(first)), how);
      QVERIFY2(h.lo == (double(first) - num::kStatsBinOffset) / 4 && h.hi == h.lo + double(h.counts.size()) / 4, how);
      QVERIFY2(h.below == zeros && h.above == infinities, how);
    };

    num::Histogram one = num::Histogram::log2Fine(), batch = num::Histogram::log2Fine(), bins = num::Histogram::log2Fine();
    QVERIFY(one.counts.empty());
    for (float x : v) one.add(x);
    one.add(1e30f, 0);  // nothing: an empty bin at an end would make equal histograms differ
    check(one, "one by one");
    batch.add(v.data(), v.size());
    check(batch, "a batch");
    for (size_t i = 0; i < grid.size(); ++i) bins.addFineBin(int(i), grid[i]);
    bins.below = zeros, bins.above = infinities;
    check(bins, "grid bins");

    // Parts sorted by magnitude, so that each part's window lies below, above, inside or around the
    // histogram it is merged into; and an empty part.
    std::vector<float> sorted = v;
    std::sort(sorted.begin(), sorted.end(), [](float a, float b) { return std::fabs(a) < std::fabs(b); });
    const size_t cut[] = {0, 700, 1400, 2600, 2600, 4100, sorted.size()};
    std::vector<num::Histogram> parts;
    for (size_t p = 0; p + 1 < std::size(cut); ++p) {
      parts.push_back(num::Histogram::log2Fine());
      parts.back().add(sorted.data() + cut[p], cut[p + 1] - cut[p]);
    }
    for (const std::vector<int>& order : {std::vector<int>{0, 1, 2, 3, 4, 5}, {2, 5, 0, 3, 4, 1}, {3, 2, 1, 0, 5, 4}, {4, 0, 5, 2, 1, 3}}) {
      num::Histogram merged = num::Histogram::log2Fine();
      for (int p : order) merged.merge(parts[size_t(p)]);
      check(merged, "merged");
    }
    // The empty one coarsens to one empty bin where the grid starts, as the whole grid did.
    const num::Histogram empty = num::Histogram::log2Fine().coarsened(24);
    QCOMPARE(empty.counts, std::vector<uint64_t>{0});
    QCOMPARE(empty.lo, -152.0);
    QCOMPARE(empty.hi, -151.75);
  }

  void quarterOctaveBinsAreExact() {
    // floor(4 log2|x|) from the bits equals the long-double computation on random floats of every
    // magnitude, subnormals and exact powers of two included.
    std::mt19937 rng(3);
    for (int i = 0; i < 200000; ++i) {
      uint32_t u = rng() & 0x7FFFFFFFu;
      if (u == 0 || (u >> 23) == 0xFF) continue;
      float x = num::bitsToFloat(u);
      QCOMPARE(num::hdQuarterOctave(x), int(std::floor(4.0L * std::log2((long double)x))));
    }
    for (int e = -149; e < 128; ++e) QCOMPARE(num::hdQuarterOctave(std::ldexp(1.0f, e)), 4 * e);
    // Every mantissa (the bin within an octave depends on nothing else), in [1, 2) and in the
    // octaves at both ends, subnormal octaves included: the integer thresholds miss no edge.
    for (uint32_t exponent : {1u, 127u, 254u})
      for (uint32_t mant = 0; mant < (1u << 23); ++mant) {
        const float x = num::bitsToFloat(exponent << 23 | mant);
        const int want = int(std::floor(4.0L * std::log2((long double)x)));
        if (num::hdQuarterOctave(x) != want) QFAIL(qPrintable(QString("mantissa %1, exponent %2: bin %3, want %4").arg(mant).arg(exponent).arg(num::hdQuarterOctave(x)).arg(want)));
      }
    for (uint32_t mant = 1; mant < (1u << 23); mant += 7) {
      const float x = num::bitsToFloat(mant);  // subnormal
      QCOMPARE(num::hdQuarterOctave(x), int(std::floor(4.0L * std::log2((long double)x))));
    }
  }

  void fp8ScalesReadOnlyScaleBytes() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe_fp8"));
    uint64_t scaleBytes = 0, scaleValues = 0;
    for (const auto& t : c->tensors)
      if (t.component == Component::Scale) scaleBytes += t.bytes, scaleValues += t.elements();
    // What the pass read, by two counts it does not keep itself: the kernel's count of bytes read
    // through pread, which must be the scale bytes exactly, and the pages of the mapping touched,
    // which must be none (a fault on the mapping would read around it into the weights).
    QCOMPARE(c->files.size(), size_t(1));
    const auto mapping = c->files[0].map->bytes();
    uint64_t preadBytes = 0;
    Result<num::ScaleReport> r = [&] {
      wstest::PageWatch watch(mapping.data(), mapping.size());
      const uint64_t before = wstest::bytesReadBySyscalls();
      auto report = num::scaleStatistics(*c, num::ScaleGrouping::Checkpoint);
      preadBytes = wstest::bytesReadBySyscalls() - before;
      if (!watch.touchedPages().empty())
        QTest::qFail(qPrintable(QString("page at offset %1 of the mapping touched").arg(watch.touchedPages().front())), __FILE__, __LINE__);
      return report;
    }();
    QVERIFY(r.ok());
    QCOMPARE(preadBytes, scaleBytes);
    QCOMPARE(r.value().bytesRead, scaleBytes);  // the report's own figure: 624 bytes of a 3.6 MB checkpoint
    const auto& g = r.value().groups.at("checkpoint").at("scale");
    QCOMPARE(g.stats.count, scaleValues);
    QCOMPARE(g.tensors, uint64_t(63));
    QCOMPARE(g.stats.nan + g.stats.negative + g.stats.zero, uint64_t(0));
    QVERIFY(g.stats.min() > 0);
  }

  // A cold pass over the scales alone reads the scales of the tensors ahead of it
  // (num::readAheadScales) and nothing else: advising whole tensors, as validate --values does,
  // would read every weight too. On a checkpoint whose scales lie between 1 MiB weights, dropped
  // from the page cache: after advising every tensor's scales, each scale tensor's pages are
  // cached and no page that holds only weight bytes is; after the scale pass itself, the same.
  // Advising whole tensors, the weights' pages are there (what the check would see).
  void aScaleReadAheadLeavesTheWeightsOnDisk() {
    wstest::TempDir d;
    synth::Options o;
    o.like = "kimi-k2", o.scheme = "int4-ct", o.layers = 2, o.denseLayers = 1, o.experts = 2;
    o.hidden = 2048, o.expertIntermediate = 1024, o.shards = 1, o.out = d.file("int4");
    QVERIFY(synth::write(o).ok());
    const std::string shard = o.out + "/model.safetensors";
    if (!wstest::dropFromPageCache(shard)) QSKIP("tmpfs keeps its pages: a cold pass cannot be seen here");
    auto c = wstest::openOrFail(o.out);
    QCOMPARE(c->files.size(), size_t(1));
    const MappedFile& file = *c->files[0].map;
    const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
    std::vector<bool> scalePage(file.size() / page + 1);
    for (const auto& t : c->tensors)
      if (t.component == Component::Scale)
        for (uint64_t p = t.offset / page; p <= (t.offset + t.bytes - 1) / page; ++p) scalePage[p] = true;
    // Cached pages that hold only bytes of quantized weights, and scale tensors not cached whole.
    uint64_t weightPages = 0;
    auto cachedWeightPages = [&] {
      uint64_t n = 0;
      weightPages = 0;
      for (const auto& t : c->tensors)
        if (t.component == Component::Weight)
          for (uint64_t p = t.offset / page; p < (t.offset + t.bytes) / page; ++p)
            if (!scalePage[p] && p * page >= t.offset) ++weightPages, n += file.cached(p * page);
      return n;
    };
    auto uncachedScales = [&] {
      uint64_t n = 0;
      for (const auto& t : c->tensors)
        if (t.component == Component::Scale) n += wstest::cachedPages(file, t.offset, t.bytes) < (t.offset + t.bytes - 1) / page - t.offset / page + 1;
      return n;
    };
    // The open leaves a few weight pages cached, the kernel's own read-ahead of its preads (the
    // header's length, the weight_shape tensors); the scale pass may add none.
    const uint64_t afterOpen = cachedWeightPages();
    QVERIFY2(weightPages * page >= (16u << 20), "weights to leave on disk");
    if (afterOpen * 64 >= weightPages)  // a file system whose pages the advice did not drop
      QSKIP(qPrintable(QString("%1 of %2 weight pages still cached after dropping them: a cold pass cannot be seen here").arg(afterOpen).arg(weightPages)));

    // The kernel reads advised pages in the background: they show in the cache a little later.
    // WILLNEED is advice: a kernel short of memory (or a device it finds congested) may drop it,
    // as happened once in a fresh-clone CI (the scales never all cached in 300 s). Then there is
    // no pass to measure: a skip that says so, not a hang.
    auto waitFor = [](const std::function<bool()>& done) {
      QElapsedTimer t;
      t.start();
      while (!done() && t.elapsed() < 30000) QTest::qWait(50);
      return done();
    };
    for (uint32_t li = 0; li < c->logical.size(); ++li) num::readAheadScales(*c, li);
    if (!waitFor([&] { return uncachedScales() == 0; }))
      QSKIP(qPrintable(QString("%1 advised scale tensors still not cached after 30 s: the kernel did not act on the advice").arg(uncachedScales())));
    QVERIFY(cachedWeightPages() <= afterOpen);

    wstest::dropFromPageCache(shard);
    QVERIFY(num::scaleStatistics(*c, num::ScaleGrouping::Checkpoint).ok());
    QCOMPARE(uncachedScales(), uint64_t(0));
    QVERIFY(cachedWeightPages() <= afterOpen);

    wstest::dropFromPageCache(shard);
    for (uint32_t li = 0; li < c->logical.size(); ++li) num::readAhead(*c, li);
    QVERIFY2(waitFor([&] { return cachedWeightPages() * 2 >= weightPages; }), "advising whole tensors read their weights");
  }

  void ggufScalesReadOnlyScaleFields() {
    auto c = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    auto r = num::scaleStatistics(*c, num::ScaleGrouping::Layer);
    QVERIFY(r.ok());
    // Q6_K token_embd: 1024 rows x 1 block, 18 scale bytes a block (d + 16 int8 sub-scales)
    auto one = num::scaleStatistics(*c, num::ScaleGrouping::Tensor);
    const auto& emb = one.value().groups.at("token_embd");
    QCOMPARE(emb.at("d").stats.count, uint64_t(1024));
    QCOMPARE(emb.at("sub_scale").stats.count, uint64_t(1024 * 16));
    uint64_t fileBytes = c->totalBytes();
    QVERIFY(r.value().bytesRead > 0);
    QVERIFY2(r.value().bytesRead * 8 < fileBytes, "scale fields are a small part of the blocks");
    // Scale fields sit inside every block, so pages cannot tell them apart: instead a copy with
    // every byte outside the scale fields replaced by noise must give the same statistics (and
    // noise in the scale fields must not).
    const std::string original = wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf");
    QCOMPARE(scaleJson(original), scaleJson(withNoise(original, false)));
    QVERIFY(scaleJson(original) != scaleJson(withNoise(original, true)));
    QVERIFY(r.value().groups.count("layer 0") && r.value().groups.count("layer 1"));
    // MXFP4 blocks carry one E8M0 exponent each: 8 experts x 256 rows x 8 blocks
    QCOMPARE(one.value().groups.at("blk.1.ffn_gate_exps").at("d").stats.count, uint64_t(8 * 256 * 8));
  }

  // 16-bit scales are tallied by code and each distinct value added once: against adding every
  // value in turn (Stats::add, Histogram::add), the counts, extremes and every histogram bin are
  // equal and the moments within 1e-12 relative - for BF16 and F16 group scales of two experts
  // each (the tally is cleared between tensors), with NaN, infinities, zeros of both signs,
  // subnormals and negatives among them.
  void tallied16BitScalesEqualAddingEachValue() {
    wstest::TempDir d;
    // NaN, +inf, -inf, +0, -0, a subnormal, a negative, then random finite codes
    const float bf16Specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0x1p-130f, -0x1p-20f};
    const uint16_t f16Specials[] = {0x7E00, 0x7C00, 0xFC00, 0x0000, 0x8000, 0x0001, 0xBC00};
    auto scaleBytes = [&](const std::string& dtype, uint32_t seed) {
      std::mt19937 rng(seed);
      std::vector<uint8_t> b(64 * 4 * 2);
      for (size_t i = 0; i < b.size() / 2; ++i) {
        // 64 values of either sign, each many times: a value's count, not its presence, must add up
        const float v = std::ldexp(1.0f + float(rng() % 8) / 8.0f, -int(rng() % 4)) * (rng() % 4 == 0 ? -1.0f : 1.0f);
        uint16_t code = dtype == "BF16" ? uint16_t(std::bit_cast<uint32_t>(v) >> 16)
                                        : uint16_t((0x3400 + ((rng() % 8) << 7) + ((rng() % 4) << 10)) | (v < 0 ? 0x8000 : 0));
        if (i < std::size(f16Specials)) code = dtype == "BF16" ? uint16_t(std::bit_cast<uint32_t>(bf16Specials[i]) >> 16) : f16Specials[i];
        b[2 * i] = uint8_t(code), b[2 * i + 1] = uint8_t(code >> 8);
      }
      return b;
    };
    std::vector<uint8_t> packed(64 * 16 * 4);
    for (size_t i = 0; i < packed.size(); ++i) packed[i] = uint8_t(i * 37);
    wstest::SafetensorsBuilder b;
    for (int e = 0; e < 4; ++e) {
      const std::string p = "model.layers.0.mlp.experts." + std::to_string(e) + ".gate_proj.";
      const std::string dtype = e < 2 ? "BF16" : "F16";
      b.add(p + "weight_packed", "I32", {64, 16}, packed).add(p + "weight_scale", dtype, {64, 4}, scaleBytes(dtype, uint32_t(e + 1)));
    }
    b.write(d.file("model.safetensors"));
    writeInt4Config(d, 128, 64, 4);
    auto c = wstest::openOrFail(d.path());
    auto r = num::scaleStatistics(*c, num::ScaleGrouping::Tensor);
    QVERIFY(r.ok());
    int compared = 0;
    for (const auto& l : c->logical)
      for (uint32_t m : l.members) {
        const TensorRecord& t = c->tensors[m];
        if (t.component != Component::Scale) continue;
        num::ElementReader reader;
        QVERIFY(reader.init(t.dtype));
        std::vector<float> v(t.elements());
        reader.run(c->files[t.file].map->bytes().data() + t.offset, 0, v.size(), v.data());
        num::ScaleGroup want;
        want.stats.add(v.data(), v.size());
        want.hist.add(v.data(), v.size());
        const num::ScaleGroup& got = r.value().groups.at(l.name).at("scale");
        const std::string what = t.name + " (" + std::string(t.dtype->name) + ")";
        QVERIFY2(got.stats.count == want.stats.count && got.stats.nan == want.stats.nan && got.stats.inf == want.stats.inf && got.stats.zero == want.stats.zero &&
                     got.stats.subnormal == want.stats.subnormal && got.stats.negative == want.stats.negative && got.stats.finite() == want.stats.finite(),
                 qPrintable(QString::fromStdString(what + ": counts differ")));
        QVERIFY2(got.stats.min() == want.stats.min() && got.stats.max() == want.stats.max() && got.stats.absmax() == want.stats.absmax(),
                 qPrintable(QString::fromStdString(what + ": extremes differ")));
        QVERIFY2(std::fabs(got.stats.mean() - want.stats.mean()) <= 1e-12 * std::fabs(want.stats.mean()) &&
                     std::fabs(got.stats.stddev() - want.stats.stddev()) <= 1e-12 * want.stats.stddev(),
                 qPrintable(QString::fromStdString(what + ": moments differ")));
        QVERIFY2(got.hist.counts == want.hist.counts && got.hist.lo == want.hist.lo && got.hist.below == want.hist.below && got.hist.above == want.hist.above,
                 qPrintable(QString::fromStdString(what + ": histogram differs")));
        // the specials are all there (an F16 subnormal is a normal F32, so only BF16 has subnormals)
        const bool specials = want.stats.nan == 1 && want.stats.inf == 2 && want.stats.zero == 2 && (want.stats.subnormal >= 1) == (t.dtype->name == "BF16");
        QVERIFY2(specials, qPrintable(QString::fromStdString(what + ": nan " + std::to_string(want.stats.nan) + " inf " + std::to_string(want.stats.inf) + " zero " +
                                                              std::to_string(want.stats.zero) + " subnormal " + std::to_string(want.stats.subnormal))));
        ++compared;
      }
    QCOMPARE(compared, 4);
  }

  // A pass whose read fails part way through a tallied tensor leaves no counts behind for the next
  // pass on the same thread: one tensor of 131072 BF16 scales (two reads of 65536), its file cut
  // inside the second read, then made whole again. The pass runs on the calling thread (a single
  // tensor), whose buffers outlive it.
  void aFailedTallyLeavesNoCounts() {
    wstest::TempDir d;
    std::vector<uint8_t> packed(4096 * 128 * 4, 0x5A), scales(4096 * 32 * 2);
    for (size_t i = 0; i < scales.size() / 2; ++i) scales[2 * i + 1] = uint8_t(0x3C + i % 3);  // three distinct values
    const std::string p = "model.layers.0.mlp.experts.0.gate_proj.";
    wstest::SafetensorsBuilder().add(p + "weight_packed", "I32", {4096, 128}, packed).add(p + "weight_scale", "BF16", {4096, 32}, scales).write(d.file("model.safetensors"));
    writeInt4Config(d, 1024, 4096, 1);
    auto c = wstest::openOrFail(d.path());
    auto whole = num::scaleStatistics(*c, num::ScaleGrouping::Checkpoint);
    QVERIFY(whole.ok());
    const uint64_t want = whole.value().groups.at("checkpoint").at("scale").stats.count;
    QCOMPARE(want, uint64_t(4096 * 32));
    const std::string file = d.file("model.safetensors");
    const uint64_t size = wstest::fileSize(file);
    std::filesystem::resize_file(file, size - 1000);  // inside the second 65536-value read
    QVERIFY(!num::scaleStatistics(*c, num::ScaleGrouping::Checkpoint).ok());
    std::filesystem::resize_file(file, size);
    {
      std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(std::streamoff(size - 1000));
      f.write(reinterpret_cast<const char*>(scales.data() + scales.size() - 1000), 1000);
    }
    auto again = num::scaleStatistics(*c, num::ScaleGrouping::Checkpoint);
    QVERIFY(again.ok());
    QCOMPARE(again.value().groups.at("checkpoint").at("scale").stats.count, want);
    QVERIFY(again.value().groups.at("checkpoint").at("scale").hist.counts == whole.value().groups.at("checkpoint").at("scale").hist.counts);
  }

  // Regrouping the per-tensor report equals a direct pass by each grouping: the same groups,
  // counts and histogram bins, and moments to rounding.
  void regroupingEqualsADirectPass() {
    for (const char* f : {"hf/qwen3_moe_fp8", "gguf/tiny-qwen3moe-kquants.gguf"}) {
      auto c = wstest::openOrFail(wstest::fixture(f));
      auto byTensor = num::scaleStatistics(*c, num::ScaleGrouping::Tensor);
      QVERIFY(byTensor.ok());
      for (auto by : {num::ScaleGrouping::Layer, num::ScaleGrouping::Projection, num::ScaleGrouping::Expert, num::ScaleGrouping::Checkpoint}) {
        auto direct = num::scaleStatistics(*c, by);
        QVERIFY(direct.ok());
        const num::ScaleReport re = num::regroupScales(*c, byTensor.value(), by);
        QCOMPARE(re.groups.size(), direct.value().groups.size());
        for (const auto& [key, kinds] : direct.value().groups) {
          QVERIFY2(re.groups.count(key), key.c_str());
          QCOMPARE(re.groups.at(key).size(), kinds.size());
          for (const auto& [kind, g] : kinds) {
            const num::ScaleGroup& r = re.groups.at(key).at(kind);
            QCOMPARE(r.tensors, g.tensors);
            QCOMPARE(r.hist.counts, g.hist.counts);
            QCOMPARE(r.hist.lo, g.hist.lo);
            QCOMPARE(r.hist.below, g.hist.below);
            QCOMPARE(r.stats.count, g.stats.count);
            QCOMPARE(r.stats.zero + r.stats.negative + r.stats.nan + r.stats.inf, g.stats.zero + g.stats.negative + g.stats.nan + g.stats.inf);
            QCOMPARE(r.stats.min(), g.stats.min());
            QCOMPARE(r.stats.max(), g.stats.max());
            QVERIFY(std::fabs(r.stats.mean() - g.stats.mean()) <= 1e-12 * std::max(1.0, std::fabs(g.stats.mean())));
            QVERIFY(std::fabs(r.stats.stddev() - g.stats.stddev()) <= 1e-9 * std::max(1.0, g.stats.stddev()));
          }
        }
      }
    }
  }

  // The groups themselves, against keys the test reads off the HF names with its own patterns
  // (not the catalog's classification that the scale pass and the regrouping share): the scale
  // values per layer, per routed expert and per MLP projection, by a direct pass and regrouped.
  void groupsFollowTheNames() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe_fp8"));
    const std::regex layer(R"(\.layers\.(\d+)\.)"), expert(R"(\.experts\.(\d+)\.)"), mlp(R"(\.mlp\.(?:experts\.\d+\.)?(gate|up|down)_proj\.)");
    std::map<std::pair<num::ScaleGrouping, std::string>, uint64_t> want;
    for (const auto& t : c->tensors) {
      if (t.name.find("_scale_inv") == std::string::npos) continue;
      std::smatch m;
      if (std::regex_search(t.name, m, layer)) want[{num::ScaleGrouping::Layer, "layer " + m[1].str()}] += t.elements();
      if (std::regex_search(t.name, m, expert)) want[{num::ScaleGrouping::Expert, "expert " + m[1].str()}] += t.elements();
      if (std::regex_search(t.name, m, mlp)) want[{num::ScaleGrouping::Projection, m[1].str()}] += t.elements();
    }
    QCOMPARE(want.size(), size_t(3 + 8 + 3));  // layers 0-2, experts 0-7, gate/up/down
    auto byTensor = num::scaleStatistics(*c, num::ScaleGrouping::Tensor);
    QVERIFY(byTensor.ok());
    for (const auto& [which, count] : want) {
      auto direct = num::scaleStatistics(*c, which.first);
      QVERIFY(direct.ok());
      const num::ScaleReport re = num::regroupScales(*c, byTensor.value(), which.first);
      for (const num::ScaleReport* r : std::array<const num::ScaleReport*, 2>{&direct.value(), &re}) {
        QVERIFY2(r->groups.count(which.second), which.second.c_str());
        QCOMPARE(r->groups.at(which.second).at("scale").stats.count, count);
      }
    }
  }

  // The robust spread behind WS-V007 and the histogram's red bins: upper median, scaled MAD.
  void robustSpreadAndOutlierTest() {
    const num::RobustSpread plain = num::robustSpread({{4, 1}, {1, 1}, {3, 1}, {2, 1}});
    QCOMPARE(plain.median, 3.0);                  // the upper median of 1, 2, 3, 4
    QCOMPARE(plain.deviation, 1.4826 * 1.0);      // deviations 0, 1, 1, 2: upper median 1
    const num::RobustSpread weighted = num::robustSpread({{0, 1}, {10, 3}});
    QCOMPARE(weighted.median, 10.0);
    QCOMPARE(weighted.deviation, 0.0);
    QVERIFY(num::farFromPeers(13.0, {10, 0.1}));   // 3 octaves, 30 deviations
    QVERIFY(!num::farFromPeers(12.9, {10, 0.1}));  // under 3 octaves
    QVERIFY(!num::farFromPeers(13.0, {10, 0.6}));  // 3 octaves but only 5 deviations
    QVERIFY(num::farFromPeers(6.0, {10, 0.1}));    // below counts as well
  }

  void badScalesAreCounted() {
    wstest::TempDir d;
    std::vector<float> s = {1.0f, NAN, -2.0f, 0.0f, 1e-40f, 1e4f};
    std::vector<uint8_t> sb(s.size() * 4);
    std::memcpy(sb.data(), s.data(), sb.size());
    wstest::SafetensorsBuilder()
        .add("model.layers.0.mlp.experts.0.up_proj.weight", "F8_E4M3", {6, 128})
        .add("model.layers.0.mlp.experts.0.up_proj.weight_scale", "F32", {6, 1}, sb)
        .write(d.file("model.safetensors"));
    auto c = wstest::openOrFail(d.path());
    auto r = num::scaleStatistics(*c, num::ScaleGrouping::Checkpoint);
    const auto& st = r.value().groups.at("checkpoint").at("scale").stats;
    QCOMPARE(st.nan, uint64_t(1));
    QCOMPARE(st.negative, uint64_t(1));
    QCOMPARE(st.zero, uint64_t(1));
    QCOMPARE(st.subnormal, uint64_t(1));
    QCOMPARE(st.max(), 1e4);
  }

  void noScalesNoBytes() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    auto r = num::scaleStatistics(*c, num::ScaleGrouping::Checkpoint);
    QCOMPARE(r.value().bytesRead, uint64_t(0));
    QCOMPARE(r.value().logicalTensors, uint64_t(0));
  }
};

QTEST_GUILESS_MAIN(TstStats)
#include "tst_stats.moc"
