// diff's own wiring, beside the reference comparisons of tests/scripts/diff_reference.py: the
// device dequantizer is used when registered (and not when turned off), its values are what the
// report is made of, and the kernels' bodies give the CPU decoders' report.
#include <QtTest>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/diff/diff.h"
#include "core/numerics/dequant.h"
#include "core/numerics/device_dequant.h"
#include "core/numerics/kernel_threads.h"
#include "core/synth/synth.h"
#include "corpus_support.h"
#include "test_support.h"

using namespace ws;

// A copy of a GGUF with one UINT32 key's value rewritten in place (the key found by its name's
// bytes; its value sits after the name and the 4-byte type).
std::string withU32(const std::string& gguf, const std::string& key, uint32_t value, const std::string& out) {
  std::ifstream in(gguf, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = bytes.find(key);
  if (at == std::string::npos) qFatal("%s has no key %s", gguf.c_str(), key.c_str());
  std::memcpy(bytes.data() + at + key.size() + 4, &value, 4);
  wstest::writeFile(out, bytes);
  return out;
}

// The F32 dequantization kernels' per-thread bodies over their launch grid, on the CPU.
Result<std::vector<float>> kernelBodiesOnTheCpu(const Checkpoint& c, uint32_t logical, uint64_t firstRow, uint64_t rows) {
  auto d = num::makeDecoder(c, logical);
  if (!d) return d.error();
  const num::DecodeDesc desc = d.value()->describe();
  const uint64_t cols = d.value()->cols();
  std::vector<float> v(rows * cols, -12345.0f);
  if (desc.kind == num::DescKind::GgufBlocks) {
    const uint64_t perRow = cols / desc.blockElems;
    num::emulateGrid(num::launchGrid(rows * perRow), [&](num::ThreadIndex t) { num::blocksThread(desc, firstRow * perRow, rows * perRow, v.data(), t); });
  } else {
    num::emulateGrid(num::launchGrid(rows * cols), [&](num::ThreadIndex t) { num::elementsThread(desc, firstRow, rows, v.data(), t); });
  }
  return v;
}

class TstDiff : public QObject {
  Q_OBJECT
  const Checkpoint* b_ = nullptr;  // the side the faulty stand-in device gets wrong

 private slots:
  // A stand-in device running the CUDA kernels' per-thread bodies over their launch grid on the
  // CPU (kernel_threads.h): diff uses it when registered, never when turned off, and its report
  // equals the CPU decoders' - which checks the kernel bodies through the diff path.
  void usesTheRegisteredDevice() {
    auto a = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    auto b = wstest::openOrFail(wstest::fixture("hf/qwen3_moe_fp8"));
    std::atomic<int> calls{0};
    num::registerDeviceDequant([&](const Checkpoint& c, uint32_t logical, uint64_t firstRow, uint64_t rows) {
      ++calls;
      return kernelBodiesOnTheCpu(c, logical, firstRow, rows);
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

  // The report is made from what the device returns: a device that gets one value of one tensor
  // wrong makes exactly that pair differ in exactly one element.
  void reportsWhatTheDeviceReturns() {
    auto a = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    const std::string wrong = "model.layers.1.mlp.experts.3.up_proj";  // a logical name
    num::registerDeviceDequant([&](const Checkpoint& c, uint32_t logical, uint64_t firstRow, uint64_t rows) {
      auto v = kernelBodiesOnTheCpu(c, logical, firstRow, rows);
      if (v && &c == b_ && c.logical[logical].name == wrong && firstRow == 0) v.value()[7] += 1.0f;
      return v;
    }, "test:0");
    auto b = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    b_ = b.get();
    auto r = diff::diffCheckpoints(*a, *b, diff::DiffOptions{});
    num::unregisterDeviceDequant();
    b_ = nullptr;
    QVERIFY(r.ok());
    int differing = 0;
    for (const auto& p : r.value().pairs) {
      const bool isWrong = p.pair.key == "blk.1.ffn_up_exps.3";
      QVERIFY2(p.metrics.identical != isWrong, p.pair.key.c_str());
      if (isWrong) QCOMPARE(p.metrics.differing, uint64_t(1));
      differing += !p.metrics.identical;
    }
    QCOMPARE(differing, 1);
  }

  // diff's metadata (issue 53 item 3): the qwen3_moe fixture against a copy whose config.json
  // routes 4 experts a token and has a key of its own, and whose generation_config.json lost
  // use_cache - exactly those three, with both values; against itself, none. A GGUF against a copy
  // with expert_used_count 4: that key; against itself, none.
  void metadataDifferences() {
    wstest::TempDir d;
    const std::string copy = d.file("copy");
    wstest::copyCheckpoint(wstest::fixture("hf/qwen3_moe"), copy);
    wstest::editJson(copy + "/config.json", [](nlohmann::ordered_json& j) { j["num_experts_per_tok"] = 4, j["added_by_test"] = "yes"; });
    wstest::editJson(copy + "/generation_config.json", [](nlohmann::ordered_json& j) { j.erase("use_cache"); });
    auto a = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    auto b = wstest::openOrFail(copy);
    QVERIFY(diff::diffMetadata(*a, *a).empty());
    const auto m = diff::diffMetadata(*a, *b);
    QCOMPARE(m.size(), size_t(3));
    QCOMPARE(m[0].source, std::string("config.json"));
    QCOMPARE(m[0].key, std::string("/added_by_test"));
    QVERIFY(!m[0].a && m[0].b == std::string("\"yes\""));
    QCOMPARE(m[1].key, std::string("/num_experts_per_tok"));
    QVERIFY(m[1].a == std::string("2") && m[1].b == std::string("4"));
    QCOMPARE(m[2].source, std::string("generation_config.json"));
    QVERIFY(m[2].key == "/use_cache" && m[2].a == std::string("true") && !m[2].b);
    // The report carries them (diff_report: JSON "metadata", the text's metadata section).
    auto r = diff::diffCheckpoints(*a, *b, diff::DiffOptions{});
    QVERIFY(r.ok());
    QCOMPARE(r.value().metadata.size(), size_t(3));

    const std::string gguf = wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"), key = "qwen3moe.expert_used_count";
    auto g = wstest::openOrFail(gguf);
    auto h = wstest::openOrFail(withU32(gguf, key, 4, d.file("patched.gguf")));
    QVERIFY(diff::diffMetadata(*g, *g).empty());
    // tokenizer.json: the same vocabulary size with one token renamed, a merge added, an added
    // token moved to another id - each a difference; an identical file none.
    const auto tokenizer = [](const std::string& renamed, bool extraMerge, int eos) {
      nlohmann::json t = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {renamed, 1}, {"ab", 2}}}, {"merges", extraMerge ? nlohmann::json{"a b", "ab b"} : nlohmann::json{"a b"}}}},
                          {"added_tokens", {{{"id", eos}, {"content", "<eos>"}, {"special", true}}}}};
      return t.dump();
    };
    const std::string ta = d.file("ta"), tb = d.file("tb");
    wstest::copyCheckpoint(wstest::fixture("hf/mixtral"), ta);
    wstest::copyCheckpoint(wstest::fixture("hf/mixtral"), tb);
    wstest::writeFile(ta + "/tokenizer.json", tokenizer("b", false, 3));
    wstest::writeFile(tb + "/tokenizer.json", tokenizer("c", true, 4));
    auto x = wstest::openOrFail(ta);
    auto y = wstest::openOrFail(tb);
    QVERIFY(diff::diffMetadata(*x, *x).empty());
    std::vector<std::string> keys;
    for (const auto& t : diff::diffMetadata(*x, *y))
      if (t.source == "tokenizer.json") keys.push_back(t.key);
    QCOMPARE(keys, (std::vector<std::string>{"/added_tokens/<eos>", "/model/merges (entries)", "/model/merges (hash of the text)", "/model/vocab (hash of the text)"}));
    const auto gm = diff::diffMetadata(*g, *h);
    QCOMPARE(gm.size(), size_t(1));
    QVERIFY(gm[0].source == "gguf" && gm[0].key == key && gm[0].a == std::string("2") && gm[0].b == std::string("4"));
  }

  // An HF folder against its llama.cpp conversion (tests/data/llama_cpp: the converter itself
  // wrote them from these synth sources, README there): every key the converter derives from
  // config.json agrees, both ways and for BF16 and Q8_0 - DeepSeek's MLA keys by its own formula.
  // A changed rope_theta, a patched expert_used_count and a changed kv_lora_rank each show as one
  // difference naming both keys.
  void convertedKeysAgainstTheirGguf() {
    wstest::TempDir d;
    struct Source {
      std::string like;
      int64_t denseLayers, intermediate, denseIntermediate;
    };
    std::map<std::string, std::string> hf;
    for (const Source& s : std::vector<Source>{{"mixtral", -1, 32, -1}, {"deepseek-v3", 1, 32, 64}, {"glm-4.5", 1, 32, 64}, {"gpt-oss", -1, 64, -1}}) {
      synth::Options o;
      o.like = s.like, o.scheme = "bf16", o.shards = 1, o.layers = 2, o.experts = 4, o.hidden = 64, o.expertIntermediate = s.intermediate, o.vocab = 1000;
      o.denseLayers = s.denseLayers, o.denseIntermediate = s.denseIntermediate, o.mtpLayers = s.like == "mixtral" || s.like == "gpt-oss" ? -1 : 0;
      o.out = d.file(s.like);
      QVERIFY(synth::write(o).ok());
      hf[s.like] = o.out;
      auto a = wstest::openOrFail(o.out);
      for (const char* kind : {"bf16", "q8_0"}) {
        auto g = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/" + s.like + "-" + kind + ".gguf");
        for (const auto& m : diff::diffMetadata(*a, *g)) QFAIL((s.like + ": " + m.key + ": " + m.a.value_or("-") + " / " + m.b.value_or("-")).c_str());
        QVERIFY(diff::diffMetadata(*g, *a).empty());
      }
    }
    const std::string gguf = wstest::sourceDir() + "/tests/data/llama_cpp/mixtral-bf16.gguf";
    auto g = wstest::openOrFail(gguf);
    wstest::editJson(hf["mixtral"] + "/config.json", [](nlohmann::ordered_json& j) { j["rope_theta"] = 500000.0; });
    auto a = wstest::openOrFail(hf["mixtral"]);
    const auto rope = diff::diffMetadata(*a, *g);  // the GGUF holds 1e6, though its source named no theta
    QCOMPARE(rope.size(), size_t(1));
    QVERIFY2(rope[0].source == "config.json -> gguf" && rope[0].key == "rope_theta -> llama.rope.freq_base" && rope[0].a == std::string("500000.0") && rope[0].b == std::string("1000000.0"),
             (rope[0].key + " " + rope[0].a.value_or("-") + " " + rope[0].b.value_or("-")).c_str());
    wstest::editJson(hf["mixtral"] + "/config.json", [](nlohmann::ordered_json& j) { j.erase("rope_theta"); });

    auto h = wstest::openOrFail(withU32(gguf, "llama.expert_used_count", 3, d.file("patched.gguf")));
    auto b = wstest::openOrFail(hf["mixtral"]);
    const auto used = diff::diffMetadata(*h, *b);  // the GGUF as A: its value on the A side
    QCOMPARE(used.size(), size_t(1));
    QVERIFY(used[0].key == "num_experts_per_tok -> llama.expert_used_count" && used[0].a == std::string("3") && used[0].b == std::string("2"));

    wstest::editJson(hf["deepseek-v3"] + "/config.json", [](nlohmann::ordered_json& j) { j["kv_lora_rank"] = j["kv_lora_rank"].get<int>() * 2; });
    auto ds = wstest::openOrFail(hf["deepseek-v3"]);
    auto dg = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/deepseek-v3-bf16.gguf");
    std::set<std::string> keys;
    for (const auto& m : diff::diffMetadata(*ds, *dg)) keys.insert(m.key);
    QCOMPARE(keys, (std::set<std::string>{"kv_lora_rank + qk_rope_head_dim -> deepseek2.attention.key_length", "kv_lora_rank -> deepseek2.attention.value_length"}));
  }

  // Qwen3-VL-MoE against itself: the vision tower's norms keep keys of their own instead of all
  // becoming the model's output_norm (which left two of three unmatched), so every tensor meets
  // its twin and each key names one pair.
  void visionTowerKeepsItsOwnKeys() {
    auto a = wstest::openOrFail(wstest::fixture("hf/qwen3_vl_moe"));
    auto b = wstest::openOrFail(wstest::fixture("hf/qwen3_vl_moe"));
    auto r = diff::diffCheckpoints(*a, *b, diff::DiffOptions{});
    QVERIFY(r.ok());
    QVERIFY2(r.value().onlyA.empty() && r.value().onlyB.empty(), (std::to_string(r.value().onlyA.size()) + " only in A").c_str());
    std::set<std::string> keys;
    int visionNorms = 0;
    for (const auto& p : r.value().pairs) {
      QVERIFY2(keys.insert(p.pair.key).second, p.pair.key.c_str());
      QCOMPARE(p.nameA, p.nameB);
      QVERIFY2(p.metrics.identical, p.pair.key.c_str());
      visionNorms += p.nameA.find("visual") != std::string::npos && p.nameA.find("norm") != std::string::npos;
    }
    QVERIFY(visionNorms >= 2);
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

  // A file cut short after both sides were opened: the BF16 weights are read through the
  // mapping, whose pages past the new end raise SIGBUS. The pair that reads them reports the
  // file and where it ends; the other pair is compared; the process lives (MappedReadGuard).
  void aFileCutDuringTheDiffFailsItsPair() {
    wstest::TempDir d;
    std::vector<uint8_t> bf16(128 * 128 * 2);
    for (size_t i = 0; i < bf16.size(); i += 2) bf16[i] = uint8_t(i), bf16[i + 1] = 0x3C;
    wstest::SafetensorsBuilder b;
    b.add("model.layers.0.self_attn.q_proj.weight", "BF16", {128, 128}, bf16).add("model.layers.0.self_attn.o_proj.weight", "BF16", {128, 128}, bf16);
    const std::string pathA = d.file("a.safetensors"), pathB = d.file("b.safetensors");
    b.write(pathA);
    b.write(pathB);
    auto a = wstest::openOrFail(pathA);
    auto c = wstest::openOrFail(pathB);
    const uint64_t cut = std::filesystem::file_size(pathB) - 20000;  // pages before o_proj's end
    std::filesystem::resize_file(pathB, cut);
    diff::DiffOptions opt;
    opt.useDevice = false;
    auto r = diff::diffCheckpoints(*a, *c, opt);
    QVERIFY(r.ok());
    QCOMPARE(r.value().pairs.size(), size_t(2));
    for (const auto& p : r.value().pairs) {
      if (p.nameA.find("o_proj") == std::string::npos) {
        QVERIFY2(p.error.empty() && p.metrics.identical, p.error.c_str());
        continue;
      }
      QVERIFY2(p.error.find(pathB) != std::string::npos, p.error.c_str());
      QVERIFY2(p.error.find("file ended early") != std::string::npos, p.error.c_str());
      QVERIFY2(p.error.find("offset " + std::to_string(cut)) != std::string::npos, p.error.c_str());
    }
    QCOMPARE(r.value().errors, uint64_t(1));
  }
};

QTEST_GUILESS_MAIN(TstDiff)
#include "tst_diff.moc"
