// Expert-parallel placement rules, residency and memory verdicts against hand-computed budgets.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "core/plan/devices.h"
#include "core/plan/ep_plan.h"
#include "core/plan/host_offload.h"
#include "core/plan/kt_offload.h"
#include "core/plan/placement.h"
#include "core/synth/synth.h"
#include "test_support.h"

using namespace ws;

namespace {

std::vector<int64_t> counts(const plan::Placement& p) {
  std::vector<int64_t> c;
  for (int r = 0; r < p.epSize; ++r) c.push_back(int64_t(p.slotsOf(r).size()));
  return c;
}

plan::Placement linear(int ep, int64_t experts, plan::Remainder rem = plan::Remainder::First) {
  auto p = plan::makePlacement(plan::PlacementKind::Linear, rem, ep, experts);
  if (!p) throw std::runtime_error(p.error().describe());
  return p.value();
}

plan::PlanResult runPlan(const Checkpoint& c, plan::PlanOptions opt) {
  auto r = plan::planCheckpoint(c, opt);
  if (!r) throw std::runtime_error(r.error().describe());
  return r.value();
}

// A one-layer MoE checkpoint with exactly known bytes (see each case).
std::string writeTinyMoe(const wstest::TempDir& d, const std::string& expertDtype, bool nvfp4 = false) {
  wstest::writeFile(d.file("config.json"), std::string(R"({"model_type":"qwen3_moe","num_hidden_layers":1,"num_experts":4,
    "num_experts_per_tok":2,"hidden_size":16,"moe_intermediate_size":8,"intermediate_size":32})"));
  wstest::SafetensorsBuilder b;
  b.add("model.embed_tokens.weight", "BF16", {32, 16});            // 1024 B
  b.add("model.layers.0.input_layernorm.weight", "BF16", {16});     // 32 B
  b.add("model.layers.0.self_attn.q_proj.weight", "BF16", {16, 16});  // 512 B
  b.add("model.layers.0.mlp.gate.weight", "BF16", {4, 16});         // 128 B (router: "other")
  for (int e = 0; e < 4; ++e)
    for (const char* p : {"gate_proj", "up_proj", "down_proj"}) {
      std::string base = "model.layers.0.mlp.experts." + std::to_string(e) + "." + p;
      bool down = std::string(p) == "down_proj";
      std::vector<uint64_t> shape = down ? std::vector<uint64_t>{16, 8} : std::vector<uint64_t>{8, 16};
      if (nvfp4) {  // every projection [16, 16]: codes 128 B, E4M3 scales [16, 1] 16 B, global 4 B
        b.add(base + ".weight", "U8", {16, 8});
        b.add(base + ".weight_scale", "F8_E4M3", {16, 1});
        b.add(base + ".weight_scale_2", "F32", {});
      } else {
        b.add(base + ".weight", expertDtype, shape);  // BF16: 256 B; F8_E4M3: 128 B
        if (expertDtype == "F8_E4M3") b.add(base + ".weight_scale_inv", "F32", {1, 1});  // 4 B
      }
    }
  b.write(d.file("model.safetensors"));
  return d.path();
}

}  // namespace

class TstPlan : public QObject {
  Q_OBJECT
 private slots:
  // KTransformers' random placement draws torch.randperm from a generator seeded 42: the values
  // torch 2.15.0 printed (python -c "import torch; g = torch.Generator().manual_seed(42);
  // print(torch.randperm(N, generator=g).tolist())"), first twelve and last, for N = 10, 1000 and
  // 23,040 (Kimi-K2's 60 MoE layers x 384 experts); a size past the 32-bit path is refused.
  void ktRandomPlacementIsTorchRandperm() {
    const std::vector<std::tuple<int64_t, std::vector<int64_t>, int64_t>> torchSays = {
        {10, {2, 6, 1, 8, 4, 5, 0, 9, 3, 7}, 7},
        {1000, {542, 618, 816, 68, 94, 215, 60, 585, 942, 165, 968, 829}, 455},
        {23040, {7782, 18880, 8720, 4054, 5858, 11180, 2308, 17229, 1950, 16751, 2628, 13320}, 11678}};
    for (const auto& [n, first, last] : torchSays) {
      const std::vector<int64_t> r = plan::torchRandperm(n, 42);
      QCOMPARE(int64_t(r.size()), n);
      QVERIFY2(std::equal(first.begin(), first.end(), r.begin()), std::to_string(n).c_str());
      QCOMPARE(r.back(), last);
      QVERIFY(std::set<int64_t>(r.begin(), r.end()).size() == size_t(n));
    }
    QVERIFY_THROWS_EXCEPTION(std::exception, plan::torchRandperm(int64_t(1) << 32, 42));
  }

  // An MTP head under layers.N (GLM style) with experts of its own: the seed's rule shards them by
  // the expert index in the name (remainder to the last rank), vLLM's replicates them on every rank.
  void mtpExpertsUnderLayersFollowTheRuntime() {
    wstest::TempDir d;
    synth::Options so;
    so.like = "glm-4.5";
    so.mtpLayers = 1;
    so.out = d.file("glm");
    QVERIFY(synth::write(so).ok());
    auto c = wstest::openOrFail(so.out);
    std::vector<uint32_t> mtpExperts;
    for (uint32_t i = 0; i < c->tensors.size(); ++i)
      if (c->tensors[i].role == Role::Mtp && c->tensors[i].expert >= 0) mtpExperts.push_back(i);
    QVERIFY(mtpExperts.size() > 4);
    const int64_t E = c->model.numExperts;
    for (const char* runtime : {"vllm", "seed"}) {
      plan::PlanOptions opt;
      opt.rules = &plan::residencyRules(runtime);
      opt.placement = plan::makePlacement(plan::PlacementKind::Linear, opt.rules->remainder, 3, E).value();
      auto r = plan::planCheckpoint(*c, opt);
      QVERIFY(r.ok());
      size_t held = 0;
      for (const auto& rp : r.value().ranks)
        for (const auto& h : rp.held)
          if (std::find(mtpExperts.begin(), mtpExperts.end(), h.tensor) != mtpExperts.end()) {
            ++held;
            if (std::string(runtime) == "seed") {  // the seed's range: E / 3 each, the rest to the last rank
              const int64_t e = c->tensors[h.tensor].expert, per = E / 3;
              QCOMPARE(std::min<int64_t>(e / per, 2), int64_t(rp.rank));
            }
          }
      QCOMPARE(held, std::string(runtime) == "seed" ? mtpExperts.size() : 3 * mtpExperts.size());
      QCOMPARE(opt.rules->shardMtpUnderLayers, std::string(runtime) == "seed");
    }
    // The table's shardMtpUnderLayers, not the runtime's name, decides: vLLM's rules with it set
    // shard those experts once over the ranks too.
    plan::ResidencyRules sharding = plan::residencyRules("vllm");
    sharding.shardMtpUnderLayers = true;
    plan::PlanOptions opt;
    opt.rules = &sharding;
    opt.placement = plan::makePlacement(plan::PlacementKind::Linear, sharding.remainder, 3, E).value();
    auto r = plan::planCheckpoint(*c, opt);
    QVERIFY(r.ok());
    size_t held = 0;
    for (const auto& rp : r.value().ranks)
      for (const auto& h : rp.held) held += std::count(mtpExperts.begin(), mtpExperts.end(), h.tensor);
    QCOMPARE(held, mtpExperts.size());
  }

  void remainderPolicies() {
    QCOMPARE(counts(linear(6, 256, plan::Remainder::First)), (std::vector<int64_t>{43, 43, 43, 43, 42, 42}));
    QCOMPARE(counts(linear(6, 256, plan::Remainder::Last)), (std::vector<int64_t>{42, 42, 42, 42, 42, 46}));
    QCOMPARE(counts(linear(8, 60, plan::Remainder::First)), (std::vector<int64_t>{8, 8, 8, 8, 7, 7, 7, 7}));
    QCOMPARE(counts(linear(8, 60, plan::Remainder::Last)), (std::vector<int64_t>{7, 7, 7, 7, 7, 7, 7, 11}));
    // contiguous, covering every expert exactly once, in rank order
    for (auto rem : {plan::Remainder::First, plan::Remainder::Last}) {
      auto p = linear(6, 256, rem);
      int64_t next = 0;
      for (int r = 0; r < 6; ++r)
        for (int64_t e : p.slotsOf(r)) QCOMPARE(e, next++);
      QCOMPARE(next, int64_t(256));
    }
    QCOMPARE(linear(6, 256).slotsOf(4).front(), int64_t(4 * 42 + 4));  // vLLM: start = r*base + min(r, rem)
    auto strict = plan::makePlacement(plan::PlacementKind::Linear, plan::Remainder::Strict, 6, 256);
    QVERIFY(!strict.ok());
    QVERIFY(QString::fromStdString(strict.error().describe()).contains("do not divide"));
    QVERIFY(plan::makePlacement(plan::PlacementKind::Linear, plan::Remainder::Strict, 8, 256).ok());
  }

  void roundRobinAndMaps() {
    auto rr = plan::makePlacement(plan::PlacementKind::RoundRobin, plan::Remainder::First, 4, 10).value();
    QCOMPARE(rr.slotsOf(1), (std::vector<int64_t>{1, 5, 9}));
    QCOMPARE(rr.slotsOf(3), (std::vector<int64_t>{3, 7}));
    auto trivial = plan::trivialMap(10, plan::Remainder::First, 2, 8).value();  // EPLB's arange(P) % L
    QCOMPARE(trivial.logicalOf(0), (std::vector<int64_t>{0, 1, 2, 3, 4}));
    QCOMPARE(trivial.logicalOf(1), (std::vector<int64_t>{5, 6, 7, 0, 1}));  // replicas of 0 and 1
    wstest::TempDir d;
    wstest::writeFile(d.file("map.json"), std::string(R"({"physical_to_logical": [3, 2, 1, 0, 0, 1]})"));
    auto m = plan::loadMap(d.file("map.json"), plan::Remainder::First, 3, 4);
    QVERIFY(m.ok());
    QCOMPARE(m.value().logicalOf(2), (std::vector<int64_t>{0, 1}));
    wstest::writeFile(d.file("bad.json"), std::string(R"([0, 1, 1, 2])"));
    auto bad = plan::loadMap(d.file("bad.json"), plan::Remainder::First, 2, 4);
    QVERIFY(!bad.ok());
    QVERIFY(QString::fromStdString(bad.error().describe()).contains("logical expert 3 has no physical slot"));
  }

  // A per-layer EPLB map (one row per MoE layer): each rank holds, in each layer, the experts of
  // that layer's row - not the first row's everywhere.
  void perLayerMapHoldsEachLayersRow() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));  // per-expert tensors
    const std::vector<int>& layers = c->model.moeLayers;
    QCOMPARE(layers.size(), size_t(2));
    wstest::TempDir d;
    wstest::writeFile(d.file("map.json"), std::string(R"({"physical_to_logical": [[0, 1, 2, 3, 4, 5, 6, 7], [7, 6, 5, 4, 3, 2, 1, 0]]})"));
    auto pl = plan::loadMap(d.file("map.json"), plan::Remainder::First, 2, 8);
    QVERIFY(pl.ok());
    plan::PlanOptions opt;
    opt.placement = pl.value();
    const plan::PlanResult r = runPlan(*c, opt);
    const std::set<int64_t> want[2][2] = {{{0, 1, 2, 3}, {4, 5, 6, 7}}, {{4, 5, 6, 7}, {0, 1, 2, 3}}};  // [rank][moe layer]
    for (int rank = 0; rank < 2; ++rank) {
      std::set<int64_t> held[2];
      for (const auto& h : r.ranks[size_t(rank)].held) {
        const TensorRecord& t = c->tensors[h.tensor];
        if (t.role != Role::RoutedExpert) continue;
        const size_t row = size_t(std::find(layers.begin(), layers.end(), t.layer) - layers.begin());
        QVERIFY(row < 2);
        held[row].insert(t.expert);
      }
      for (int row = 0; row < 2; ++row)
        QVERIFY2(held[row] == want[rank][row], qPrintable(QString("rank %1, MoE layer %2").arg(rank).arg(layers[size_t(row)])));
    }
  }

  // The words every front end takes, parsed once (PlacementSpec), build what the direct calls build.
  void placementSpec() {
    auto rr = plan::PlacementSpec::parse("round-robin", "last");
    QVERIFY(rr.ok());
    QCOMPARE(rr.value().kind, plan::PlacementKind::RoundRobin);
    QCOMPARE(rr.value().build(4, 10).value().slotsOf(1), (std::vector<int64_t>{1, 5, 9}));
    QCOMPARE(plan::PlacementSpec::parse("linear", "last").value().build(3, 8).value().slotsOf(2), (std::vector<int64_t>{4, 5, 6, 7}));
    QCOMPARE(plan::PlacementSpec::parse("", "first").value().build(3, 8).value().slotsOf(0), (std::vector<int64_t>{0, 1, 2}));
    QCOMPARE(plan::PlacementSpec::parse("trivial:10").value().build(2, 8).value().logicalOf(1), (std::vector<int64_t>{5, 6, 7, 0, 1}));
    wstest::TempDir d;
    wstest::writeFile(d.file("map.json"), std::string(R"({"physical_to_logical": [3, 2, 1, 0, 0, 1]})"));
    auto map = plan::PlacementSpec::parse(d.file("map.json"));
    QCOMPARE(map.value().kind, plan::PlacementKind::Map);
    QCOMPARE(map.value().build(3, 4).value().logicalOf(2), (std::vector<int64_t>{0, 1}));
    QVERIFY(!plan::PlacementSpec::parse(d.file("missing.json")).value().build(3, 4).ok());
    auto badRem = plan::PlacementSpec::parse("linear", "middle");
    QVERIFY(!badRem.ok());
    QVERIFY(QString::fromStdString(badRem.error().message).contains("'middle'"));
    for (const char* bad : {"trivial:", "trivial:x", "trivial:0", "trivial:3x"}) QVERIFY2(!plan::PlacementSpec::parse(bad).ok(), bad);
    auto strict = plan::PlacementSpec::parse("linear", "strict").value().build(6, 256);
    QVERIFY(!strict.ok());
    QVERIFY(QString::fromStdString(strict.error().describe()).contains("do not divide"));
  }

  // Case 1 (docs/plan.md): BF16, EP 2. Experts are 3 x 256 B = 768 B; rank 0 holds experts 0-1
  // (1536 B) plus the replicated embedding 1024, norm 32, q_proj 512 and router 128 = 1696 B:
  // 3232 B resident, multiplier 1.0, so peak 3232. With 4000 B and 500 reserved: headroom 268.
  void verdictBf16() {
    wstest::TempDir d;
    auto c = wstest::openOrFail(writeTinyMoe(d, "BF16"));
    plan::PlanOptions opt;
    opt.placement = linear(2, 4);
    opt.capacity = 4000;
    opt.reserved = 500;
    auto r = runPlan(*c, opt);
    QCOMPARE(r.multiplier, 1.0);
    for (const auto& rp : r.ranks) {
      QCOMPARE(rp.bytes[plan::RoutedExperts], uint64_t(1536));
      QCOMPARE(rp.bytes[plan::Embeddings], uint64_t(1024));
      QCOMPARE(rp.bytes[plan::Other], uint64_t(128));
      QCOMPARE(rp.resident, uint64_t(3232));
      QCOMPARE(rp.peak, uint64_t(3232));
      QCOMPARE(rp.headroom, int64_t(268));
      QCOMPARE(*rp.fits, true);
    }
    QCOMPARE(r.ranks[1].experts, (std::vector<int64_t>{2, 3}));
    QCOMPARE(r.imbalance, 1.0);
  }

  // Case 2: FP8 block, EP 4, TP 2. An expert is 3 x (128 + 4) = 396 B; each rank holds one.
  // Replicated: embedding 1024, norm 32, router 128, q_proj 512 split over TP 2 = 256:
  // resident 396 + 1440 = 1836; FP8 multiplier 1.5 gives 918 transient, peak 2754. With 2700 B of
  // capacity the rank is short by 54 B. Scale bytes: 3 x 4 = 12.
  void verdictFp8Tp() {
    wstest::TempDir d;
    auto c = wstest::openOrFail(writeTinyMoe(d, "F8_E4M3"));
    plan::PlanOptions opt;
    opt.placement = linear(4, 4);
    opt.tp = 2;
    opt.capacity = 2700;
    auto r = runPlan(*c, opt);
    QCOMPARE(r.multiplier, 1.5);
    const auto& rp = r.ranks[3];
    QCOMPARE(rp.experts, (std::vector<int64_t>{3}));
    QCOMPARE(rp.bytes[plan::RoutedExperts], uint64_t(396));
    QCOMPARE(rp.bytes[plan::Attention], uint64_t(256));
    QCOMPARE(rp.scaleBytes, uint64_t(12));
    QCOMPARE(rp.resident, uint64_t(1836));
    QCOMPARE(rp.transient, uint64_t(918));
    QCOMPARE(rp.peak, uint64_t(2754));
    QCOMPARE(rp.headroom, int64_t(-54));
    QCOMPARE(*rp.fits, false);
  }

  // Case 3: NVFP4, EP 1, derive bf16 + transpose. Every projection is [16, 16]: 128 B of codes,
  // 16 B of E4M3 scales, 4 B global = 148 B, so 444 B an expert and 1776 B for four; replicated
  // 1696 B as in case 1: resident 3472. Derived: BF16 copies of 256 weights a projection
  // (12 x 512 = 6144); packed codes get no transposed twin. NVFP4 multiplier 1.3: transient
  // round(3472 x 0.3) = 1042; peak 3472 + 1042 + 6144 = 10658.
  void verdictNvfp4Derived() {
    wstest::TempDir d;
    auto c = wstest::openOrFail(writeTinyMoe(d, "", true));
    plan::PlanOptions opt;
    opt.placement = linear(1, 4);
    opt.deriveBf16 = true;
    opt.deriveTranspose = true;
    opt.capacity = 10658;
    auto r = runPlan(*c, opt);
    QCOMPARE(r.multiplier, 1.3);
    const auto& rp = r.ranks[0];
    QCOMPARE(rp.bytes[plan::RoutedExperts], uint64_t(1776));
    QCOMPARE(rp.scaleBytes, uint64_t(12 * 20));
    QCOMPARE(rp.derived, uint64_t(6144));
    QCOMPARE(rp.resident, uint64_t(3472));
    QCOMPARE(rp.transient, uint64_t(1042));
    QCOMPARE(rp.peak, uint64_t(10658));
    QCOMPARE(rp.headroom, int64_t(0));
    QCOMPARE(*rp.fits, true);  // exactly full still fits
  }

  void fusedTensorsAreSlicedAndEverythingAddsUp() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_vl_moe"));
    plan::PlanOptions opt;
    opt.placement = linear(3, 8, plan::Remainder::Last);  // 2, 2, 4 experts
    auto r = runPlan(*c, opt);
    uint64_t routedTotal = 0, routedSum = 0;
    for (const auto& t : c->tensors)
      if (t.role == Role::RoutedExpert) routedTotal += t.bytes;
    for (const auto& rp : r.ranks) routedSum += rp.bytes[plan::RoutedExperts];
    QCOMPARE(routedSum, routedTotal);
    QCOMPARE(r.ranks[2].bytes[plan::RoutedExperts], routedTotal / 2);  // 4 of 8 experts
    // every rank keeps every fused tensor (its slice) and every non-expert tensor
    for (const auto& rp : r.ranks) QCOMPARE(rp.held.size(), c->tensors.size());
    for (const auto& row : r.expertBytes)
      for (uint64_t b : row) QCOMPARE(b, row[0]);
  }

  void perExpertResidencyOnAFixture() {
    auto c = wstest::openOrFail(wstest::fixture("hf/deepseek_v3"));
    plan::PlanOptions opt;
    opt.placement = linear(3, 16);  // 6, 5, 5
    auto r = runPlan(*c, opt);
    std::map<std::string, int> holders;
    for (const auto& rp : r.ranks)
      for (const auto& h : rp.held) holders[c->tensors[h.tensor].name]++;
    for (const auto& t : c->tensors) QCOMPARE(holders[t.name], t.role == Role::RoutedExpert ? 1 : 3);
    QCOMPARE(holders["model.layers.2.mlp.experts.5.up_proj.weight"], 1);
    QCOMPARE(r.ranks[0].experts.back(), int64_t(5));
    uint64_t sum = 0, replicated = 0;
    for (const auto& t : c->tensors)
      if (t.role != Role::RoutedExpert) replicated += t.bytes;
    for (const auto& rp : r.ranks) sum += rp.resident - replicated;
    QCOMPARE(sum + replicated, c->totalBytes());
  }

  void skippedAndDeferredAreListedNotLoaded() {
    wstest::TempDir d;
    auto c = wstest::openOrFail(writeTinyMoe(d, "BF16"));
    plan::PlanOptions opt;
    opt.placement = linear(2, 4);
    opt.defer = {"model.embed_tokens.*"};
    auto r = runPlan(*c, opt);
    QCOMPARE(r.ranks[0].bytes[plan::Embeddings], uint64_t(0));
    QCOMPARE(r.ranks[0].bytes[plan::Deferred], uint64_t(1024));
    QCOMPARE(r.ranks[0].skipped.size(), size_t(1));
    QCOMPARE(r.ranks[0].skipped[0].reason, std::string("deferred"));
  }

  // vLLM's --cpu-offload-gb: each rank's decoder layers move to the host first to last (make_layers
  // at 0.11.0), exactly the cap; the MTP layer (layers.num_hidden_layers, the draft model's),
  // embeddings and lm_head never. 12 layers, so a plain name sort would put layers.10 and .11
  // before .2: the order is the layer index. The expected bytes come from the names and config.json.
  void vllmCpuOffloadMovesTheFirstLayersFirst() {
    wstest::TempDir d;
    synth::Options so;
    so.like = "deepseek-v3";
    so.layers = 12;
    so.mtpLayers = 1;
    so.out = d.file("dsv3");
    QVERIFY(synth::write(so).ok());
    auto c = wstest::openOrFail(so.out);
    const int64_t hidden = c->model.numLayers;
    QCOMPARE(hidden, int64_t(12));
    std::map<int64_t, uint64_t> byLayer;  // decoder layer (by name) -> bytes
    uint64_t total = 0;
    for (const auto& t : c->tensors) {
      total += t.bytes;
      static const std::regex layerName(R"(^model\.layers\.(\d+)\.)");
      std::smatch m;
      if (std::regex_search(t.name, m, layerName) && std::stoll(m[1]) < hidden) byLayer[std::stoll(m[1])] += t.bytes;
    }
    QCOMPARE(byLayer.size(), size_t(12));
    const uint64_t firstThree = byLayer[0] + byLayer[1] + byLayer[2];
    uint64_t layers = 0;
    for (const auto& [l, b] : byLayer) layers += b;
    for (const uint64_t cap : {firstThree, firstThree + 1000, layers, layers + (uint64_t(1) << 30)}) {
      plan::PlanOptions opt;
      opt.placement = plan::makePlacement(plan::PlacementKind::Linear, opt.rules->remainder, 1, c->model.numExperts).value();
      opt.cpuOffloadCap = cap;
      auto r = plan::planCheckpoint(*c, opt);
      QVERIFY(r.ok());
      const plan::RankPlan& rp = r.value().ranks[0];
      QCOMPARE(rp.host, std::min(cap, layers));
      QCOMPARE(rp.resident, total - std::min(cap, layers));
      if (cap != firstThree) continue;
      uint64_t routedLeft = 0;  // layers 3..11's routed experts stay
      for (const auto& t : c->tensors)
        if (t.role == Role::RoutedExpert && t.layer >= 3 && t.layer < hidden) routedLeft += t.bytes;
      QCOMPARE(rp.bytes[plan::RoutedExperts], routedLeft);
    }
  }

  // SGLang's --cpu-offload-gb (0.5.23 OffloaderV1): vLLM's first-layers-first walk, but the
  // parameters of MLA's kv_b_proj stay on the device (post_load_weights derives w_kc / w_vc from
  // them). With a cap past every layer, vLLM moves every decoder-layer byte and SGLang all but the
  // kv_b_proj weights, counted from the names.
  void sglangCpuOffloadKeepsKvB() {
    wstest::TempDir d;
    synth::Options so;
    so.like = "deepseek-v3";
    so.layers = 4;
    so.out = d.file("dsv3");
    QVERIFY(synth::write(so).ok());
    auto c = wstest::openOrFail(so.out);
    uint64_t layers = 0, kvB = 0;
    for (const auto& t : c->tensors) {
      if (t.layer < 0 || t.layer >= c->model.numLayers || t.role == Role::Mtp) continue;
      layers += t.bytes;
      if (t.name.find(".self_attn.kv_b_proj.") != std::string::npos) kvB += t.bytes;
    }
    QVERIFY(kvB > 0);
    for (const std::string& engine : std::vector<std::string>{"vllm", "sglang"}) {
      plan::PlanOptions opt;
      opt.placement = plan::makePlacement(plan::PlacementKind::Linear, opt.rules->remainder, 1, c->model.numExperts).value();
      opt.cpuOffloadCap = layers + (uint64_t(1) << 30);
      opt.cpuOffloadEngine = engine;
      auto r = plan::planCheckpoint(*c, opt);
      QVERIFY(r.ok());
      QCOMPARE(r.value().ranks[0].host, engine == "sglang" ? layers - kvB : layers);
    }
  }

  // llama.cpp's --n-cpu-moe N patterns, blk\.i\.ffn_(up|down|gate|gate_up)_(ch|)exps for i < N,
  // searched in each name: the routed expert tensors of the first N blocks, nothing else.
  void nCpuMoeMatchesLlamaCppsPatterns() {
    using plan::keptOnHostByNCpuMoe;
    QVERIFY(keptOnHostByNCpuMoe("blk.0.ffn_up_exps.weight", 1));
    QVERIFY(!keptOnHostByNCpuMoe("blk.1.ffn_up_exps.weight", 1));
    QVERIFY(keptOnHostByNCpuMoe("blk.1.ffn_down_exps.weight", 2));
    QVERIFY(!keptOnHostByNCpuMoe("blk.15.ffn_gate_exps.weight", 2));  // block 15, not block 1
    QVERIFY(keptOnHostByNCpuMoe("blk.15.ffn_gate_exps.weight", 16));
    QVERIFY(keptOnHostByNCpuMoe("blk.3.ffn_gate_up_exps.weight", 4));
    QVERIFY(keptOnHostByNCpuMoe("blk.3.ffn_up_chexps.weight", 4));
    QVERIFY(keptOnHostByNCpuMoe("blk.3.ffn_down_exps.scale", 4));     // any tensor the pattern finds
    QVERIFY(!keptOnHostByNCpuMoe("blk.3.ffn_up_shexp.weight", 4));    // shared experts stay
    QVERIFY(!keptOnHostByNCpuMoe("blk.3.ffn_gate_inp.weight", 4));    // the router stays
    QVERIFY(!keptOnHostByNCpuMoe("blk.3.ffn_up.weight", 4));          // dense FFN: --n-cpu-ffn's, not this
    QVERIFY(!keptOnHostByNCpuMoe("blk.03.ffn_up_exps.weight", 4));    // %d never prints a leading zero
    QVERIFY(!keptOnHostByNCpuMoe("blk.0.ffn_up_exps.weight", 0));
  }

  void capacities() {
    QCOMPARE(plan::parseSize("141GiB"), uint64_t(141) << 30);
    QCOMPARE(plan::parseSize("80GB"), uint64_t(80'000'000'000ull));
    QCOMPARE(plan::parseSize("1.5TiB"), uint64_t(3) << 39);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan::parseSize("lots"));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan::parseSize("H200-141GB"));  // a device is not a size
  }

  // Each device's total is what its driver reports (cudaMemGetInfo's MiB where measured, else
  // nvidia-smi's), pinned to the documented figure: the marketing name is 5-9 GB off.
  void deviceTotalsAsTheDriverReports() {
    const std::map<std::string, uint64_t> mib = {{"H100-80GB", 81'559}, {"H200-141GB", 143'155}, {"B200-180GB", 183'359}, {"A100-80GB", 81'152},
                                                 {"A100-40GB", 40'960}, {"L40S-48GB", 45'486}, {"GB10", 122'070}};
    QCOMPARE(plan::deviceTable().size(), mib.size());
    for (const auto& d : plan::deviceTable()) {
      QVERIFY2(mib.count(std::string(d.name)), std::string(d.name).c_str());
      QCOMPARE(d.totalMiB, mib.at(std::string(d.name)));
      QVERIFY2(!d.source.empty(), "every figure names its source");
    }
    const plan::GpuBudget h200 = plan::budgetFor("H200-141GB", 1.0);
    QCOMPARE(h200.total, uint64_t(150'108'897'280ull));  // 143,155 whole MiB of cudaMemGetInfo's 143,155.94
    QCOMPARE(plan::budgetFor("H100-80GB", 1.0).total, uint64_t(85'520'809'984ull));
    QCOMPARE(h200.contextReserve, plan::kDefaultContextReserve);
    QCOMPARE(h200.usable(), uint64_t(150'108'897'280ull) - plan::kDefaultContextReserve);
    // vLLM's budget: utilization is a share of the whole device, the context comes out of it.
    const plan::GpuBudget at90 = plan::budgetFor("H200-141GB", 0.9, int64_t(1) << 30);
    QCOMPARE(at90.usable(), uint64_t(std::floor(150'108'897'280.0 * 0.9)) - (uint64_t(1) << 30));
    // A size is the device total as given: no hidden context reserve.
    QCOMPARE(plan::budgetFor("141GiB", 1.0).usable(), uint64_t(141) << 30);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan::budgetFor("H300", 1.0));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, plan::budgetFor("H200-141GB", 1.5));
  }

};

QTEST_GUILESS_MAIN(TstPlan)
#include "tst_plan.moc"
