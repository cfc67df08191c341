// The catalog over the real checkpoints in ../shared/fixtures: model description, roles,
// layouts, schemes and byte totals, and split GGUF == single GGUF.
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "core/model/expert_grid.h"
#include "core/model/naming.h"
#include "core/model/quant_scheme.h"
#include "core/model/tensor_tree.h"
#include "core/report/inspect_report.h"
#include "core/report/json_text.h"
#include "core/synth/synth.h"
#include "test_support.h"

using namespace ws;
namespace fs = std::filesystem;

namespace {

uint64_t indexTotalParameters(const std::string& dir) {
  std::ifstream in(dir + "/model.safetensors.index.json");
  auto j = nlohmann::json::parse(in);
  return j["metadata"]["total_parameters"].get<uint64_t>();
}

const TensorRecord& get(const Checkpoint& c, const std::string& name) {
  const TensorRecord* t = c.find(name);
  if (!t) throw std::runtime_error("missing tensor " + name);
  return *t;
}

std::string scheme(const Checkpoint& c, const std::string& name) { return c.logical[get(c, name).logical].schemeName; }

}  // namespace

class TstFixtureCatalog : public QObject {
  Q_OBJECT
 private slots:
  void qwen3Moe() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    QCOMPARE(c->files.size(), size_t(4));
    QCOMPARE(c->model.numLayers, int64_t(3));
    QCOMPARE(c->model.moeLayers, (std::vector<int>{1, 2}));
    QCOMPARE(c->model.denseLayers, (std::vector<int>{0}));
    QCOMPARE(c->model.numExperts, int64_t(8));
    QCOMPARE(c->model.numSharedExperts, int64_t(0));
    QCOMPARE(c->model.expertIntermediateSize, int64_t(128));
    QCOMPARE(c->totalBytes(), wstest::safetensorsDataBytes(*c));
    QCOMPARE(c->totalParameters(), indexTotalParameters(wstest::fixture("hf/qwen3_moe")));
    QVERIFY(c->notes.empty());  // index and shards agree
    for (const auto& l : c->logical) QCOMPARE(l.schemeName, std::string("bf16"));
    int experts = 0;
    for (const auto& t : c->tensors)
      if (t.role == Role::RoutedExpert) {
        ++experts;
        QVERIFY(t.layer == 1 || t.layer == 2);
        QVERIFY(t.expert >= 0 && t.expert < 8);
        QVERIFY(t.projection != Projection::None);
      }
    QCOMPARE(experts, 2 * 8 * 3);
    // numeric-aware order: expert 2 before expert 10 is checked in tst_naming; here 0..7 ascend
    QVERIFY(c->find("model.layers.1.mlp.experts.7.up_proj.weight") > c->find("model.layers.1.mlp.experts.1.up_proj.weight"));
  }

  void qwen3MoeFp8() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe_fp8"));
    QCOMPARE(c->model.quant.method, std::string("fp8"));
    QCOMPARE(c->model.quant.blockSize, (std::vector<int64_t>{128, 128}));
    QCOMPARE(c->totalBytes(), wstest::safetensorsDataBytes(*c));
    int fp8 = 0, squeezed = 0;
    for (const auto& l : c->logical) {
      const TensorRecord& w = c->tensors[size_t(l.weight)];
      if (w.dtype->name == "F8_E4M3") {
        ++fp8;
        QCOMPARE(l.schemeName, std::string("fp8-block"));
        QCOMPARE(l.members.size(), size_t(2));  // the weight and its weight_scale_inv
        for (uint32_t m : l.members)
          if (c->tensors[m].component == Component::Scale && c->tensors[m].shape.size() == 1) ++squeezed;
      } else {
        QCOMPARE(l.schemeName, std::string("bf16"));
      }
    }
    QCOMPARE(fp8, 7 + 2 * (8 * 3 + 4));  // layer 0: 4 attn + 3 dense; layers 1-2: 24 experts + 4 attn each
    QVERIFY(squeezed > 0);                 // transformers 5 writes per-expert scales as 1-D
    QCOMPARE(get(*c, "model.layers.1.mlp.experts.3.up_proj.weight_scale_inv").shape, (std::vector<uint64_t>{2}));
    // Same model before quantization: the same parameter count.
    auto bf16 = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    QCOMPARE(c->totalParameters(), bf16->totalParameters());
    QCOMPARE(c->logical.size(), bf16->logical.size());
  }

  void deepseekV3() {
    auto c = wstest::openOrFail(wstest::fixture("hf/deepseek_v3"));
    QCOMPARE(c->model.numExperts, int64_t(16));
    QCOMPARE(c->model.numSharedExperts, int64_t(1));
    QCOMPARE(c->model.moeLayers, (std::vector<int>{1, 2}));
    QCOMPARE(c->model.mtpLayers, (std::vector<int>{3}));  // declared by config; transformers does not save it
    QCOMPARE(c->totalBytes(), wstest::safetensorsDataBytes(*c));
    QCOMPARE(c->totalParameters(), indexTotalParameters(wstest::fixture("hf/deepseek_v3")));
    QCOMPARE(get(*c, "model.layers.1.mlp.gate.e_score_correction_bias").role, Role::Router);
    QCOMPARE(get(*c, "model.layers.2.mlp.shared_experts.down_proj.weight").role, Role::SharedExpert);
    QCOMPARE(get(*c, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight").role, Role::Attention);
    QCOMPARE(get(*c, "model.layers.0.self_attn.kv_a_layernorm.weight").role, Role::Norm);
    for (const auto& l : c->logical) QCOMPARE(l.schemeName, std::string("bf16"));  // transformers saved even the bias buffer in BF16
  }

  void mixtral() {
    auto c = wstest::openOrFail(wstest::fixture("hf/mixtral"));
    QCOMPARE(c->files.size(), size_t(1));
    QCOMPARE(c->model.moeLayers, (std::vector<int>{0, 1}));
    QCOMPARE(c->model.expertIntermediateSize, int64_t(256));  // Mixtral sizes experts with intermediate_size
    QCOMPARE(get(*c, "model.layers.0.block_sparse_moe.experts.3.w2.weight").projection, Projection::Down);
    QCOMPARE(get(*c, "model.layers.0.block_sparse_moe.gate.weight").role, Role::Router);
    QCOMPARE(c->totalBytes(), wstest::safetensorsDataBytes(*c));
    for (const auto& l : c->logical) QCOMPARE(l.schemeName, std::string("bf16"));
  }

  void qwen3VlMoeFusedOrientation() {
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_vl_moe"));
    QCOMPARE(c->model.hiddenSize, int64_t(256));
    QCOMPARE(c->model.numLayers, int64_t(2));
    const auto& gu = get(*c, "model.language_model.layers.0.mlp.experts.gate_up_proj");
    const auto& down = get(*c, "model.language_model.layers.0.mlp.experts.down_proj");
    // 2I == H, so gate_up's shape [8,256,256] cannot tell; down_proj [8,256,128] = [E,H,I] can.
    QCOMPARE(gu.layout, Layout::FusedOutIn);
    QCOMPARE(down.layout, Layout::FusedOutIn);
    QVERIFY(!gu.interleaved);
    QCOMPARE(gu.expert, -1);
    int vision = 0;
    for (const auto& t : c->tensors) vision += t.role == Role::Vision;
    QCOMPARE(vision, 27);
    for (const auto& l : c->logical) QCOMPARE(l.schemeName, std::string("bf16"));
    QCOMPARE(c->totalBytes(), wstest::safetensorsDataBytes(*c));
  }

  // The expert grid (Experts tab, HTML report, inspect --json): a row's bytes add up to the
  // catalog's expert and MLP tensors of that layer, and a fused tensor gives each expert its share.
  void expertGridAddsUp() {
    for (const std::string& p : wstest::fixtureCheckpoints()) {
      auto c = wstest::openOrFail(wstest::fixture(p));
      const ExpertGrid g = expertGrid(*c);
      std::map<int, uint64_t> want, got;
      for (const auto& t : c->tensors)
        if (t.layer >= 0 && (t.role == Role::RoutedExpert || t.role == Role::SharedExpert || t.role == Role::DenseMlp)) want[t.layer] += t.bytes;
      for (int l = 0; l < g.layers; ++l)
        for (int64_t e = -1; e < g.experts; ++e) got[l] += g.at(l, e).bytes;
      for (auto it = got.begin(); it != got.end();) it = it->second ? std::next(it) : got.erase(it);
      QVERIFY2(got == want, p.c_str());
    }
    auto vl = wstest::openOrFail(wstest::fixture("hf/qwen3_vl_moe"));
    const ExpertGrid g = expertGrid(*vl);
    const uint64_t fused = get(*vl, "model.language_model.layers.0.mlp.experts.gate_up_proj").bytes + get(*vl, "model.language_model.layers.0.mlp.experts.down_proj").bytes;
    QCOMPARE(g.experts, int64_t(8));
    for (int64_t e = 0; e < 8; ++e) {
      QCOMPARE(g.at(0, e).bytes, fused / 8);
      QCOMPARE(g.at(0, e).tensors, 2u);
    }
    auto gguf = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    const ExpertGrid gg = expertGrid(*gguf);
    QVERIFY(gg.denseLayers.empty());
    QCOMPARE(gg.at(0, 3).tensors, 3u);  // stacked gate, up and down each touch expert 3
  }

  // The tensor tree (the GUI's tree, inspect's text tree): every tensor once, bytes summed up the
  // tree, experts under their module, names cut below their group.
  void tensorTreeHoldsEveryTensorOnce() {
    for (const std::string& p : wstest::fixtureCheckpoints()) {
      auto c = wstest::openOrFail(wstest::fixture(p));
      const TensorTree tree = tensorTree(*c);
      QCOMPARE(tree.nodes[0].bytes, c->totalBytes());
      std::vector<int> seen(c->tensors.size(), 0);
      for (size_t i = 1; i < tree.nodes.size(); ++i) {
        const TreeNode& n = tree.nodes[i];
        QCOMPARE(tree.nodes[n.parent].children[n.row], uint32_t(i));
        uint64_t sum = 0;
        for (uint32_t k : n.children) sum += tree.nodes[k].bytes;
        if (n.kind == TreeNode::Kind::Tensor) {
          ++seen[size_t(n.tensor)];
          QCOMPARE(tree.nodeOfTensor[size_t(n.tensor)], uint32_t(i));
          QCOMPARE(n.bytes, c->tensors[size_t(n.tensor)].bytes);
        } else {
          QCOMPARE(n.bytes, sum);
        }
      }
      QVERIFY2(std::all_of(seen.begin(), seen.end(), [](int k) { return k == 1; }), p.c_str());
    }
    auto c = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    const TensorTree tree = tensorTree(*c);
    const auto tensor = uint32_t(&get(*c, "model.layers.1.mlp.experts.7.down_proj.weight") - c->tensors.data());
    const TreeNode& leaf = tree.nodes[tree.nodeOfTensor[tensor]];
    QCOMPARE(nodeLabel(*c, leaf), std::string("down_proj.weight"));
    QCOMPARE(nodeLabel(*c, tree.nodes[leaf.parent]), std::string("expert 7"));
    QCOMPARE(nodeLabel(*c, tree.nodes[tree.nodes[leaf.parent].parent]), std::string("routed experts"));
    QCOMPARE(nodeLabel(*c, tree.nodes[tree.nodes[tree.nodes[leaf.parent].parent].parent]), std::string("layer 1 (MoE)"));
    // --filter keeps only what matches, and the sums follow.
    const TensorTree some = tensorTree(*c, [](const TensorRecord& t) { return t.expert == 3; });
    uint64_t want = 0;
    for (const auto& t : c->tensors) want += t.expert == 3 ? t.bytes : 0;
    QCOMPARE(some.nodes[0].bytes, want);
  }

  // inspect --json is written as text, not built as a document: its strings are escaped exactly as
  // nlohmann::json escapes them, and on every fixture it parses to one entry per tensor.
  void inspectJsonTextParses() {
    const std::string tricky[] = {"plain", "quote\"back\\slash", std::string("nul\0tab\tnl\nbell\a\x1f", 17), "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80", "", "\x7f"};
    for (const std::string& s : tricky) {
      std::string out;
      jsontext::appendString(out, s);
      QCOMPARE(out, nlohmann::json(s).dump());
      QCOMPARE(nlohmann::json::parse(out).get<std::string>(), s);
    }
    for (const std::string& p : wstest::fixtureCheckpoints()) {
      auto c = wstest::openOrFail(wstest::fixture(p));
      const nlohmann::json doc = nlohmann::json::parse(inspectJsonText(*c, {}));
      QCOMPARE(doc["tensors"].size(), c->tensors.size());
      for (size_t i = 0; i < c->tensors.size(); i += 7) {
        const auto& t = doc["tensors"][i];
        QCOMPARE(t["name"].get<std::string>(), c->tensors[i].name);
        QCOMPARE(t["offset"].get<uint64_t>(), c->tensors[i].offset);
        QCOMPARE(t["shape"].get<std::vector<uint64_t>>(), c->tensors[i].shape);
        QCOMPARE(t["layer"].is_null(), c->tensors[i].layer < 0);
      }
      QCOMPARE(doc["totals"]["bytes"].get<uint64_t>(), c->totalBytes());
    }
  }

  // inspect --json's "prefixes" on the fixtures and on a synth checkpoint of every family: each
  // tensor counted once, under the prefix its family writes (synth/family.cpp) or a tower's own.
  void prefixesOfRealAndSynthCheckpoints() {
    auto prefixes = [](const Checkpoint& c) {
      std::map<std::string, uint64_t> m;
      uint64_t total = 0;
      const nlohmann::json doc = nlohmann::json::parse(inspectJsonText(c, {}));
      for (const auto& p : doc["prefixes"]) {
        m[p["prefix"].get<std::string>() + "|" + p["part"].get<std::string>()] += p["tensors"].get<uint64_t>();
        total += p["tensors"].get<uint64_t>();
      }
      return std::make_pair(m, total);
    };
    const std::map<std::string, std::vector<std::string>> fixtures = {
        {"hf/qwen3_moe", {"model.|model", "|model"}},
        {"hf/mixtral", {"model.|model", "|model"}},
        {"hf/deepseek_v3", {"model.|model", "|model"}},
        {"hf/qwen3_vl_moe", {"model.language_model.|model", "model.visual.|tower", "|model"}},
        {"gguf/tiny-qwen3moe-kquants.gguf", {"|model"}},
    };
    for (const auto& [path, want] : fixtures) {
      auto c = wstest::openOrFail(wstest::fixture(path));
      auto [got, total] = prefixes(*c);
      std::vector<std::string> keys;
      for (const auto& [k, n] : got) keys.push_back(k);
      std::sort(keys.begin(), keys.end());
      std::vector<std::string> sortedWant = want;
      std::sort(sortedWant.begin(), sortedWant.end());
      std::string seen;
      for (const auto& k : keys) seen += k + " ";
      QVERIFY2(keys == sortedWant, (path + ": " + seen).c_str());
      QCOMPARE(total, uint64_t(c->tensors.size()));
      // The prefixes namePrefix itself finds in the names (the seed detects the prefix before it
      // classifies a name) are the expected ones, whatever part inspect files them under.
      std::set<std::string> fromNames, expected;
      for (const auto& t : c->tensors) fromNames.insert(namePrefix(t.name));
      for (const auto& w : want) expected.insert(w.substr(0, w.find('|')));
      QVERIFY2(fromNames == expected, (path + ": namePrefix finds other prefixes than expected").c_str());
      if (got.count("|model")) QCOMPARE(got["|model"], uint64_t(path.starts_with("gguf") ? c->tensors.size() : 1));  // lm_head alone at the root
    }
    for (const std::string& like : synth::families()) {
      wstest::TempDir d;
      synth::Options o;
      o.like = like;
      o.scheme = "bf16";
      o.out = d.file("c");
      QVERIFY(synth::write(o).ok());
      auto c = wstest::openOrFail(o.out);
      auto [got, total] = prefixes(*c);
      QCOMPARE(total, uint64_t(c->tensors.size()));
      const std::string text = like == "qwen3-vl-moe" ? "model.language_model.|model" : "model.|model";
      QVERIFY2(got.count(text) && got[text] > got.size(), (like + ": no " + text).c_str());
      QCOMPARE(got.count("model.visual.|tower") > 0, like == "qwen3-vl-moe");
    }
  }

  void ggufSingle() {
    auto c = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    QCOMPARE(c->format, std::string("gguf"));
    QCOMPARE(c->model.architecture, std::string("qwen3moe"));
    QCOMPARE(c->model.numLayers, int64_t(2));
    QCOMPARE(c->model.numExperts, int64_t(8));
    QCOMPARE(c->model.expertsPerToken, int64_t(2));
    const auto& gate = get(*c, "blk.0.ffn_gate_exps.weight");
    QCOMPARE(gate.shape, (std::vector<uint64_t>{8, 256, 256}));
    QCOMPARE(gate.layout, Layout::Stacked);
    QCOMPARE(scheme(*c, "blk.0.ffn_gate_exps.weight"), std::string("gguf-q2_k"));
    QCOMPARE(scheme(*c, "blk.1.ffn_gate_exps.weight"), std::string("gguf-mxfp4"));
    QCOMPARE(scheme(*c, "blk.1.attn_q.weight"), std::string("f16"));
    QCOMPARE(scheme(*c, "output_norm.weight"), std::string("f32"));
    QCOMPARE(get(*c, "token_embd.weight").shape, (std::vector<uint64_t>{1024, 256}));  // ggml ne [256, 1024]
    for (const auto& t : c->tensors) {  // every logical tensor: gguf-<type> for block types, else the plain type
      std::string want(t.dtype->name);
      for (auto& ch : want) ch = char(std::tolower(ch));
      if (t.dtype->isBlockQuant()) want = "gguf-" + want;
      QCOMPARE(c->logical[t.logical].schemeName, want);
      QCOMPARE(c->logical[t.logical].members.size(), size_t(1));
    }
    // totals: every tensor's bytes lie inside the file's data section
    uint64_t sum = 0;
    for (const auto& t : c->tensors) {
      sum += t.bytes;
      QVERIFY(t.offset + t.bytes <= c->files[t.file].size);
      QCOMPARE(t.offset % 32, uint64_t(0));
    }
    QCOMPARE(sum, c->totalBytes());
  }

  void splitGgufEqualsSingle() {
    auto single = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    // Any part of the set opens the whole set.
    for (const char* part : {"gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf", "gguf/tiny-qwen3moe-kquants-00002-of-00002.gguf"}) {
      auto split = wstest::openOrFail(wstest::fixture(part));
      QCOMPARE(split->files.size(), size_t(2));
      QCOMPARE(split->tensors.size(), single->tensors.size());
      QCOMPARE(split->model.architecture, single->model.architecture);
      QCOMPARE(split->model.numLayers, single->model.numLayers);
      QCOMPARE(split->model.moeLayers, single->model.moeLayers);
      QCOMPARE(split->model.numExperts, single->model.numExperts);
      QCOMPARE(split->totalBytes(), single->totalBytes());
      QCOMPARE(split->totalParameters(), single->totalParameters());
      for (size_t i = 0; i < single->tensors.size(); ++i) {
        const auto& a = single->tensors[i];
        const auto& b = split->tensors[i];
        QCOMPARE(b.name, a.name);
        QCOMPARE(b.dtype, a.dtype);
        QCOMPARE(b.shape, a.shape);
        QCOMPARE(b.bytes, a.bytes);
        QCOMPARE(b.role, a.role);
        QCOMPARE(b.layout, a.layout);
        QCOMPARE(split->logical[b.logical].schemeName, single->logical[a.logical].schemeName);
        // The bytes are not compared: ggml wrote the split set from its own random weights
        // (gguf-py shows every tensor's data differs from the single file), so only the catalog
        // is the same.
      }
      // blk.1 lives in the second split, everything else in the first (gguf-split's layout here).
      for (const auto& t : split->tensors) QCOMPARE(t.file, t.name.rfind("blk.1.", 0) == 0 ? 1u : 0u);
    }
  }

  void missingShardIsNamed() {
    wstest::TempDir d;
    fs::copy(wstest::fixture("hf/qwen3_moe"), d.path(), fs::copy_options::recursive);
    for (auto& e : fs::directory_iterator(d.path())) fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
    fs::remove(d.file("model-00003-of-00004.safetensors"));
    auto r = openCheckpoint(d.path());
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::MissingShard);
    QVERIFY(QString::fromStdString(r.error().describe()).contains("model-00003-of-00004.safetensors"));
  }

  void missingSplitIsNamed() {
    wstest::TempDir d;
    fs::copy(wstest::fixture("gguf/tiny-qwen3moe-kquants-00001-of-00002.gguf"), d.file("m-00001-of-00002.gguf"));
    auto r = openCheckpoint(d.file("m-00001-of-00002.gguf"));
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::MissingShard);
    QVERIFY(QString::fromStdString(r.error().describe()).contains("m-00002-of-00002.gguf"));
  }

  void notACheckpoint() {
    wstest::TempDir d;
    auto r = openCheckpoint(d.path());
    QVERIFY(!r);
    QCOMPARE(r.error().code, ErrorCode::NotACheckpoint);
    auto r2 = openCheckpoint(d.file("nothing-here"));
    QVERIFY(!r2);
    QCOMPARE(r2.error().code, ErrorCode::Io);
  }
};

QTEST_GUILESS_MAIN(TstFixtureCatalog)
#include "tst_fixture_catalog.moc"
