// Every --like x --scheme of the synthetic writer round-trips through the catalog: the model
// description, every routed expert projection, the scheme, packed parameter counts and bytes.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sys/stat.h>

#include "core/synth/family.h"
#include "core/synth/synth.h"
#include "test_support.h"

using namespace ws;
namespace fs = std::filesystem;

namespace {

bool fusedFamily(const std::string& like) { return like == "gpt-oss" || like == "qwen3-vl-moe"; }

}  // namespace

class TstSynthRoundtrip : public QObject {
  Q_OBJECT
 private slots:
  void roundTrip_data() {
    QTest::addColumn<QString>("like");
    QTest::addColumn<QString>("scheme");
    for (const auto& l : synth::families())
      for (const auto& s : synth::schemes()) QTest::newRow((l + " " + s).c_str()) << QString::fromStdString(l) << QString::fromStdString(s);
  }

  void roundTrip() {
    QFETCH(QString, like);
    QFETCH(QString, scheme);
    const std::string L = like.toStdString(), S = scheme.toStdString();
    wstest::TempDir dir;
    synth::Options o;
    o.like = L;
    o.scheme = S;
    o.out = dir.file("ckpt");
    o.shards = 3;
    auto w = synth::write(o);
    QVERIFY2(w.ok(), w.ok() ? "" : w.error().describe().c_str());
    auto c = wstest::openOrFail(o.out);
    synth::Family f = synth::presetFamily(L, "tiny");
    const bool gguf = S == "gguf-q4_k", kt = S == "kt-int8";

    QCOMPARE(c->format, std::string(gguf ? "gguf" : kt ? "ktransformers" : "safetensors"));
    QCOMPARE(c->files.size(), size_t(gguf ? 1 : 3));
    QCOMPARE(c->model.numLayers, f.layers);
    QCOMPARE(c->model.numExperts, f.experts);
    QCOMPARE(c->model.numSharedExperts, f.shared);
    QCOMPARE(c->model.expertsPerToken, f.topk);
    QCOMPARE(c->model.expertIntermediateSize, f.expertIntermediate);
    QCOMPARE(c->model.hiddenSize, f.hidden);
    std::vector<int> moe, dense, mtp;
    for (int n = 0; n < f.layers; ++n) (n < f.denseLayers ? dense : moe).push_back(n);
    for (int n = 0; n < f.mtp; ++n) mtp.push_back(int(f.layers) + n);
    QCOMPARE(c->model.moeLayers, moe);
    QCOMPARE(c->model.denseLayers, dense);
    QCOMPARE(c->model.mtpLayers, mtp);

    // Every routed expert projection of every MoE layer, in the requested scheme.
    const std::string wantScheme = S;
    std::set<std::tuple<int, int, int>> projections;  // (layer, expert or -1, projection)
    uint64_t expertParams = 0;
    std::set<uint32_t> seen;
    for (const auto& t : c->tensors) {
      if (t.role != Role::RoutedExpert || t.component != Component::Weight) continue;
      projections.insert({t.layer, t.expert, int(t.projection)});
      const LogicalTensor& l = c->logical[t.logical];
      // GGUF: Q4_K needs rows of whole 256-blocks; shorter rows fall back to Q8_0.
      QCOMPARE(l.schemeName, gguf && t.shape.back() % 256 != 0 ? std::string("gguf-q8_0") : wantScheme);
      if (seen.insert(t.logical).second) expertParams += l.parameters;
      if (!gguf && !kt && fusedFamily(L)) {
        QVERIFY(t.layout == Layout::FusedOutIn || t.layout == Layout::FusedInOut);
        QCOMPARE(t.interleaved, L == "gpt-oss" && t.projection == Projection::GateUp);
        // gpt-oss keeps [E, H, 2I] in BF16; quantized forms store out-rows first.
        Layout want = (L == "gpt-oss" && S == "bf16") ? Layout::FusedInOut : Layout::FusedOutIn;
        QCOMPARE(t.layout, want);
      }
      if (gguf) QCOMPARE(t.layout, Layout::Stacked);
    }
    size_t perLayer = (!gguf && !kt && fusedFamily(L)) ? 2 : (gguf ? 3 : size_t(3 * f.experts));
    QCOMPARE(projections.size(), moe.size() * perLayer);
    // Packed codes are counted as the weights they stand for (biases of gpt-oss excluded here).
    uint64_t biasParams = 0;
    if (L == "gpt-oss" && !gguf && !kt) biasParams = moe.size() * uint64_t(f.experts) * uint64_t(2 * f.expertIntermediate + f.hidden);
    QCOMPARE(expertParams, moe.size() * uint64_t(f.experts) * 3 * uint64_t(f.hidden) * uint64_t(f.expertIntermediate) + biasParams);

    if (!gguf) QCOMPARE(c->totalBytes(), wstest::safetensorsDataBytes(*c));
    QCOMPARE(uint64_t(c->tensors.size()), w.value().tensors);
    QVERIFY(c->notes.empty());
  }

  void fullSizeSparseDeepSeekV3() {
    wstest::TempDir dir;
    synth::Options o;
    o.like = "deepseek-v3";
    o.scheme = "fp8-block";
    o.size = "full";
    o.sparse = true;
    o.out = dir.file("dsv3");
    auto w = synth::write(o);
    QVERIFY2(w.ok(), w.ok() ? "" : w.error().describe().c_str());
    auto c = wstest::openOrFail(o.out);
    QCOMPARE(c->files.size(), size_t(163));
    QVERIFY(fs::exists(dir.file("dsv3/model-00163-of-00163.safetensors")));
    QCOMPARE(c->model.numLayers, int64_t(61));
    QCOMPARE(c->model.numExperts, int64_t(256));
    QCOMPARE(c->model.numSharedExperts, int64_t(1));
    QCOMPARE(c->model.expertsPerToken, int64_t(8));
    QCOMPARE(c->model.denseLayers, (std::vector<int>{0, 1, 2}));
    QCOMPARE(c->model.moeLayers.size(), size_t(58));
    QCOMPARE(c->model.mtpLayers, (std::vector<int>{61}));
    // Tensor count from the published layout: per dense layer 4 norms + 5 MLA projections with
    // scales (10) + 3 MLP with scales (6); per MoE layer the same attention + router weight and
    // bias + 256x3 experts with scales + 3 shared with scales; the MTP layer adds 6 tensors.
    const uint64_t attn = 4 + 10, dense = attn + 6, moeLayer = attn + 2 + 256 * 3 * 2 + 6;
    QCOMPARE(uint64_t(c->tensors.size()), 3 * dense + 58 * moeLayer + (moeLayer + 6) + 3);
    struct Want { const char* name; const char* dtype; std::vector<uint64_t> shape; };
    const Want wants[] = {
        {"model.embed_tokens.weight", "BF16", {129280, 7168}},
        {"lm_head.weight", "BF16", {129280, 7168}},
        {"model.layers.0.mlp.gate_proj.weight", "F8_E4M3", {18432, 7168}},
        {"model.layers.0.mlp.down_proj.weight_scale_inv", "F32", {56, 144}},
        {"model.layers.0.self_attn.q_a_proj.weight", "F8_E4M3", {1536, 7168}},
        {"model.layers.0.self_attn.q_b_proj.weight", "F8_E4M3", {24576, 1536}},
        {"model.layers.0.self_attn.kv_a_proj_with_mqa.weight", "F8_E4M3", {576, 7168}},
        {"model.layers.0.self_attn.kv_a_proj_with_mqa.weight_scale_inv", "F32", {5, 56}},
        {"model.layers.0.self_attn.kv_b_proj.weight", "F8_E4M3", {32768, 512}},
        {"model.layers.0.self_attn.o_proj.weight", "F8_E4M3", {7168, 16384}},
        {"model.layers.3.mlp.gate.weight", "BF16", {256, 7168}},
        {"model.layers.3.mlp.gate.e_score_correction_bias", "F32", {256}},
        {"model.layers.60.mlp.experts.255.down_proj.weight", "F8_E4M3", {7168, 2048}},
        {"model.layers.60.mlp.experts.255.down_proj.weight_scale_inv", "F32", {56, 16}},
        {"model.layers.60.mlp.shared_experts.gate_proj.weight", "F8_E4M3", {2048, 7168}},
        {"model.layers.61.eh_proj.weight", "BF16", {7168, 14336}},
        {"model.layers.61.shared_head.head.weight", "BF16", {129280, 7168}},
    };
    for (const auto& wnt : wants) {
      const TensorRecord* t = c->find(wnt.name);
      QVERIFY2(t, wnt.name);
      QCOMPARE(std::string(t->dtype->name), std::string(wnt.dtype));
      QCOMPARE(t->shape, wnt.shape);
    }
    QCOMPARE(c->find("model.layers.61.mlp.experts.7.up_proj.weight")->role, Role::Mtp);
    QCOMPARE(c->totalBytes(), wstest::safetensorsDataBytes(*c));
    QVERIFY(c->totalBytes() > (600ull << 30));  // a real DeepSeek-V3 FP8 is about 640 GiB
    // Sparse: the disk holds headers, not data.
    uint64_t allocated = 0;
    for (const auto& f : c->files) {
      struct stat st {};
      ::stat(f.path.c_str(), &st);
      allocated += uint64_t(st.st_blocks) * 512;
    }
    QVERIFY2(allocated < (256ull << 20), qPrintable(QString::number(allocated)));
  }

  void refusesNonEmptyOutput() {
    wstest::TempDir dir;
    wstest::writeFile(dir.file("keep.txt"), std::string("precious"));
    synth::Options o;
    o.out = dir.path();
    auto w = synth::write(o);
    QVERIFY(!w.ok());
    QVERIFY(QString::fromStdString(w.error().describe()).contains("not empty"));
  }
};

QTEST_GUILESS_MAIN(TstSynthRoundtrip)
#include "tst_synth_roundtrip.moc"
