// Companion pairing and scheme naming for schemes the fixtures do not cover, on hand-built files.
#include <QtTest>

#include <cstring>
#include <set>

#include "core/model/dtype.h"
#include "core/numerics/dequant.h"
#include "core/plan/ep_plan.h"
#include "core/synth/synth.h"
#include "core/validate/validator.h"
#include "corpus_support.h"
#include "test_support.h"

using namespace ws;

namespace {

const LogicalTensor& logicalOf(const Checkpoint& c, const std::string& tensor) {
  const TensorRecord* t = c.find(tensor);
  if (!t) throw std::runtime_error("missing " + tensor);
  return c.logical[t->logical];
}

}  // namespace

class TstQuantScheme : public QObject {
  Q_OBJECT
 private slots:
  void schemes() {
    wstest::TempDir d;
    const std::string p = "model.layers.0.mlp.";
    wstest::SafetensorsBuilder()
        // FP8 per-tensor, per-channel, unscaled
        .add(p + "experts.0.gate_proj.weight", "F8_E4M3", {64, 32})
        .add(p + "experts.0.gate_proj.weight_scale", "F32", {})
        .add(p + "experts.0.up_proj.weight", "F8_E4M3", {64, 32})
        .add(p + "experts.0.up_proj.weight_scale", "F32", {64, 1})
        .add(p + "experts.0.down_proj.weight", "F8_E5M2", {32, 64})
        // RAWINT4: U8-packed codes, BF16 group scales, weight_shape
        .add(p + "experts.1.gate_proj.weight_packed", "U8", {64, 16})
        .add(p + "experts.1.gate_proj.weight_scale", "BF16", {64, 1})
        .add(p + "experts.1.gate_proj.weight_shape", "I64", {2}, wstest::int64Bytes({64, 32}))
        // compressed-tensors int8 asymmetric with zero points and g_idx
        .add(p + "experts.1.up_proj.weight_packed", "I32", {64, 8})
        .add(p + "experts.1.up_proj.weight_scale", "BF16", {64, 1})
        .add(p + "experts.1.up_proj.weight_zero_point", "I32", {8, 1})
        .add(p + "experts.1.up_proj.weight_g_idx", "I32", {32})
        .add(p + "experts.1.up_proj.weight_shape", "I64", {2}, wstest::int64Bytes({64, 32}))
        // NVFP4 stored with the F4 dtype itself
        .add(p + "experts.1.down_proj.weight", "F4", {32, 64})
        .add(p + "experts.1.down_proj.weight_scale", "F8_E4M3", {32, 4})
        .add(p + "experts.1.down_proj.weight_scale_2", "F32", {})
        // MLX affine 4-bit: u32 words, scales and biases per group of 64
        .add(p + "switch_mlp.gate_proj.weight", "U32", {4, 64, 16})
        .add(p + "switch_mlp.gate_proj.scales", "BF16", {4, 64, 2})
        .add(p + "switch_mlp.gate_proj.biases", "BF16", {4, 64, 2})
        .write(d.file("model.safetensors"));
    auto c = wstest::openOrFail(d.path());
    auto scheme = [&](const std::string& n) { return logicalOf(*c, n).schemeName; };
    QCOMPARE(scheme(p + "experts.0.gate_proj.weight"), std::string("fp8-tensor"));
    QCOMPARE(scheme(p + "experts.0.up_proj.weight_scale"), std::string("fp8-channel"));
    QCOMPARE(scheme(p + "experts.0.down_proj.weight"), std::string("fp8"));
    QCOMPARE(scheme(p + "experts.1.gate_proj.weight_packed"), std::string("rawint4"));
    QCOMPARE(scheme(p + "experts.1.up_proj.weight_g_idx"), std::string("int8-ct"));
    QCOMPARE(scheme(p + "experts.1.down_proj.weight"), std::string("nvfp4"));
    QCOMPARE(scheme(p + "switch_mlp.gate_proj.biases"), std::string("mlx-affine4"));
    // Members and packed parameter counts.
    QCOMPARE(logicalOf(*c, p + "experts.1.up_proj.weight_packed").members.size(), size_t(5));
    QCOMPARE(logicalOf(*c, p + "experts.1.up_proj.weight_packed").parameters, uint64_t(64 * 32));
    QCOMPARE(logicalOf(*c, p + "experts.1.gate_proj.weight_packed").parameters, uint64_t(64 * 32));
    QCOMPARE(logicalOf(*c, p + "experts.1.down_proj.weight").parameters, uint64_t(32 * 64));
    QCOMPARE(logicalOf(*c, p + "switch_mlp.gate_proj.weight").parameters, uint64_t(4 * 64 * 128));
    QCOMPARE(c->find(p + "switch_mlp.gate_proj.weight")->layout, Layout::FusedOutIn);
    QCOMPARE(c->find(p + "experts.1.up_proj.weight_zero_point")->component, Component::ZeroPoint);
    QCOMPARE(logicalOf(*c, p + "experts.1.up_proj.weight_zero_point").scaleBytes, uint64_t(64 * 2 + 8 * 4));
  }

  // The scheme table: every row named and readable back, U8 scales read as E8M0 only where the
  // scheme says so, and the checkpoint's load-peak multiplier from the schemes present.
  void schemeTable() {
    std::set<std::string> names;
    for (size_t i = 0; i < size_t(Scheme::kCount); ++i) {
      const SchemeInfo& row = schemeInfo(Scheme(i));
      QCOMPARE(size_t(row.id), i);
      if (!row.name.empty()) QVERIFY2(names.insert(std::string(row.name)).second, row.name.data());
      QVERIFY(row.quantized || row.id == Scheme::Plain);
      QCOMPARE(row.decoder == DecoderKind::Unsupported, !row.gpuKernel);
    }
    QCOMPARE(schemeDisplayName(Scheme::Plain, dtypeFromSafetensors("BF16")), std::string("bf16"));
    QCOMPARE(schemeDisplayName(Scheme::GgufBlock, dtypeByName("Q4_K")), std::string("gguf-q4_k"));
    QCOMPARE(schemeDisplayName(Scheme::MlxAffineOther, dtypeFromSafetensors("U32"), 3), std::string("mlx-affine3"));
    QCOMPARE(schemeDisplayName(Scheme::Fp8Block, dtypeFromSafetensors("F8_E4M3")), std::string("fp8-block"));
    const DType* u8 = dtypeFromSafetensors("U8");
    QCOMPARE(scaleReadDtype(Scheme::Mxfp4, u8)->name, std::string_view("F8_E8M0"));
    QCOMPARE(scaleReadDtype(Scheme::RawInt4, u8)->name, std::string_view("U8"));
    QVERIFY(scalesAreE8M0(Scheme::GgufBlock, dtypeByName("MXFP4")));
    QVERIFY(!scalesAreE8M0(Scheme::GgufBlock, dtypeByName("Q4_K")));
    bool present[size_t(Scheme::kCount)] = {};
    QCOMPARE(peakMultiplierOf(present), 1.0);
    present[size_t(Scheme::Fp8Block)] = true;
    QCOMPARE(peakMultiplierOf(present), 1.5);
    present[size_t(Scheme::Nvfp4)] = true;  // an NVFP4 checkpoint with FP8 layers is NVFP4
    QCOMPARE(peakMultiplierOf(present), 1.3);
  }

  // An MLX weight of a width the decoders do not read is refused by name, not decoded as words.
  void mlxOtherWidthRefused() {
    wstest::TempDir d;
    wstest::SafetensorsBuilder()
        .add("model.layers.0.mlp.gate_proj.weight", "U32", {64, 12})  // 12 words x 32 bits = 384 = 64 x 6 bits
        .add("model.layers.0.mlp.gate_proj.scales", "BF16", {64, 1})
        .add("model.layers.0.mlp.gate_proj.biases", "BF16", {64, 1})
        .write(d.file("model.safetensors"));
    auto c = wstest::openOrFail(d.path());
    const auto& l = logicalOf(*c, "model.layers.0.mlp.gate_proj.weight");
    QCOMPARE(l.scheme, Scheme::MlxAffineOther);
    QCOMPARE(l.schemeName, std::string("mlx-affine6"));
    auto dec = num::makeDecoder(*c, c->find("model.layers.0.mlp.gate_proj.weight")->logical);
    QVERIFY(!dec.ok());
    QVERIFY(QString::fromStdString(dec.error().message).contains("mlx-affine6"));
  }

  // DeepSeek-V4 as published (tests/data/deepseek_v4, made by make_deepseek_v4.py): routed experts
  // as I8 bytes of two E2M1 codes with an E8M0 scale per 32 (`.scale`), which SGLang 0.5.23 takes
  // for packed FP4 (configs/deepseek_v4.py try_detect_fp4_experts: U8, I8 or F4). MXFP4, two
  // parameters a byte; its values those of llama.cpp's own conversion of the same file, which
  // repacked the bytes into ggml's MXFP4 blocks (tests/data/llama_cpp/deepseek-v4-bf16.gguf,
  // blk.3.ffn_gate_exps: experts stacked, rows 64-95 expert 2). embed / head are DeepSeek's names.
  void deepSeekV4PublishedExperts() {
    auto c = wstest::openOrFail(wstest::sourceDir() + "/tests/data/deepseek_v4");
    const LogicalTensor& w1 = logicalOf(*c, "layers.3.ffn.experts.2.w1.weight");
    QCOMPARE(w1.schemeName, std::string("mxfp4"));
    QCOMPARE(w1.parameters, uint64_t(32 * 64));  // [32, 32] bytes of codes
    QCOMPARE(c->find("embed.weight")->role, Role::Embedding);
    QCOMPARE(c->find("head.weight")->role, Role::LmHead);
    QCOMPARE(c->find("layers.3.ffn.gate.weight")->role, Role::Router);
    auto gguf = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/deepseek-v4-bf16.gguf");
    auto a = num::makeDecoder(*c, c->find("layers.3.ffn.experts.2.w1.weight")->logical);
    auto b = num::makeDecoder(*gguf, gguf->find("blk.3.ffn_gate_exps.weight")->logical);
    QVERIFY2(a && b, a ? "" : a.error().describe().c_str());
    QCOMPARE(b.value()->cols(), uint64_t(64));
    std::vector<float> x(32 * 64), y(x.size());
    a.value()->decode(0, 32, x.data());
    b.value()->decode(2 * 32, 32, y.data());
    // Equal as numbers: code 8 is -0 in E2M1 and +0 in ggml's kvalues_mxfp4, the one difference.
    for (size_t i = 0; i < x.size(); ++i) QVERIFY2(x[i] == y[i], std::to_string(i).c_str());
    QVERIFY(std::any_of(x.begin(), x.end(), [](float v) { return v != 0; }));
  }

  // DeepSeek-V4's MTP layers keep NVFP4 codes in I8 tensors (the seed runtime reads I8 as a raw
  // byte container): the same bytes as U8 must give the same scheme, values, validation and peak.
  void nvfp4CodesInI8() {
    wstest::TempDir d;
    synth::Options o;
    o.like = "deepseek-v3";
    o.scheme = "nvfp4";
    o.out = d.file("u8");
    QVERIFY(synth::write(o).ok());
    auto f = wstest::readSt(o.out + "/model.safetensors");
    size_t retyped = 0;
    for (auto& t : f.tensors)
      if (t.dtype == "U8") t.dtype = "I8", ++retyped;
    QVERIFY(retyped > 0);
    wstest::copyCheckpoint(o.out, d.file("i8"));
    wstest::writeSt(d.file("i8") + "/model.safetensors", f);

    auto u8 = wstest::openOrFail(o.out), i8 = wstest::openOrFail(d.file("i8"));
    QCOMPARE(i8->logical.size(), u8->logical.size());
    size_t nvfp4 = 0;
    for (size_t i = 0; i < u8->logical.size(); ++i) {
      QCOMPARE(i8->logical[i].schemeName, u8->logical[i].schemeName);
      QCOMPARE(i8->logical[i].parameters, u8->logical[i].parameters);
      if (u8->logical[i].scheme != Scheme::Nvfp4) continue;
      ++nvfp4;
      auto a = num::makeDecoder(*u8, uint32_t(i)), b = num::makeDecoder(*i8, uint32_t(i));
      QVERIFY2(a && b, b ? "" : b.error().describe().c_str());
      std::vector<float> x(a.value()->rows() * a.value()->cols()), y(x.size());
      a.value()->decode(0, a.value()->rows(), x.data());
      b.value()->decode(0, b.value()->rows(), y.data());
      QVERIFY(std::memcmp(x.data(), y.data(), x.size() * 4) == 0);
    }
    QVERIFY(nvfp4 > 0);
    auto rep = val::validatePath(d.file("i8"), {});
    QVERIFY(rep);
    for (const auto& fd : rep.value().findings)
      QVERIFY2(fd.severity == val::Severity::Info, (fd.code + " " + fd.tensor + ": " + fd.message).c_str());
    plan::PlanOptions po;
    po.placement = plan::makePlacement(plan::PlacementKind::Linear, plan::Remainder::First, 1, u8->model.numExperts).value();
    QCOMPARE(plan::planCheckpoint(*i8, po).value().multiplier, 1.3);
    QCOMPARE(plan::planCheckpoint(*u8, po).value().multiplier, 1.3);
  }

  void ktInt4FromBytes() {
    // Two NUMA halves of a [128, 64] projection hold 64*64/2 bytes each: INT4.
    wstest::TempDir d;
    wstest::writeFile(d.file("config.json"), std::string(R"({"model_type":"deepseek_v3","hidden_size":64,"moe_intermediate_size":128,
      "n_routed_experts":1,"num_hidden_layers":1})"));
    wstest::SafetensorsBuilder b;
    for (const char* proj : {"gate", "up", "down"})
      for (int n = 0; n < 2; ++n) {
        std::string base = std::string("blk.0.ffn_") + proj + "_exps.0.numa." + std::to_string(n);
        b.add(base + ".weight", "U8", {64 * 64 / 2}).add(base + ".scale", "F32", {64});
      }
    b.write(d.file("kt.safetensors"));
    auto c = wstest::openOrFail(d.path());
    QCOMPARE(c->format, std::string("ktransformers"));
    QCOMPARE(c->model.numaNodes, int64_t(2));
    const auto& l = logicalOf(*c, "blk.0.ffn_up_exps.0.numa.1.weight");
    QCOMPARE(l.schemeName, std::string("kt-int4"));
    QCOMPARE(l.members.size(), size_t(4));
    QCOMPARE(l.parameters, uint64_t(128 * 64));
    QCOMPARE(c->find("blk.0.ffn_up_exps.0.numa.1.weight")->expert, 0);
    QCOMPARE(c->find("blk.0.ffn_up_exps.0.numa.1.weight")->numaNode, 1);
  }

  // compressed-tensors int4 with a weight_shape per weight (192 of them), written two ways: the
  // shapes side by side, as safetensors' own writer orders a file (by dtype, then name), and each
  // after its weight and scale (8 KiB apart). The open caches every shape, each with its own
  // value; side by side they are read together, a few read calls in all (the kernel's count of
  // them), while apart each takes its own.
  void weightShapesAreReadTogether() {
    const int experts = 64;
    struct Weight {
      std::string prefix;
      int64_t cols;  // 249..256: what a packed row of 32 words can hold
    };
    std::vector<Weight> weights;
    for (int e = 0; e < experts; ++e)
      for (const char* proj : {"gate_proj", "up_proj", "down_proj"})
        weights.push_back({"model.layers.0.mlp.experts." + std::to_string(e) + "." + proj + ".", 249 + int64_t(weights.size() % 8)});
    auto write = [&](const std::string& dir, bool together) {
      wstest::writeFile(dir + "/config.json", std::string(R"({"model_type":"deepseek_v3","hidden_size":256,"moe_intermediate_size":64,
        "n_routed_experts":64,"num_hidden_layers":1,"quantization_config":{"quant_method":"compressed-tensors",
        "config_groups":{"g":{"weights":{"num_bits":4,"symmetric":true,"strategy":"group","group_size":32}}}}})"));
      wstest::SafetensorsBuilder b;
      auto shape = [&](const Weight& w) { b.add(w.prefix + "weight_shape", "I64", {2}, wstest::int64Bytes({64, w.cols})); };
      if (together)
        for (const Weight& w : weights) shape(w);
      for (const Weight& w : weights) {
        b.add(w.prefix + "weight_packed", "I32", {64, 32}).add(w.prefix + "weight_scale", "BF16", {64, 8});
        if (!together) shape(w);
      }
      b.write(dir + "/model.safetensors");
    };
    uint64_t calls[2] = {};
    for (bool together : {true, false}) {
      wstest::TempDir d;
      write(d.path(), together);
      const uint64_t before = wstest::readCallsBySyscalls();
      auto c = wstest::openOrFail(d.path());
      calls[together] = wstest::readCallsBySyscalls() - before;
      QCOMPARE(c->weightShapes.size(), weights.size());
      for (const Weight& w : weights) {
        const TensorRecord* t = c->find(w.prefix + "weight_shape");
        QVERIFY(t);
        const auto it = c->weightShapes.find(uint32_t(t - c->tensors.data()));
        QVERIFY2(it != c->weightShapes.end() && it->second == std::vector<int64_t>({64, w.cols}), t->name.c_str());
      }
    }
    qInfo("read calls to open: %llu with the shapes side by side, %llu apart", (unsigned long long)calls[1], (unsigned long long)calls[0]);
    QVERIFY(calls[0] >= weights.size());
    QVERIFY(calls[1] + weights.size() - 8 <= calls[0]);
  }
};

QTEST_GUILESS_MAIN(TstQuantScheme)
#include "tst_quant_scheme.moc"
