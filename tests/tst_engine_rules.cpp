// The serving engines' load-time refusals (validate --runtime vllm|sglang, core/validate/engines):
// real checkpoints - the transformers fixtures, the library-quantized corpus and full-dimension
// synth checkpoints of the families - at the layouts their engines take and at the ones they refuse,
// each refusal in the engine's own words.
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "core/plan/devices.h"
#include "core/synth/synth.h"
#include "core/validate/engines/engine_rules.h"
#include "core/validate/engines/engine_tables.h"
#include "core/validate/engines/quant_method.h"
#include "core/validate/validator.h"
#include "test_paths.h"
#include "corpus_support.h"
#include "test_support.h"

using namespace ws;

namespace {

struct Run {
  std::string error;                      // a usage error, when the layout cannot be started
  std::vector<val::Finding> findings;     // the engine family's
  std::string verdict;
  std::vector<std::string> codes(val::Severity s) const {
    std::vector<std::string> out;
    for (const auto& f : findings)
      if (f.severity == s) out.push_back(f.code);
    return out;
  }
  bool says(const std::string& code, const std::string& text) const {
    for (const auto& f : findings)
      if (f.code == code && f.message.find(text) != std::string::npos) return true;
    return false;
  }
  std::string dump() const {
    std::string s = error.empty() ? verdict : "usage: " + error;
    for (const auto& f : findings) s += "\n  " + f.code + " " + f.message;
    return s;
  }
};

Run validateFor(const std::string& path, const std::string& engine, int tp, int ep = 1, int dp = 1, const std::string& gpu = "H200-141GB") {
  val::ValidateOptions opt;
  opt.only = {"engine"};
  opt.runtime = engine;
  opt.layout.tp = tp, opt.layout.ep = ep, opt.layout.dp = dp, opt.layout.gpu = gpu;
  auto r = val::validatePath(path, opt);
  Run out;
  if (!r) {
    out.error = r.error().message;
    return out;
  }
  out.findings = r.value().findings;
  out.verdict = r.value().verdict;
  return out;
}

// A copy of a fixture whose config.json `edit` changes.
std::string editedCopy(const wstest::TempDir& d, const std::string& src, const std::function<void(nlohmann::json&)>& edit) {
  const std::string dst = d.file("ckpt");
  wstest::copyCheckpoint(src, dst);
  nlohmann::json cfg;
  std::ifstream(dst + "/config.json") >> cfg;
  edit(cfg);
  std::filesystem::remove(dst + "/config.json");  // the copy may be read-only
  std::ofstream(dst + "/config.json") << cfg.dump(2);
  return dst;
}

// A copy of a single-file fixture whose tensors `edit` changes (renames, drops, adds).
// A small synth DeepSeek-V3 (3 layers, the first dense, one shard) in `scheme`, its config stating
// topk_method as DeepSeek's does (SGLang's config class has no default for it).
std::string smallDeepseek(const wstest::TempDir& d, const std::string& scheme) {
  synth::Options o;
  o.like = "deepseek-v3", o.scheme = scheme, o.layers = 3, o.denseLayers = 1, o.shards = 1, o.out = d.file("ds");
  if (!synth::write(o).ok()) qFatal("synth deepseek-v3 %s failed", scheme.c_str());
  wstest::editJson(o.out + "/config.json", [](nlohmann::ordered_json& c) { c["topk_method"] = "noaux_tc"; });
  return o.out;
}

std::string tensorsEdited(const wstest::TempDir& d, const std::string& src, const std::function<void(wstest::StFile&)>& edit) {
  const std::string dst = d.file("ckpt");
  wstest::copyCheckpoint(src, dst);
  auto f = wstest::readSt(dst + "/model.safetensors");
  edit(f);
  std::filesystem::remove(dst + "/model.safetensors");
  wstest::writeSt(dst + "/model.safetensors", f);
  return dst;
}

// The Mixtral fixture with layer 0's q, k and v stored as one qkv_proj, rows concatenated.
std::string mixtralWithFusedQkv(const wstest::TempDir& d) {
  return tensorsEdited(d, wstest::fixture("hf/mixtral"), [](wstest::StFile& f) {
    const std::string at = "model.layers.0.self_attn.";
    wstest::StEntry fused = *f.find(at + "q_proj.weight");
    fused.name = at + "qkv_proj.weight";
    for (const char* kv : {"k_proj.weight", "v_proj.weight"}) {
      const wstest::StEntry& part = *f.find(at + kv);
      fused.shape[0] += part.shape[0];
      fused.data.insert(fused.data.end(), part.data.begin(), part.data.end());
    }
    for (const char* n : {"q_proj.weight", "k_proj.weight", "v_proj.weight"}) f.remove(at + n);
    f.tensors.push_back(fused);
  });
}

// A family's published dimensions (synth --size full) over sparse data; four layers, since the
// engines' rules read only the config's widths, never the layer count.
std::string fullDims(const wstest::TempDir& d, const std::string& like, const std::string& scheme) {
  synth::Options o;
  o.like = like, o.scheme = scheme, o.size = "full", o.sparse = true, o.layers = 4, o.shards = 2, o.out = d.file(like + "-" + scheme);
  if (like == "deepseek-v3" || like == "glm-4.5") o.denseLayers = 1;
  auto w = synth::write(o);
  if (!w) qFatal("synth %s %s: %s", like.c_str(), scheme.c_str(), w.error().describe().c_str());
  return o.out;
}

}  // namespace

class TstEngineRules : public QObject {
  Q_OBJECT

 private slots:
  // Qwen3-235B-A22B-FP8's classic (vllm#17569): at TP 8 each rank holds 1536 / 8 = 192 of every
  // expert's intermediate rows, not a whole number of 128-row blocks; vLLM refuses in
  // Fp8MoEMethod, SGLang in check_quantized_moe_compatibility. TP 4, or TP 8 with the experts kept
  // whole by EP, load.
  void qwen3FullFp8AtTp8() {
    wstest::TempDir d;
    const std::string q = fullDims(d, "qwen3-moe", "fp8-block");
    const Run tp8 = validateFor(q, "vllm", 8);
    QVERIFY2(tp8.says("WS-E005", "The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128."), tp8.dump().c_str());
    QCOMPARE(tp8.codes(val::Severity::Error), std::vector<std::string>{"WS-E005"});
    QVERIFY2(tp8.verdict.find("vLLM 0.11.0, TP 8 on H200-141GB (SM 9.0): refuses: 1 reason (WS-E005)") == 0, tp8.verdict.c_str());
    for (const Run& ok : {validateFor(q, "vllm", 4), validateFor(q, "vllm", 8, 8), validateFor(q, "sglang", 8, 2)}) {
      QVERIFY2(ok.findings.empty(), ok.dump().c_str());
      QVERIFY2(ok.verdict.find(": loads") != std::string::npos, ok.verdict.c_str());
    }
    const Run sgl = validateFor(q, "sglang", 8);
    QVERIFY2(sgl.says("WS-E005", "(moe_intermediate_size=1536 / moe_tp_size=8) % weight_block_size_n=128 == 0"), sgl.dump().c_str());
  }

  // DeepSeek-V3's FP8 release at TP 8 (its model card's vLLM and SGLang layout) loads on an H200;
  // on an A100 vLLM runs it weight-only through Marlin (a warning), on a T4 it refuses it.
  void deepseekFullFp8ByGpu() {
    wstest::TempDir d;
    const std::string ds = fullDims(d, "deepseek-v3", "fp8-block");
    const Run h200 = validateFor(ds, "vllm", 8);
    QVERIFY2(h200.findings.empty(), h200.dump().c_str());
    // sglang#3345: DeepSeek-R1 at TP 32 - the dense MLP's 18432 / 32 = 576 rows a rank.
    const Run tp32 = validateFor(ds, "sglang", 32);
    QVERIFY2(tp32.says("WS-E005", "Weight output_partition_size = 576 is not divisible by weight quantization block_n = 128. (the dense MLP's gate_up_proj at TP 32)"), tp32.dump().c_str());
    // vLLM's DeepSeek layers beyond the config-level rules (deepseek_shard_rules.cpp): the shared
    // experts' 2048 over TP 32 is 64 rows a rank - unless expert parallelism with DP makes them
    // sequence-parallel (whole on every rank) - and MLA's q_b_proj, 128 heads x 192, over TP 128.
    const Run vllm32 = validateFor(ds, "vllm", 32);
    QVERIFY2(vllm32.says("WS-E005", "Weight output_partition_size = 64 is not divisible by weight quantization block_n = 128. (the shared experts' gate_up_proj at TP 32)"),
             vllm32.dump().c_str());
    QVERIFY2(vllm32.says("WS-E005", "Weight input_size_per_partition = 64 is not divisible by weight quantization block_k = 128. (the shared experts' down_proj at TP 32)"),
             vllm32.dump().c_str());
    QVERIFY2(!vllm32.says("WS-E005", "MLA"), vllm32.dump().c_str());  // 128 x 192 / 32 = 768, six blocks
    const Run vllmSp = validateFor(ds, "vllm", 32, 64, 2);
    QVERIFY2(!vllmSp.says("WS-E005", "shared experts"), vllmSp.dump().c_str());
    const Run vllm128 = validateFor(ds, "vllm", 128);
    QVERIFY2(vllm128.says("WS-E005", "Weight output_partition_size = 192 is not divisible by weight quantization block_n = 128. (MLA q_b_proj at TP 128)"), vllm128.dump().c_str());
    QVERIFY2(!vllm128.says("WS-E005", "kv_b_proj") && !vllm128.says("WS-E005", "o_proj"), vllm128.dump().c_str());  // 256 and 128 a rank: whole blocks
    const Run a100 = validateFor(ds, "vllm", 8, 1, 1, "A100-80GB");
    QCOMPARE(a100.codes(val::Severity::Error), std::vector<std::string>{});
    QVERIFY2(a100.says("WS-E008", "Marlin weight-only FP8"), a100.dump().c_str());
    QVERIFY2(a100.verdict.find("loads; fallbacks or unknowns: WS-E008") != std::string::npos, a100.verdict.c_str());
    const Run t4 = validateFor(ds, "vllm", 8, 1, 1, "sm_75");
    QVERIFY2(t4.says("WS-E007", "Minimum capability: 80"), t4.dump().c_str());
    // Without a GPU the capability rules cannot run, and the verdict says so.
    const Run none = validateFor(ds, "vllm", 8, 1, 1, "");
    QVERIFY2(none.findings.empty() && none.verdict.find("no --gpu") != std::string::npos, none.dump().c_str());
  }

  // Heads (vLLM's verify_with_parallel_config, SGLang's attention asserts): 4 heads do not split 3
  // ways; GLM-4.5's 8 KV heads are neither a multiple of TP 12 nor divide it; TP 16 replicates
  // them (16 is a multiple of 8) and loads.
  void headsAndKvHeads() {
    const Run three = validateFor(wstest::fixture("hf/qwen3_moe"), "vllm", 3);
    QVERIFY2(three.says("WS-E003", "Total number of attention heads (4) must be divisible by tensor parallel size (3)"), three.dump().c_str());
    // Its dense layer's MLP (mlp_only_layers) of 512 does not split 3 ways either.
    QVERIFY2(three.says("WS-E003", "512 is not divisible by 3 - the dense MLP's intermediate over TP 3"), three.dump().c_str());
    wstest::TempDir d;
    const std::string glm = fullDims(d, "glm-4.5", "bf16");
    const Run twelve = validateFor(glm, "vllm", 12);
    QVERIFY2(twelve.says("WS-E003", "8 KV heads and TP 12: 12 is not divisible by 8"), twelve.dump().c_str());
    const Run sixteen = validateFor(glm, "vllm", 16);
    QVERIFY2(sixteen.codes(val::Severity::Error).empty(), sixteen.dump().c_str());
  }

  // The transformers FP8 fixture at TP 2: k_proj and v_proj hold one 64-row head a rank, half a
  // 128-row block; at TP 1 vLLM leaves v (the last of the merged shards) unchecked and loads.
  void fp8FixtureKvShard() {
    const Run tp2 = validateFor(wstest::fixture("hf/qwen3_moe_fp8"), "vllm", 2, 2);
    QVERIFY2(tp2.says("WS-E005", "Weight output_partition_size = 64 is not divisible by weight quantization block_n = 128. (k_proj / v_proj at TP 2)"), tp2.dump().c_str());
    const Run tp1 = validateFor(wstest::fixture("hf/qwen3_moe_fp8"), "vllm", 1);
    QVERIFY2(tp1.findings.empty(), tp1.dump().c_str());
  }

  // SGLang splits experts whole over EP and asserts they divide.
  void sglangExpertsOverEp() {
    wstest::TempDir d;
    const std::string six = editedCopy(d, wstest::fixture("hf/qwen3_moe"), [](nlohmann::json& c) { c["num_experts"] = 6; });
    const Run r = validateFor(six, "sglang", 4, 4);
    QVERIFY2(r.says("WS-E004", "6 routed experts do not divide over EP 4"), r.dump().c_str());
    // vLLM gives the remainder to the first ranks (determine_expert_map) and loads.
    const Run v = validateFor(six, "vllm", 4, 4);
    QVERIFY2(!v.says("WS-E004", "routed experts"), v.dump().c_str());
  }

  // The architecture registries: a class no registry holds goes to the Transformers backend (a
  // warning: unknown whether it loads); one vLLM dropped, or none named, is a refusal.
  void architectures() {
    wstest::TempDir a, b, c;
    const std::string foo = editedCopy(a, wstest::fixture("hf/qwen3_moe"), [](nlohmann::json& j) { j["architectures"] = {"FooBarForCausalLM"}; });
    const Run unknown = validateFor(foo, "sglang", 1);
    QVERIFY2(unknown.says("WS-E002", "SGLang registers no FooBarForCausalLM"), unknown.dump().c_str());
    QVERIFY(unknown.codes(val::Severity::Error).empty());
    const std::string bart = editedCopy(b, wstest::fixture("hf/qwen3_moe"), [](nlohmann::json& j) { j["architectures"] = {"BartForConditionalGeneration"}; });
    QVERIFY(validateFor(bart, "vllm", 1).says("WS-E001", "was supported in vLLM until v0.10.2"));
    const std::string none = editedCopy(c, wstest::fixture("hf/qwen3_moe"), [](nlohmann::json& j) { j.erase("architectures"); });
    QVERIFY(validateFor(none, "vllm", 1).says("WS-E001", "names no architectures"));
    for (const auto& fx : {"hf/qwen3_moe", "hf/deepseek_v3", "hf/mixtral", "hf/qwen3_vl_moe"})
      for (const auto& engine : {"vllm", "sglang"}) {
        const Run r = validateFor(wstest::fixture(fx), engine, 1);
        QVERIFY2(!r.says("WS-E001", "") && !r.says("WS-E002", ""), (std::string(fx) + " " + engine + ": " + r.dump()).c_str());
      }
  }

  // The library-quantized corpus as the engines resolve it: SGLang has no plain GPTQ on CUDA (an
  // asymmetric GPTQ checkpoint cannot become gptq_marlin), vLLM does not load 8-bit
  // bitsandbytes experts, AWQ experts need Marlin's SM 8.0 in vLLM.
  void libraryQuantPaths() {
    const std::string lib = wstest::sourceDir() + "/tests/data/library_quant/";
    QVERIFY2(validateFor(lib + "gptq-4bit", "sglang", 1).says("WS-E007", "Unknown quantization method: gptq"), validateFor(lib + "gptq-4bit", "sglang", 1).dump().c_str());
    // the piece holds one layer's experts only: what WS-E009 says of the rest is vllmWeightNamesClean's
    QVERIFY(validateFor(lib + "gptq-4bit", "vllm", 1).codes(val::Severity::Warning).empty());
    QCOMPARE(validateFor(lib + "gptq-4bit", "vllm", 1).codes(val::Severity::Error), std::vector<std::string>{"WS-E009"});
    QVERIFY(validateFor(lib + "bnb-int8", "vllm", 1).says("WS-E007", "Prequant BitsAndBytes 8bit models with FusedMoE is not supported yet."));
    QVERIFY(validateFor(lib + "bnb-nf4", "vllm", 1).findings.empty());
    const Run t4 = validateFor(lib + "awq-gemm", "vllm", 1, 1, 1, "sm_75");
    QVERIFY2(t4.says("WS-E007", "awq-moe needs SM 8.0"), t4.dump().c_str());
    QCOMPARE(val::engines::quantPathsOf(openCheckpoint(lib + "awq-gemm").value()->model), (std::vector<std::string>{"awq-marlin", "awq-moe"}));
  }

  // AutoAWQ's GEMV packing (written by AutoAWQ itself): neither engine reads the config's version,
  // both create GEMM's shapes, and the loader refuses GEMV's. The GEMM folder and an unread
  // packing's name say otherwise.
  void awqPackingVersions() {
    const std::string lib = wstest::sourceDir() + "/tests/data/library_quant/";
    for (const char* engine : {"vllm", "sglang"}) {
      const Run gemv = validateFor(lib + "awq-gemv", engine, 1);
      QVERIFY2(gemv.says("WS-E009", "AWQ version \"gemv\": ") && gemv.says("WS-E009", "which its weight loader's shape check refuses (first: model.layers.0.mlp.experts.0."),
               gemv.dump().c_str());
      QVERIFY2(gemv.verdict.find("refuses") != std::string::npos, gemv.verdict.c_str());
      QVERIFY(!validateFor(lib + "awq-gemm", engine, 1).says("WS-E009", "AWQ version"));
    }
    wstest::TempDir d;
    const std::string fast = editedCopy(d, lib + "awq-gemm", [](nlohmann::json& c) { c["quantization_config"]["version"] = "gemv_fast"; });
    const Run r = validateFor(fast, "vllm", 1);
    QVERIFY2(r.says("WS-E008", "AWQ version \"gemv_fast\": vLLM 0.11.0 reads no AWQ version") && !r.says("WS-E009", "AWQ version"), r.dump().c_str());
  }

  // GPTQ under TP: o_proj's shard holds 32 input features a rank, half a group of 64.
  void gptqGroupShard() {
    wstest::TempDir d;
    const std::string g64 = editedCopy(d, wstest::sourceDir() + "/tests/data/library_quant/gptq-4bit", [](nlohmann::json& c) { c["quantization_config"]["group_size"] = 64; });
    const Run r = validateFor(g64, "vllm", 2);
    QVERIFY2(r.says("WS-E006", "The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size. (o_proj: 32"), r.dump().c_str());
    QVERIFY(!validateFor(g64, "vllm", 1).says("WS-E006", ""));
  }

  // A layout the engine cannot be started with is a usage error naming why; so is an unknown GPU.
  void usageErrors() {
    const std::string q = wstest::fixture("hf/qwen3_moe");
    QVERIFY(validateFor(q, "vllm", 8).error.find("larger than the model's 4 attention heads") != std::string::npos);
    QVERIFY(validateFor(q, "vllm", 0).error.find("at least 1") != std::string::npos);
    QVERIFY(validateFor(q, "vllm", 2, 4).error.find("vLLM splits experts over all TP x DP = 2 ranks") != std::string::npos);
    QVERIFY(validateFor(q, "sglang", 4, 3).error.find("must divide --tp-size") != std::string::npos);
    QVERIFY(validateFor(q, "vllm", 1, 1, 1, "Z80").error.find("unknown GPU 'Z80' (known: H100-80GB") != std::string::npos);
    QVERIFY(validateFor(q, "vllm", 2, 1, 1, "8.9").error.empty());
    val::engines::EngineLayout l;
    for (const auto& [name, cc] : std::vector<std::pair<std::string, int>>{{"sm_89", 89}, {"8.9", 89}, {"sm_121", 121}, {"GB10", 121}, {"L40S-48GB", 89}}) {
      l.gpu = name;
      QVERIFY(!val::engines::resolveGpu(l));
      QCOMPARE(l.capability, cc);
    }
  }

  // WS-E009, the names vLLM 0.11.0's loaders consume: the transformers fixtures and the
  // full-dimension synth checkpoints of the families the loader table holds load clean (the
  // DeepSeek fixture's MTP layer is skipped as DeepseekV2ForCausalLM.load_weights skips it).
  void vllmWeightNamesClean() {
    for (const auto& fx : {"hf/qwen3_moe", "hf/qwen3_moe_fp8", "hf/mixtral", "hf/deepseek_v3"}) {
      const Run r = validateFor(wstest::fixture(fx), "vllm", 1);
      QVERIFY2(!r.says("WS-E009", "") && !r.says("WS-E008", "consumes is unknown"), (std::string(fx) + ": " + r.dump()).c_str());
    }
    wstest::TempDir d;
    for (const auto& [like, scheme] : std::vector<std::pair<std::string, std::string>>{{"qwen3-moe", "fp8-block"}, {"deepseek-v3", "fp8-block"}, {"glm-4.5", "bf16"}, {"mixtral", "bf16"}}) {
      const Run r = validateFor(fullDims(d, like, scheme), "vllm", 1);
      QVERIFY2(!r.says("WS-E009", "") && !r.says("WS-E008", "consumes is unknown"), (like + ": " + r.dump()).c_str());
    }
    // GPTQ and AWQ pieces (one layer's experts and router, as the quantizers wrote them): every
    // tensor placed - qweight, qzeros, scales, g_idx into the FusedMoE - and what the pieces do not
    // hold (the embedding, the attention) named as left uninitialised, a quantized model's fate.
    for (const auto& q : {"gptq-2bit", "gptq-3bit", "gptq-4bit", "gptq-4bit-actorder", "gptq-4bit-v2", "gptq-8bit", "awq-gemm"}) {
      const Run r = validateFor(wstest::sourceDir() + "/tests/data/library_quant/" + q, "vllm", 1);
      QVERIFY2(!r.says("WS-E009", "cannot place") && !r.says("WS-E008", "consumes is unknown"), (std::string(q) + ": " + r.dump()).c_str());
      QVERIFY2(r.says("WS-E009", "which vLLM loads uninitialised") && r.says("WS-E009", "model.embed_tokens.weight") && !r.says("WS-E009", "experts.w13_weight"), (std::string(q) + ": " + r.dump()).c_str());
    }
  }

  // gpt-oss under vLLM 0.11.0 (GptOssForCausalLM: the WeightsMapper, then the fused expert tensors
  // and sinks looked up as they are): the MXFP4 and BF16 synth checkpoints load clean. Fused
  // experts saved with a ".weight" suffix escape the mapper's suffixes and every lookup, and are
  // skipped without a word: the BF16 model is refused for its unfilled experts, the MXFP4 one
  // loads them uninitialised.
  void vllmGptOssWeightNames() {
    for (const char* scheme : {"mxfp4", "bf16"}) {
      wstest::TempDir d;
      const Run full = validateFor(fullDims(d, "gpt-oss", scheme), "vllm", 1);
      QVERIFY2(!full.says("WS-E009", "") && !full.says("WS-E008", "consumes is unknown"), (std::string(scheme) + ": " + full.dump()).c_str());
      synth::Options o;  // the same names at a few MiB, in one file, to edit
      o.like = "gpt-oss", o.scheme = scheme, o.shards = 1, o.out = d.file("tiny");
      QVERIFY(synth::write(o).ok());
      const std::string clean = o.out;
      QVERIFY2(!validateFor(clean, "vllm", 1).says("WS-E009", ""), validateFor(clean, "vllm", 1).dump().c_str());
      const std::string suffixed = tensorsEdited(d, clean, [](wstest::StFile& f) {
        for (auto& t : f.tensors)
          if (t.name.ends_with("mlp.experts.gate_up_proj") || t.name.ends_with("mlp.experts.gate_up_proj_blocks")) t.name += ".weight";
      });
      const Run b = validateFor(suffixed, "vllm", 1);
      QVERIFY2(b.says("WS-E009", "checkpoint tensors vLLM 0.11.0's GptOssForCausalLM (vllm/model_executor/models/gpt_oss.py GptOssModel.load_weights) never loads: no parameter takes them and it skips them without a word: model.layers.0.mlp.experts.gate_up_proj"),
               b.dump().c_str());
      const bool quantized = std::string(scheme) == "mxfp4";
      QVERIFY2(b.says("WS-E009", quantized ? "which vLLM loads uninitialised" : "'Following weights were not initialized from checkpoint'") && b.says("WS-E009", "model.layers.0.mlp.experts.w13_weight"),
               b.dump().c_str());
      QVERIFY2(!b.says("WS-E009", "experts.w2_weight"), b.dump().c_str());
      if (!quantized) continue;
      // The MXFP4 tensors with the config's quantization_config gone: vLLM takes the BF16 path,
      // where ".w2_weight" in the scale's name sends it to params_dict - KeyError (the first name
      // in the files' order: down_proj_scales).
      wstest::TempDir e;
      const std::string unmarked = editedCopy(e, clean, [](nlohmann::json& c) { c.erase("quantization_config"); });
      const Run u = validateFor(unmarked, "vllm", 1);
      QVERIFY2(u.says("WS-E009", "4 checkpoint tensors vLLM 0.11.0's GptOssForCausalLM (vllm/model_executor/models/gpt_oss.py GptOssModel.load_weights) cannot place: the load stops at the first it reaches, KeyError: 'layers.0.mlp.experts.w2_weight_scale'") &&
                   u.says("WS-E009", "model.layers.0.mlp.experts.gate_up_proj_scales (looked up as model.layers.0.mlp.experts.w13_weight_scale)"),
               u.dump().c_str());
    }
  }

  // gpt-oss under SGLang 0.5.23 (GptOssForCausalLM: the MXFP4 experts' six suffixes, the normal
  // path's substring renames, every name no parameter takes skipped without a word): the MXFP4 and
  // BF16 synth checkpoints at full dimensions load clean. Fused experts saved with a ".weight"
  // suffix are renamed into no parameter and skipped; SGLang checks nothing after loading, so the
  // experts they should fill are loaded uninitialised - for BF16 as for MXFP4, where vLLM refuses
  // the BF16 model.
  void sglangGptOssWeightNames() {
    for (const char* scheme : {"mxfp4", "bf16"}) {
      wstest::TempDir d;
      const Run full = validateFor(fullDims(d, "gpt-oss", scheme), "sglang", 1);
      QVERIFY2(!full.says("WS-E009", "") && !full.says("WS-E008", "consumes is unknown"), (std::string(scheme) + ": " + full.dump()).c_str());
      synth::Options o;
      o.like = "gpt-oss", o.scheme = scheme, o.shards = 1, o.out = d.file("tiny");
      QVERIFY(synth::write(o).ok());
      const std::string suffixed = tensorsEdited(d, o.out, [](wstest::StFile& f) {
        for (auto& t : f.tensors)
          if (t.name.ends_with("mlp.experts.gate_up_proj") || t.name.ends_with("mlp.experts.gate_up_proj_blocks")) t.name += ".weight";
      });
      const Run b = validateFor(suffixed, "sglang", 1);
      QVERIFY2(b.says("WS-E009", "checkpoint tensors SGLang 0.5.23's GptOssForCausalLM (sglang/srt/models/gpt_oss.py GptOssForCausalLM.load_weights) never loads: no parameter takes them and it skips them without a word: model.layers.0.mlp.experts.gate_up_proj") &&
                   b.says("WS-E009", "which SGLang loads uninitialised") && b.says("WS-E009", "model.layers.0.mlp.experts.w13_weight") && !b.says("WS-E009", "experts.w2_weight"),
               b.dump().c_str());
    }
  }

  // The parameters a quantization method registers (vLLM 0.11.0, quant_params.h): with
  // weight_block_size, Fp8LinearMethod and Fp8MoEMethod register weight_scale_inv (fp8.py:320,
  // :572-573) and weight_scale without it (:309), and a dynamic activation scheme no input_scale
  // (:329 None, :621-622). A block-FP8 DeepSeek-V3 whose scales are named weight_scale, whose config
  // lost its block size, or which stores input scales, is a KeyError in its loader (deepseek_v2.py: params_dict[name]); the clean twin loads. Qwen3-MoE's loader skips
  // either suffix (qwen3_moe.py:451-453 ignore_suffixes): no KeyError - its scales never load.
  void quantMethodParameters() {
    wstest::TempDir d, e, g;
    const std::string clean = smallDeepseek(d, "fp8-block");
    const Run ok = validateFor(clean, "vllm", 1);
    QVERIFY2(!ok.says("WS-E009", ""), ok.dump().c_str());
    const std::string unsuffixed = tensorsEdited(e, clean, [](wstest::StFile& f) {
      for (auto& t : f.tensors)
        if (t.name.ends_with(".weight_scale_inv")) t.name.resize(t.name.size() - 4);
    });
    const Run v = validateFor(unsuffixed, "vllm", 1);
    QVERIFY2(v.says("WS-E009", "KeyError") && v.says("WS-E009", ".weight_scale'"), v.dump().c_str());
    const std::string withInputs = tensorsEdited(g, clean, [](wstest::StFile& f) {
      const float one = 1.0f;
      std::vector<uint8_t> bytes(4);
      std::memcpy(bytes.data(), &one, 4);
      f.tensors.push_back({"model.layers.1.self_attn.o_proj.input_scale", "F32", {}, bytes});
    });
    const Run in = validateFor(withInputs, "vllm", 1);
    QVERIFY2(in.says("WS-E009", "KeyError: 'model.layers.1.self_attn.o_proj.input_scale'"), in.dump().c_str());
    // A config that lost its weight_block_size: per-tensor FP8, whose method registers
    // weight_scale (fp8.py:309), finds no parameter for the stored weight_scale_inv.
    wstest::TempDir h;
    const std::string perTensor = editedCopy(h, clean, [](nlohmann::json& c) { c["quantization_config"].erase("weight_block_size"); });
    const Run pt = validateFor(perTensor, "vllm", 1);
    QVERIFY2(pt.says("WS-E009", "KeyError") && pt.says("WS-E009", ".weight_scale_inv'"), pt.dump().c_str());
    // SGLang 0.5.23's fp8 method registers weight_scale_inv under a block size too (Q/fp8.py:667-696):
    // its DeepSeek loader raises on the stacked rename and warns, dropping them, on the rest.
    const Run sg = validateFor(unsuffixed, "sglang", 1);
    QVERIFY2(sg.says("WS-E009", "KeyError: 'model.layers.0.mlp.gate_up_proj.weight_scale'") && sg.says("WS-E009", "weight_scale not found in params_dict."), sg.dump().c_str());
    QVERIFY2(!validateFor(clean, "sglang", 1).says("WS-E009", ""), validateFor(clean, "sglang", 1).dump().c_str());
    // An NVFP4 weight-only checkpoint (llm-compressor's, tests/data/compressed_tensors/nvfp4a16)
    // given an activation scale: SGLang's W4A16 scheme registers input_global_scale only for a W4A4
    // checkpoint (schemes/compressed_tensors_w4a16_nvfp4.py:187-192), so the name finds no
    // parameter there; vLLM's registers it on a GPU without CUTLASS FP4, which is not settled here.
    wstest::TempDir n4;
    const std::string o = "model.layers.1.self_attn.o_proj.input_global_scale";
    const std::string nvfp4 = tensorsEdited(n4, wstest::sourceDir() + "/tests/data/compressed_tensors/nvfp4a16", [&](wstest::StFile& f) {
      f.tensors.push_back({o, "F32", {1}, std::vector<uint8_t>(4, 0)});
    });
    const Run ns = validateFor(nvfp4, "sglang", 1);
    QVERIFY2(ns.says("WS-E009", o), ns.dump().c_str());
    QVERIFY2(!validateFor(nvfp4, "vllm", 1).says("WS-E009", o), validateFor(nvfp4, "vllm", 1).dump().c_str());
    wstest::TempDir q;
    const std::string qwen = tensorsEdited(q, wstest::fixture("hf/qwen3_moe_fp8"), [](wstest::StFile& f) {
      for (auto& t : f.tensors)
        if (t.name.ends_with(".weight_scale_inv")) t.name.resize(t.name.size() - 4);
    });
    const Run qv = validateFor(qwen, "vllm", 1);
    QVERIFY2(!qv.says("WS-E009", "KeyError"), qv.dump().c_str());
  }

  // DeepSeek-V4 in the published naming (tests/data/deepseek_v4). SGLang 0.5.23's
  // DeepseekV4ForCausalLM reads topk_method as an attribute of a config class that has no such
  // field (deepseek_v2.py:519), and this config, as transformers 5.25.0 writes it, lacks it: the
  // model cannot be built. vLLM 0.11.0 registers no such class - its Transformers fallback.
  void deepSeekV4Names() {
    const std::string published = wstest::sourceDir() + "/tests/data/deepseek_v4";
    const Run s = validateFor(published, "sglang", 1);
    QVERIFY2(s.says("WS-E009", "SGLang 0.5.23's DeepseekV4ForCausalLM") && s.says("WS-E009", "cannot be built: config.json lacks topk_method,"), s.dump().c_str());
    const Run v = validateFor(published, "vllm", 1);
    QVERIFY2(v.says("WS-E002", "vLLM registers no DeepseekV4ForCausalLM"), v.dump().c_str());
    // With the published config's topk_method and a flat YaRN rope_scaling every name but the
    // experts' scales lands - the renames (embed., head., layers.N.attn / ffn, w1 / w2 / w3,
    // gate.bias and tid2eid), the compressors' wkv + wgate into wkv_gate, wq_a + wkv into wqkv_a,
    // the hash layers' tid2eid; the 60 E8M0 expert scales, with no quantization config to register
    // a parameter for them, are dropped without a word (deepseek_v4.py:5447-5471).
    wstest::TempDir a;
    auto published_ = [](nlohmann::json& j) {
      j["topk_method"] = "noaux_tc";
      j["rope_scaling"] = {{"type", "yarn"}, {"factor", 4}, {"original_max_position_embeddings", 256}};
    };
    const std::string v4 = editedCopy(a, published, published_);
    const Run clean = validateFor(v4, "sglang", 1);
    QVERIFY2(clean.says("WS-E009", "60 checkpoint tensors SGLang 0.5.23's DeepseekV4ForCausalLM") &&
                 clean.says("WS-E009", "skips them without a word: layers.0.ffn.experts.0.w1.scale (looked up as model.layers.0.mlp.experts.w13_weight_scale_inv)") &&
                 clean.codes(val::Severity::Error).size() == 1 && !clean.says("WS-E008", "consumes is unknown"),
             clean.dump().c_str());
    // An FP8 wo_a's scale, without the fp8 config that makes wo_a an FP8 parameter: the stream
    // dequantizes the pair into BF16 before the loader sees it (deepseek_v4.py:5701-5743).
    wstest::TempDir w;
    const std::string woA = tensorsEdited(w, v4, [](wstest::StFile& f) { f.tensors.push_back({"layers.1.attn.wo_a.scale", "F32", {1}, std::vector<uint8_t>(4, 0)}); });
    QVERIFY2(validateFor(woA, "sglang", 1).codes(val::Severity::Error).size() == 1, validateFor(woA, "sglang", 1).dump().c_str());
    // A compressor missing its gate half: the cache keeps wkv and the end-of-load assert fails.
    wstest::TempDir b, c, d, e;
    const std::string noGate = tensorsEdited(b, v4, [](wstest::StFile& f) { f.remove("layers.1.attn.compressor.wgate.weight"); });
    QVERIFY2(validateFor(noGate, "sglang", 1).says("WS-E009", "assert len(cache_compressor_weight) == 0 (deepseek_v4.py:5603): layers.1.attn.compressor.wkv.weight"),
             validateFor(noGate, "sglang", 1).dump().c_str());
    // wq_a without its wkv partner: the other cache's assert.
    const std::string noWkv = tensorsEdited(c, v4, [](wstest::StFile& f) { f.remove("layers.3.attn.wkv.weight"); });
    QVERIFY2(validateFor(noWkv, "sglang", 1).says("WS-E009", "assert len(cache_wqkv_a_weight) == 0 (deepseek_v4.py:5604): layers.3.attn.wq_a.weight"),
             validateFor(noWkv, "sglang", 1).dump().c_str());
    // A compressor scale (an FP8 compressor): renamed weight_scale_inv, it fails the cache's assert.
    const std::string scaled = tensorsEdited(d, v4, [](wstest::StFile& f) { f.tensors.push_back({"layers.2.attn.compressor.wkv.scale", "F32", {1}, std::vector<uint8_t>(4, 0)}); });
    QVERIFY2(validateFor(scaled, "sglang", 1).says("WS-E009", "AssertionError: a compressor's wkv / wgate must be weights (deepseek_v4.py:5496-5498): layers.2.attn.compressor.wkv.scale (looked up as"),
             validateFor(scaled, "sglang", 1).dump().c_str());
    // A compressor stored on a layer of ratio 0, which has none: past the cache (its fused
    // parameter absent), the name is warned about as it is.
    wstest::TempDir k;
    const std::string stray = tensorsEdited(k, v4, [](wstest::StFile& f) { f.tensors.push_back({"layers.0.attn.compressor.wkv.weight", "BF16", {2}, std::vector<uint8_t>(4, 0)}); });
    QVERIFY2(validateFor(stray, "sglang", 1).says("WS-E009", "('model.layers.0.self_attn.compressor.wkv.weight not found in params_dict.')"), validateFor(stray, "sglang", 1).dump().c_str());
    // A top-k layer's router bias gone: the correction bias is left as initialised, with a warning;
    // a hash layer's tid2eid stored as a bias instead finds no parameter.
    const std::string noBias = tensorsEdited(e, v4, [](wstest::StFile& f) {
      f.remove("layers.3.ffn.gate.bias");
      for (auto& t : f.tensors)
        if (t.name == "layers.0.ffn.gate.tid2eid") t.name = "layers.0.ffn.gate.bias";
    });
    const Run nb = validateFor(noBias, "sglang", 1);
    QVERIFY2(nb.says("WS-E009", "'Some weights are not initialized from checkpoints'") && nb.says("WS-E009", "model.layers.0.mlp.topk.tid2eid") &&
                 nb.says("WS-E009", "model.layers.3.mlp.gate.e_score_correction_bias") &&
                 nb.says("WS-E009", "1 checkpoint tensors SGLang 0.5.23's DeepseekV4ForCausalLM (sglang/srt/models/deepseek_v4.py DeepseekV4ForCausalLM.load_weights) never loads: "
                                    "no parameter takes them and it skips them with a warning ('model.layers.0.mlp.gate.e_score_correction_bias not found in params_dict.')"),
             nb.dump().c_str());
  }

  // Qwen3-Next as transformers 5.25.0 writes it (tests/data/qwen3_next: GatedDeltaNet and full
  // attention layers, every layer sparse). vLLM 0.11.0 loads it clean. SGLang 0.5.23 cannot build
  // the model from transformers 5's config.json, which keeps layer_types and drops
  // full_attention_interval - the one key SGLang reads; with it (2, as layer_types says) it loads
  // clean. The two engines then differ:
  // - mlp_only_layers [0] makes vLLM build layer 0 dense: its 24 experts' renames look up
  //   w13_weight / w2_weight there, and its router and shared expert (5 tensors) find no
  //   parameter either: KeyError; SGLang builds every layer sparse and loads it;
  // - the GatedDeltaNet's projections split as in_proj_qkv / in_proj_z / in_proj_b / in_proj_a:
  //   SGLang's rows merge them into in_proj_qkvz and in_proj_ba; vLLM has no row for them: KeyError;
  // - MTP tensors (mtp.*): both skip them.
  void qwen3NextWeightNames() {
    const std::string written = wstest::sourceDir() + "/tests/data/qwen3_next";
    const std::string who = "vLLM 0.11.0's Qwen3NextForCausalLM (vllm/model_executor/models/qwen3_next.py Qwen3NextModel.load_weights)";
    const Run v = validateFor(written, "vllm", 1);
    QVERIFY2(!v.says("WS-E009", "") && !v.says("WS-E008", "") && !v.codes(val::Severity::Error).size(), v.dump().c_str());
    const Run s = validateFor(written, "sglang", 1);
    QVERIFY2(s.says("WS-E009", "SGLang 0.5.23's Qwen3NextForCausalLM (sglang/srt/models/qwen3_next.py Qwen3NextForCausalLM.load_weights) cannot be built: config.json has no full_attention_interval"),
             s.dump().c_str());
    wstest::TempDir d;
    const std::string interval = editedCopy(d, written, [](nlohmann::json& c) { c["full_attention_interval"] = 2; });
    const Run si = validateFor(interval, "sglang", 1);
    QVERIFY2(!si.says("WS-E009", "") && !si.says("WS-E008", ""), si.dump().c_str());
    QVERIFY2(!validateFor(interval, "vllm", 1).says("WS-E009", ""), validateFor(interval, "vllm", 1).dump().c_str());

    wstest::TempDir e;
    const std::string dense0 = editedCopy(e, interval, [](nlohmann::json& c) { c["mlp_only_layers"] = nlohmann::json::array({0}); });
    const Run vd = validateFor(dense0, "vllm", 1);
    QVERIFY2(vd.says("WS-E009", "29 checkpoint tensors " + who + " cannot place: the load stops at the first it reaches, KeyError: 'layers.0.mlp.experts.w2_weight'") &&
                 vd.says("WS-E009", "model.layers.0.mlp.experts.0.down_proj.weight (looked up as model.layers.0.mlp.experts.w2_weight)") &&
                 vd.says("WS-E009", "'Following weights were not initialized from checkpoint'") && vd.says("WS-E009", "model.layers.0.mlp.down_proj.weight"),
             vd.dump().c_str());
    QVERIFY2(!validateFor(dense0, "sglang", 1).says("WS-E009", ""), validateFor(dense0, "sglang", 1).dump().c_str());

    wstest::TempDir g;
    const std::string split = tensorsEdited(g, interval, [](wstest::StFile& f) {
      const std::string at = "model.layers.0.linear_attn.";
      // in_proj_qkvz [192, 64] of bf16: q, k (2 heads of 16) and v (4 heads of 16) rows, then z;
      // in_proj_ba [8, 64]: b then a. The rows split where the shards do.
      auto cut = [&](const std::string& whole, const std::vector<std::pair<std::string, uint64_t>>& parts) {
        const wstest::StEntry w = *f.find(at + whole);
        uint64_t row = 0;
        for (const auto& [name, rows] : parts) {
          wstest::StEntry p = w;
          p.name = at + name;
          p.shape[0] = rows;
          const uint64_t bytes = rows * w.shape[1] * 2;
          p.data.assign(w.data.begin() + int64_t(row * w.shape[1] * 2), w.data.begin() + int64_t(row * w.shape[1] * 2 + bytes));
          row += rows;
          f.tensors.push_back(p);
        }
        f.remove(at + whole);
      };
      cut("in_proj_qkvz.weight", {{"in_proj_qkv.weight", 128}, {"in_proj_z.weight", 64}});
      cut("in_proj_ba.weight", {{"in_proj_b.weight", 4}, {"in_proj_a.weight", 4}});
      wstest::StEntry mtp = *f.find("model.norm.weight");
      mtp.name = "mtp.norm.weight";
      f.tensors.push_back(mtp);
    });
    const Run ss = validateFor(split, "sglang", 1);
    QVERIFY2(!ss.says("WS-E009", "") && !ss.says("WS-E008", ""), ss.dump().c_str());
    const Run vs = validateFor(split, "vllm", 1);
    QVERIFY2(vs.says("WS-E009", "4 checkpoint tensors " + who + " cannot place: the load stops at the first it reaches, KeyError: 'layers.0.linear_attn.in_proj_") &&
                 vs.says("WS-E009", "'Following weights were not initialized from checkpoint'") && vs.says("WS-E009", "model.layers.0.linear_attn.in_proj_ba.weight") &&
                 !vs.says("WS-E009", "mtp.norm.weight"),
             vs.dump().c_str());
  }

  // Qwen3-VL-MoE's names (the transformers 5.17 fixture: the language model under
  // model.language_model., fused experts, the vision tower under model.visual. with attn.qkv fused)
  // place in both engines: vLLM 0.11.0 through its WeightsMapper into language_model. and visual.,
  // SGLang 0.5.23 shortening model.language_model. to model. and renaming the tower's qkv to
  // qkv_proj. Where they part:
  // - the language model saved under model.layers. (without language_model.): vLLM's mapper has no
  //   prefix for it and AutoWeightsLoader has no child 'model' - ValueError; SGLang's names are
  //   already its own, and it loads;
  // - the tower's qkv split into attn.q / attn.k / attn.v: vLLM's tower rows stack them into
  //   attn.qkv; SGLang's tower has no rows, warns "Parameter ... not found in params_dict" and
  //   leaves qkv_proj uninitialised.
  //
  // The fixture's text_config also ties the head (transformers 5's default; the top level says
  // false): vLLM ties by text_config and still copies the file's own lm_head.weight into the shared
  // tensor, which differs from the embedding - broken; SGLang unties by the top level and loads it.
  // The cases above start from the twin untied in text_config, which both load clean.
  void qwen3VlMoeWeightNames() {
    const std::string fixture = wstest::fixture("hf/qwen3_vl_moe");
    const Run tied = validateFor(fixture, "vllm", 1);
    QVERIFY2(tied.says("WS-E009", "ties language_model.lm_head.weight to the embedding (text_config.tie_word_embeddings is true) and still loads the checkpoint's lm_head.weight into it, "
                                  "which differs from model.language_model.embed_tokens.weight (from byte 0)") &&
                 tied.verdict.find("broken besides: 1 reason (WS-E009)") != std::string::npos,
             tied.dump().c_str());
    QVERIFY2(!validateFor(fixture, "sglang", 1).says("WS-E009", ""), validateFor(fixture, "sglang", 1).dump().c_str());
    wstest::TempDir u;
    const std::string vl = editedCopy(u, fixture, [](nlohmann::json& c) { c["text_config"]["tie_word_embeddings"] = false; });
    for (const char* engine : {"vllm", "sglang"}) {
      const Run r = validateFor(vl, engine, 1);
      QVERIFY2(!r.says("WS-E009", "") && !r.says("WS-E008", "consumes is unknown"), r.dump().c_str());
    }
    wstest::TempDir d, e;
    const std::string bare = tensorsEdited(d, vl, [](wstest::StFile& f) {
      for (auto& t : f.tensors)
        if (t.name.starts_with("model.language_model.")) t.name = "model." + t.name.substr(21);
    });
    const Run vb = validateFor(bare, "vllm", 1);
    QVERIFY2(vb.says("WS-E009", "cannot place: the load stops at the first it reaches, ValueError: There is no module or parameter named 'model' in Qwen3VLMoeForConditionalGeneration") &&
                 vb.says("WS-E009", "model.embed_tokens.weight"),
             vb.dump().c_str());
    const Run sb = validateFor(bare, "sglang", 1);
    QVERIFY2(!sb.says("WS-E009", ""), sb.dump().c_str());

    const std::string split = tensorsEdited(e, vl, [](wstest::StFile& f) {
      const std::string at = "model.visual.blocks.0.attn.";
      for (const char* leaf : {"weight", "bias"}) {
        const wstest::StEntry qkv = *f.find(at + "qkv." + leaf);
        const uint64_t rows = qkv.shape[0] / 3, rowBytes = qkv.data.size() / qkv.shape[0];
        for (int k = 0; k < 3; ++k) {
          wstest::StEntry part = qkv;
          part.name = at + "qkv"[k] + std::string(".") + leaf;
          part.shape[0] = rows;
          part.data.assign(qkv.data.begin() + int64_t(k * rows * rowBytes), qkv.data.begin() + int64_t((k + 1) * rows * rowBytes));
          f.tensors.push_back(part);
        }
        f.remove(at + "qkv." + leaf);
      }
    });
    const Run vs = validateFor(split, "vllm", 1);
    QVERIFY2(!vs.says("WS-E009", ""), vs.dump().c_str());
    const Run ss = validateFor(split, "sglang", 1);
    QVERIFY2(ss.says("WS-E009", "never loads: no parameter takes them and it skips them with a warning ('Parameter visual.blocks.0.attn.k.bias not found in params_dict')") &&
                 ss.says("WS-E009", "which SGLang loads uninitialised") && ss.says("WS-E009", "visual.blocks.0.attn.qkv_proj.bias"),
             ss.dump().c_str());

    // One layer's experts stored per expert, the other's fused: the first fused name switches both
    // loaders to the fused mapping for good, so per-expert names that load after it (layer 1 after
    // layer 0, in sorted order) place nowhere - vLLM's KeyError, SGLang's warning - while the same
    // names loading before it (layer 0 per expert, layer 1 fused) place as usual.
    auto perExpert = [](int layer) {
      return [layer](wstest::StFile& f) {
        const std::string at = "model.language_model.layers." + std::to_string(layer) + ".mlp.experts.";
        const wstest::StEntry gateUp = *f.find(at + "gate_up_proj"), down = *f.find(at + "down_proj");
        const uint64_t E = gateUp.shape[0], I = gateUp.shape[1] / 2, H = gateUp.shape[2];  // transformers 5: [E, 2I, H], [E, H, I]
        for (uint64_t e = 0; e < E; ++e) {
          const std::string ex = at + std::to_string(e) + ".";
          auto slice = [&](const wstest::StEntry& from, const std::string& name, uint64_t first, uint64_t rows, uint64_t cols) {
            wstest::StEntry t = from;
            t.name = name, t.shape = {rows, cols};
            const uint64_t per = from.shape[1] * from.shape[2] * 2, row = cols * 2;
            t.data.assign(from.data.begin() + int64_t(e * per + first * row), from.data.begin() + int64_t(e * per + (first + rows) * row));
            f.tensors.push_back(t);
          };
          slice(gateUp, ex + "gate_proj.weight", 0, I, H);
          slice(gateUp, ex + "up_proj.weight", I, I, H);
          slice(down, ex + "down_proj.weight", 0, H, I);
        }
        f.remove(at + "gate_up_proj");
        f.remove(at + "down_proj");
      };
    };
    wstest::TempDir m1, m2;
    const std::string after = tensorsEdited(m1, vl, perExpert(1)), before = tensorsEdited(m2, vl, perExpert(0));
    const Run va = validateFor(after, "vllm", 1), sa = validateFor(after, "sglang", 1);
    QVERIFY2(va.says("WS-E009", "24 checkpoint tensors") && va.says("WS-E009", "KeyError: 'layers.1.mlp.experts.0.down_proj.weight'"), va.dump().c_str());
    QVERIFY2(sa.says("WS-E009", "skips them with a warning ('Parameter model.layers.1.mlp.experts.0.down_proj.weight not found in params_dict')"), sa.dump().c_str());
    for (const char* engine : {"vllm", "sglang"}) {
      const Run r = validateFor(before, engine, 1);
      QVERIFY2(!r.says("WS-E009", ""), r.dump().c_str());
    }
  }

  // The ModelOpt NVFP4 MoE methods create per-expert input scales that only each expert's own
  // input_scale fills - vLLM 0.11.0 with torch.empty, SGLang 0.5.23 with 1.0: the synth NVFP4
  // checkpoint (every expert projection with its input_scale) loads; with layer 1's expert input
  // scales gone - a checkpoint keeping one for the layer, as vllm PR #45320's - both load it
  // broken, not refused.
  void nvfp4ExpertInputScales() {
    wstest::TempDir d;
    synth::Options o;
    o.like = "qwen3-moe", o.scheme = "nvfp4", o.shards = 1, o.out = d.file("nvfp4");
    QVERIFY(synth::write(o).ok());
    QVERIFY2(!validateFor(o.out, "vllm", 1).says("WS-E010", ""), validateFor(o.out, "vllm", 1).dump().c_str());
    const std::string shared = tensorsEdited(d, o.out, [](wstest::StFile& f) {
      std::vector<std::string> gone;
      for (const auto& t : f.tensors)
        if (t.name.starts_with("model.layers.1.mlp.experts.") && t.name.ends_with(".input_scale")) gone.push_back(t.name);
      QVERIFY(!gone.empty());
      for (const auto& n : gone) f.remove(n);
    });
    const Run v = validateFor(shared, "vllm", 1);
    QVERIFY2(v.says("WS-E010", "routed expert projections of this ModelOpt NVFP4 checkpoint have no input_scale of their own, which vLLM 0.11.0") &&
                 v.says("WS-E010", "loads with those scales uninitialised: model.layers.1.mlp.experts.0.down_proj.input_scale") && v.verdict.find("loads broken") != std::string::npos,
             v.dump().c_str());
    const Run sg = validateFor(shared, "sglang", 1);
    QVERIFY2(sg.says("WS-E010", "which SGLang 0.5.23") && sg.says("WS-E010", "loads with those scales at 1.0") && sg.verdict.find("loads broken") != std::string::npos,
             sg.dump().c_str());
    QVERIFY2(!validateFor(o.out, "sglang", 1).says("WS-E010", ""), validateFor(o.out, "sglang", 1).dump().c_str());
  }

  // Llama 4 as transformers 5.25 writes it (tests/data/llama4: fused experts, a shared expert, the
  // vision tower and projector) loads in vLLM 0.11.0 and SGLang 0.5.23 - SGLang, without
  // --enable-multimodal, skipping the tower's names. Both place MoE layers by
  // interleave_moe_layer_step and read no moe_layers: with the step 1 and moe_layers [1, 3] kept
  // (transformers would build layers 0 and 2 dense), layer 0's dense tensors find no parameter in
  // either - KeyError. The projector's weight gone: vLLM refuses the unfilled parameter, SGLang never
  // builds it.
  void llama4WeightNames() {
    const std::string l4 = wstest::sourceDir() + "/tests/data/llama4";
    for (const char* engine : {"vllm", "sglang"}) {
      const Run r = validateFor(l4, engine, 1);
      QVERIFY2(!r.says("WS-E009", "") && !r.says("WS-E008", "consumes is unknown"), r.dump().c_str());
    }
    wstest::TempDir d, e;
    const std::string stepped = editedCopy(d, l4, [](nlohmann::json& c) {
      QCOMPARE(c["text_config"]["moe_layers"], nlohmann::json::array({1, 3}));
      c["text_config"]["interleave_moe_layer_step"] = 1;
    });
    for (const char* engine : {"vllm", "sglang"}) {
      const Run r = validateFor(stepped, engine, 1);
      QVERIFY2(r.says("WS-E009", "6 checkpoint tensors") && r.says("WS-E009", "cannot place: the load stops at the first it reaches, KeyError: '") &&
                   r.says("WS-E009", "language_model.model.layers.0.feed_forward.gate_proj.weight (looked up as language_model.model.layers.0.feed_forward.gate_up_proj.weight)"),
               r.dump().c_str());
    }
    QVERIFY2(validateFor(stepped, "sglang", 1).says("WS-E009", "it only warns ('Some weights are not initialized from checkpoints')"), validateFor(stepped, "sglang", 1).dump().c_str());
    const std::string noProjector = tensorsEdited(e, l4, [](wstest::StFile& f) { f.remove("multi_modal_projector.linear_1.weight"); });
    const Run v = validateFor(noProjector, "vllm", 1);
    QVERIFY2(v.says("WS-E009", "'Following weights were not initialized from checkpoint'") && v.says("WS-E009", "multi_modal_projector.linear_1.weight"), v.dump().c_str());
    QVERIFY2(!validateFor(noProjector, "sglang", 1).says("WS-E009", ""), validateFor(noProjector, "sglang", 1).dump().c_str());
    // text_config tying the head over the file's own lm_head (random, so unlike the embedding):
    // vLLM's skip_prefixes drops it and the logits come from the embedding; SGLang's tied head is
    // the embedding module, and the file's head a name it looks up: KeyError.
    wstest::TempDir g;
    const std::string tied = editedCopy(g, l4, [](nlohmann::json& c) { c["text_config"]["tie_word_embeddings"] = true; });
    const Run vt = validateFor(tied, "vllm", 1), st = validateFor(tied, "sglang", 1);
    QVERIFY2(vt.says("WS-E009", "never loads the checkpoint's own language_model.lm_head.weight (AutoWeightsLoader's skip_prefixes), which differs from language_model.model.embed_tokens.weight") &&
                 vt.verdict.find("loads broken") != std::string::npos,
             vt.dump().c_str());
    QVERIFY2(st.says("WS-E009", "KeyError: 'language_model.lm_head.weight'"), st.dump().c_str());
  }

  // WS-E010, fused expert tensors: vLLM 0.11.0 and SGLang 0.5.23 transpose every one from
  // transformers 4.x's [E, H, 2I] / [E, I, H]. The Qwen3-VL-MoE fixture, written by transformers
  // 5.17 in its own [E, 2I, H] / [E, H, I], is refused by both: down_proj [8, 256, 128] fails the
  // copy; gate_up_proj, square here (2I = H = 256), would pass it scrambled. vLLM also builds 60
  // experts (transformers 4.57.1's num_experts default: the fixture writes num_local_experts). Its
  // twin - each expert transposed to 4.x's layout, num_experts named - loads in both. Llama 4 as
  // transformers 5.25 writes it (tests/data/llama4) is already in the loaders' layout and loads;
  // transposed to the other, both refuse it, with no square tensor to mention.
  void fusedExpertLayouts() {
    const std::string vl = wstest::fixture("hf/qwen3_vl_moe");
    const Run v = validateFor(vl, "vllm", 1), s = validateFor(vl, "sglang", 1);
    for (const Run* r : {&v, &s})
      QVERIFY2(r->says("WS-E010", "2 fused expert tensors stored as transformers 5 keeps them") &&
                   r->says("WS-E010", "model.language_model.layers.0.mlp.experts.down_proj [8, 256, 128]") &&
                   r->says("WS-E010", "the square ones (model.language_model.layers.0.mlp.experts.gate_up_proj [8, 256, 256]"),
               r->dump().c_str());
    QVERIFY2(v.says("WS-E010", "text_config has no num_experts (transformers 5 writes num_local_experts): vLLM 0.11.0") && v.says("WS-E010", "builds 60 experts a layer"), v.dump().c_str());
    QVERIFY2(!s.says("WS-E010", "experts a layer"), s.dump().c_str());

    // Each expert's [a, b] matrix transposed in place of the bf16 tensor [E, a, b].
    auto transposed = [](wstest::StEntry& t) {
      const uint64_t E = t.shape[0], a = t.shape[1], b = t.shape[2];
      std::vector<uint8_t> out(t.data.size());
      for (uint64_t e = 0; e < E; ++e)
        for (uint64_t i = 0; i < a; ++i)
          for (uint64_t j = 0; j < b; ++j) std::memcpy(&out[2 * ((e * b + j) * a + i)], &t.data[2 * ((e * a + i) * b + j)], 2);
      t.data = std::move(out);
      t.shape = {E, b, a};
    };
    auto fusedTransposed = [&](wstest::StFile& f) {
      for (auto& t : f.tensors)
        if (t.name.ends_with("experts.gate_up_proj") || t.name.ends_with("experts.down_proj")) transposed(t);
    };
    wstest::TempDir d, e;
    const std::string named = editedCopy(d, vl, [](nlohmann::json& c) { c["text_config"]["num_experts"] = 8; });
    const std::string twin = tensorsEdited(e, named, fusedTransposed);
    for (const char* engine : {"vllm", "sglang"}) {
      const Run r = validateFor(twin, engine, 1);
      QVERIFY2(!r.says("WS-E010", ""), r.dump().c_str());
    }

    const std::string l4 = wstest::sourceDir() + "/tests/data/llama4";
    wstest::TempDir g;
    const std::string flipped = tensorsEdited(g, l4, fusedTransposed);
    for (const char* engine : {"vllm", "sglang"}) {
      const Run clean = validateFor(l4, engine, 1), r = validateFor(flipped, engine, 1);
      QVERIFY2(!clean.says("WS-E010", ""), clean.dump().c_str());
      QVERIFY2(r.says("WS-E010", "4 fused expert tensors stored as transformers 5 keeps them") && r.says("WS-E010", "language_model.model.layers.1.feed_forward.experts.down_proj [4, 64, 48]") &&
                   r.says("WS-E010", "language_model.model.layers.1.feed_forward.experts.gate_up_proj [4, 96, 64]") && !r.says("WS-E010", "square"),
               r.dump().c_str());
    }
  }

  // vllm#19149: a checkpoint whose language model sits under model.language_model. (saved from a
  // multimodal class) loaded as the text class - MixtralModel.load_weights renames q_proj into
  // qkv_proj and looks the name up: KeyError; and every parameter of the class stays unfilled.
  void vllmPrefixedNames() {
    wstest::TempDir d;
    const std::string p = tensorsEdited(d, wstest::fixture("hf/mixtral"), [](wstest::StFile& f) {
      for (auto& t : f.tensors)
        if (t.name.rfind("model.", 0) == 0) t.name = "model.language_model." + t.name.substr(6);
    });
    const Run r = validateFor(p, "vllm", 1);
    QVERIFY2(r.says("WS-E009", "64 checkpoint tensors vLLM 0.11.0's MixtralForCausalLM (vllm/model_executor/models/mixtral.py MixtralModel.load_weights) cannot place: the load stops at the first it reaches, KeyError: 'language_model.embed_tokens.weight'"), r.dump().c_str());
    QVERIFY2(r.says("WS-E009", "vLLM refuses, 'Following weights were not initialized from checkpoint'"), r.dump().c_str());
    QVERIFY2(r.verdict.find("refuses") != std::string::npos, r.verdict.c_str());
  }

  // vllm#9595 / #10168: q, k and v stored already fused as qkv_proj. vLLM's stacked rename finds
  // "v_proj" inside "qkv_proj" and looks up qkqkv_proj: KeyError; the layer's qkv_proj is unfilled.
  void vllmPrefusedQkv() {
    wstest::TempDir d;
    const std::string p = mixtralWithFusedQkv(d);
    const Run r = validateFor(p, "vllm", 1);
    QVERIFY2(r.says("WS-E009", "KeyError: 'layers.0.self_attn.qkqkv_proj.weight'"), r.dump().c_str());
    QVERIFY2(r.says("WS-E009", "1 parameters of vLLM 0.11.0's MixtralForCausalLM (vllm/model_executor/models/mixtral.py MixtralModel.load_weights) that no checkpoint tensor fills: vLLM refuses, "
                               "'Following weights were not initialized from checkpoint' (model_loader/default_loader.py:273-277): model.layers.0.self_attn.qkv_proj.weight"),
             r.dump().c_str());
  }

  // A head dropped as if tied while config.json says it is not: Mixtral's lm_head is its own
  // parameter, unfilled, and vLLM refuses. The same bytes with tie_word_embeddings true load.
  void vllmUntiedHeadMissing() {
    wstest::TempDir a, b;
    const std::string untied = tensorsEdited(a, wstest::fixture("hf/mixtral"), [](wstest::StFile& f) { f.remove("lm_head.weight"); });
    const Run r = validateFor(untied, "vllm", 1);
    QVERIFY2(r.says("WS-E009", "that no checkpoint tensor fills: vLLM refuses, 'Following weights were not initialized from checkpoint' (model_loader/default_loader.py:273-277): lm_head.weight"), r.dump().c_str());
    const std::string tied = editedCopy(b, untied, [](nlohmann::json& c) { c["tie_word_embeddings"] = true; });
    const Run t = validateFor(tied, "vllm", 1);
    QVERIFY2(!t.says("WS-E009", ""), t.dump().c_str());
  }

  // A module outside model. and lm_head (an MTP head a training framework saved beside the
  // model): AutoWeightsLoader finds no such child of the class and raises ValueError.
  void vllmUnknownTopLevelModule() {
    wstest::TempDir d;
    const std::string p = tensorsEdited(d, wstest::fixture("hf/mixtral"), [](wstest::StFile& f) {
      wstest::StEntry extra = *f.find("model.norm.weight");
      extra.name = "mtp.norm.weight";
      f.tensors.push_back(extra);
    });
    const Run r = validateFor(p, "vllm", 1);
    QVERIFY2(r.says("WS-E009", "1 checkpoint tensors vLLM 0.11.0's MixtralForCausalLM (vllm/model_executor/models/mixtral.py MixtralModel.load_weights) cannot place: the load stops at the first it reaches, "
                               "ValueError: There is no module or parameter named 'mtp' in MixtralForCausalLM: mtp.norm.weight"),
             r.dump().c_str());
  }

  // An expert pruned from the files while config.json still counts it (a REAP-style prune that
  // kept num_experts): vLLM's check counts w13_weight loaded once any expert is, and a quantized
  // model is not checked at all, so expert 3 of layer 1 serves uninitialised memory.
  void vllmPrunedExpert() {
    wstest::TempDir d;
    const std::string p = tensorsEdited(d, wstest::fixture("hf/qwen3_moe_fp8"), [](wstest::StFile& f) {
      std::vector<std::string> drop;
      for (const auto& t : f.tensors)
        if (t.name.rfind("model.layers.1.mlp.experts.3.", 0) == 0) drop.push_back(t.name);
      QVERIFY(!drop.empty());
      for (const auto& n : drop) f.remove(n);
    });
    const Run r = validateFor(p, "vllm", 1);
    QVERIFY2(r.says("WS-E009", "2 parameters of vLLM 0.11.0's Qwen3MoeForCausalLM (vllm/model_executor/models/qwen3_moe.py Qwen3MoeModel.load_weights) left wholly or partly unfilled, which vLLM loads uninitialised"), r.dump().c_str());
    QVERIFY2(r.says("WS-E009", "model.layers.1.mlp.experts.w13_weight (2 of 16 shards unfilled: expert 3's gate_proj, expert 3's up_proj)"), r.dump().c_str());
  }

  // DeepSeek-V3 with vLLM's config class: topk_method defaults to noaux_tc there
  // (transformers_utils/configs/deepseek_v3.py), so every sparse layer's gate has an
  // e_score_correction_bias parameter; a checkpoint without them is refused, and one stored for a
  // dense layer is a KeyError.
  void vllmDeepseekRouterBias() {
    wstest::TempDir a;
    const std::string dst = a.file("ckpt");
    wstest::copyCheckpoint(wstest::fixture("hf/deepseek_v3"), dst);
    std::string moved;
    for (const auto& e : std::filesystem::directory_iterator(dst)) {
      if (e.path().extension() != ".safetensors") continue;
      auto f = wstest::readSt(e.path().string());
      auto bias = std::find_if(f.tensors.begin(), f.tensors.end(), [](const wstest::StEntry& t) { return t.name == "model.layers.1.mlp.gate.e_score_correction_bias"; });
      if (bias == f.tensors.end()) continue;
      bias->name = "model.layers.0.mlp.gate.e_score_correction_bias";
      std::filesystem::remove(e.path());
      wstest::writeSt(e.path().string(), f);
      moved = e.path().filename().string();
    }
    QVERIFY(!moved.empty());
    wstest::editJson(dst + "/model.safetensors.index.json", [&](nlohmann::ordered_json& j) {
      j["weight_map"].erase("model.layers.1.mlp.gate.e_score_correction_bias");
      j["weight_map"]["model.layers.0.mlp.gate.e_score_correction_bias"] = moved;
    });
    const Run r = validateFor(dst, "vllm", 1);
    QVERIFY2(r.says("WS-E009", "KeyError: 'model.layers.0.mlp.gate.e_score_correction_bias'"), r.dump().c_str());
    QVERIFY2(r.says("WS-E009", "'Following weights were not initialized from checkpoint' (model_loader/default_loader.py:273-277): model.layers.1.mlp.gate.e_score_correction_bias"), r.dump().c_str());
  }

  // SGLang 0.5.23's loaders (the same WS-E009): a hand loop on full names that skips what it cannot
  // place, and no check of what stayed unfilled. Its Qwen3-MoE class builds every layer sparse
  // (qwen3_moe.py stage_facts), so the transformers fixture's dense layer 0 (mlp_only_layers [0])
  // is skipped without a word and layer 0's experts serve uninitialised memory - vLLM, which
  // honours mlp_only_layers, loads it.
  void sglangWeightNames() {
    const Run q = validateFor(wstest::fixture("hf/qwen3_moe"), "sglang", 1);
    QVERIFY2(q.says("WS-E009", "3 checkpoint tensors SGLang 0.5.23's Qwen3MoeForCausalLM (sglang/srt/models/qwen3_moe.py Qwen3MoeForCausalLM.load_weights) never loads: no parameter takes them "
                               "and it skips them without a word: model.layers.0.mlp.down_proj.weight, model.layers.0.mlp.gate_proj.weight (looked up as model.layers.0.mlp.gate_gate_up_proj.weight), "
                               "model.layers.0.mlp.up_proj.weight (looked up as model.layers.0.mlp.gate_up_proj.weight)"),
             q.dump().c_str());
    QVERIFY2(q.says("WS-E009", "which SGLang loads uninitialised: its loader checks nothing after load_weights") && q.says("WS-E009", "model.layers.0.mlp.experts.w13_weight (16 of 16 shards unfilled"),
             q.dump().c_str());
    QVERIFY2(q.verdict.find("SGLang 0.5.23, TP 1 on H200-141GB (SM 9.0): loads broken: 2 reasons (WS-E009)") == 0, q.verdict.c_str());
    QVERIFY(!validateFor(wstest::fixture("hf/qwen3_moe"), "vllm", 1).says("WS-E009", ""));
    const Run mx = validateFor(wstest::fixture("hf/mixtral"), "sglang", 1);
    QVERIFY2(!mx.says("WS-E009", "") && !mx.says("WS-E008", "consumes is unknown"), mx.dump().c_str());
    // SGLang reads topk_method and moe_layer_freq off transformers 5.19.0's DeepseekV3Config, which
    // has neither; the transformers-written fixture does not state them: unknown, not guessed.
    const Run ds = validateFor(wstest::fixture("hf/deepseek_v3"), "sglang", 1);
    QVERIFY2(ds.says("WS-E008", "consumes is unknown here: config.json lacks moe_layer_freq, topk_method") && !ds.says("WS-E009", ""), ds.dump().c_str());
    wstest::TempDir d, t;
    for (const auto& [like, scheme] : std::vector<std::pair<std::string, std::string>>{{"qwen3-moe", "fp8-block"}, {"glm-4.5", "bf16"}, {"mixtral", "bf16"}}) {
      const Run r = validateFor(fullDims(d, like, scheme), "sglang", 1);
      QVERIFY2(!r.says("WS-E009", "") && !r.says("WS-E008", "consumes is unknown"), (like + ": " + r.dump()).c_str());
    }
    // q, k and v stored fused: SGLang's Mixtral loop looks up the mangled name at once (KeyError,
    // the full name: no AutoWeightsLoader strips it).
    const Run k = validateFor(mixtralWithFusedQkv(t), "sglang", 1);
    QVERIFY2(k.says("WS-E009", "KeyError: 'model.layers.0.self_attn.qkqkv_proj.weight'") && k.says("WS-E009", "which SGLang loads uninitialised"), k.dump().c_str());
  }

  // SGLang's DeepSeek loader (deepseek_weight_loader.py): with a q_lora_rank, q_a_proj and
  // kv_a_proj_with_mqa wait in a cache and load together into fused_qkv_a_proj_with_mqa. A
  // DeepSeek-V3-shaped checkpoint whose config states topk_method loads clean; drop one layer's
  // kv_a_proj_with_mqa and its q_a_proj waits for good - SGLang never loads it and the fused
  // parameter stays uninitialised - while vLLM loads q_a into its shard and leaves kv_a's shard
  // uninitialised.
  void sglangDeepseekPairs() {
    wstest::TempDir d, e;
    const std::string ds = smallDeepseek(d, "bf16");
    const Run clean = validateFor(ds, "sglang", 1);
    QVERIFY2(!clean.says("WS-E009", "") && !clean.says("WS-E008", "consumes is unknown"), clean.dump().c_str());
    const std::string orphan = tensorsEdited(e, ds, [](wstest::StFile& f) { f.remove("model.layers.1.self_attn.kv_a_proj_with_mqa.weight"); });
    const Run s = validateFor(orphan, "sglang", 1);
    QVERIFY2(s.says("WS-E009", "1 checkpoint tensors SGLang 0.5.23's DeepseekV3ForCausalLM (sglang/srt/models/deepseek_common/deepseek_weight_loader.py DeepseekV2WeightLoaderMixin.do_load_weights) "
                               "never loads: each waits in its q_a / kv_a cache for a partner that never comes, without a word: model.layers.1.self_attn.q_a_proj.weight"),
             s.dump().c_str());
    QVERIFY2(s.says("WS-E009", "model.layers.1.self_attn.fused_qkv_a_proj_with_mqa.weight (2 of 2 shards unfilled: q_a, kv_a)"), s.dump().c_str());
    const Run v = validateFor(orphan, "vllm", 1);
    QVERIFY2(v.says("WS-E009", "model.layers.1.self_attn.fused_qkv_a_proj.weight (1 of 2 shards unfilled: kv_a_proj_with_mqa)"), v.dump().c_str());
  }

  // DeepSeek-V3.2: the synth DeepSeek-V3 given an indexer in every layer as V3.2 checkpoints store
  // it (wq_b, wk, k_norm's weight and bias, weights_proj). SGLang 0.5.23 places every name; vLLM
  // 0.11.0 builds weights_proj with ReplicatedLinear's default bias, which no checkpoint fills, and
  // refuses the unquantized checkpoint - the error of vllm#30036 (fixed upstream by PR #26889).
  void deepseekV32Indexer() {
    // As transformers 5.25.0 writes it (tests/data/deepseek_v32, make_deepseek_v32.py): the error
    // of the issue on a real file; SGLang loads it.
    const std::string written = wstest::sourceDir() + "/tests/data/deepseek_v32";
    const Run real = validateFor(written, "vllm", 1);
    QVERIFY2(real.says("WS-E009", "3 parameters of vLLM 0.11.0's DeepseekV32ForCausalLM") &&
                 real.says("WS-E009", "'Following weights were not initialized from checkpoint' (model_loader/default_loader.py:273-277): model.layers.0.self_attn.indexer.weights_proj.bias"),
             real.dump().c_str());
    QVERIFY2(real.verdict.find("vLLM 0.11.0, TP 1 on H200-141GB (SM 9.0): refuses: 1 reason (WS-E009)") == 0, real.verdict.c_str());
    const Run realSg = validateFor(written, "sglang", 1);
    QVERIFY2(!realSg.says("WS-E009", "") && !realSg.says("WS-E008", "consumes is unknown"), realSg.dump().c_str());
    wstest::TempDir d, e, g;
    const std::string ds = smallDeepseek(d, "bf16");
    int64_t hidden = 0, qLora = 0;
    wstest::editJson(ds + "/config.json", [&](nlohmann::ordered_json& c) {
      c["architectures"] = {"DeepseekV32ForCausalLM"}, c["model_type"] = "deepseek_v32";
      c["index_topk"] = 8, c["index_head_dim"] = 32, c["index_n_heads"] = 4;
      hidden = c["hidden_size"].get<int64_t>(), qLora = c["q_lora_rank"].get<int64_t>();
    });
    const std::string v32 = tensorsEdited(e, ds, [&](wstest::StFile& f) {
      auto add = [&](const std::string& name, std::vector<uint64_t> shape) {
        uint64_t n = 1;
        for (uint64_t x : shape) n *= x;
        f.tensors.push_back({name, "BF16", shape, std::vector<uint8_t>(n * 2, 0)});
      };
      for (int l = 0; l < 3; ++l) {
        const std::string ix = "model.layers." + std::to_string(l) + ".self_attn.indexer.";
        add(ix + "wq_b.weight", {4 * 32, uint64_t(qLora)});
        add(ix + "wk.weight", {32, uint64_t(hidden)});
        add(ix + "k_norm.weight", {32});
        add(ix + "k_norm.bias", {32});
        add(ix + "weights_proj.weight", {4, uint64_t(hidden)});
      }
    });
    const Run s = validateFor(v32, "sglang", 1);
    QVERIFY2(!s.says("WS-E009", "") && !s.says("WS-E008", "consumes is unknown"), s.dump().c_str());
    const Run v = validateFor(v32, "vllm", 1);
    QVERIFY2(v.says("WS-E009", "'Following weights were not initialized from checkpoint' (model_loader/default_loader.py:273-277): model.layers.0.self_attn.indexer.weights_proj.bias, "
                               "model.layers.1.self_attn.indexer.weights_proj.bias, model.layers.2.self_attn.indexer.weights_proj.bias"),
             v.dump().c_str());
    QVERIFY2(!v.says("WS-E009", "wk.weight") && !v.says("WS-E009", "k_norm"), v.dump().c_str());
    // One layer's indexer key projection missing: both engines build it, neither fills it.
    const std::string noWk = tensorsEdited(g, v32, [](wstest::StFile& f) { f.remove("model.layers.1.self_attn.indexer.wk.weight"); });
    const Run s2 = validateFor(noWk, "sglang", 1);
    QVERIFY2(s2.says("WS-E009", "model.layers.1.self_attn.indexer.wk.weight") && s2.says("WS-E009", "which SGLang loads uninitialised"), s2.dump().c_str());
  }

  // GLM-5 (GlmMoeDsaForCausalLM) as transformers 5.25.0 writes it (tests/data/glm5, make_glm5.py):
  // indexer_types full, shared, shared, full, shared, so indexer tensors on layers 0 and 3 only.
  // SGLang 0.5.23 runs it through DeepSeek's loader, building an indexer only where the layer
  // computes its own top-k (dsa_layer_skips_topk) and skipping indexer names of the other layers.
  void sglangGlmDsaIndexers() {
    const std::string written = wstest::sourceDir() + "/tests/data/glm5";
    // SGLang reads config.topk_method and moe_layer_freq as attributes (deepseek_v2.py:519, 2791);
    // transformers 5.19.0's GlmMoeDsaConfig defines neither, and this config lacks both.
    const Run bare = validateFor(written, "sglang", 1);
    QVERIFY2(bare.says("WS-E008", "SGLang 0.5.23's GlmMoeDsaForCausalLM") && bare.says("WS-E008", "config.json lacks moe_layer_freq, topk_method"), bare.dump().c_str());
    wstest::TempDir a, b, c, d, e, f;
    auto withKeys = [](nlohmann::json& j) { j["topk_method"] = "noaux_tc", j["moe_layer_freq"] = 1; };
    const std::string glm = editedCopy(a, written, withKeys);
    const Run clean = validateFor(glm, "sglang", 1);
    QVERIFY2(!clean.says("WS-E009", "") && !clean.says("WS-E008", "consumes is unknown") && !clean.says("WS-E008", "was not read here"), clean.dump().c_str());
    // Every layer full: SGLang builds indexers on layers 1, 2 and 4 that no tensor fills.
    const std::string allFull = editedCopy(b, written, [&](nlohmann::json& j) { withKeys(j), j["indexer_types"] = {"full", "full", "full", "full", "full"}; });
    const Run full = validateFor(allFull, "sglang", 1);
    // Five parameters an indexer (wq_b, wk, k_norm's two, weights_proj): 15 for three layers, listed from layer 1.
    QVERIFY2(full.says("WS-E009", "15 parameters of SGLang 0.5.23's GlmMoeDsaForCausalLM") && full.says("WS-E009", "uninitialised: its loader checks nothing after load_weights (model_loader/loader.py DefaultModelLoader.load_weights_and_postprocess): model.layers.1.self_attn.indexer.k_norm.bias"),
             full.dump().c_str());
    // Layer 3 shared too: its stored indexer is skipped without a word (deepseek_weight_loader.py:354-356).
    const std::string oneFull = editedCopy(c, written, [&](nlohmann::json& j) { withKeys(j), j["indexer_types"] = {"full", "shared", "shared", "shared", "shared"}; });
    const Run one = validateFor(oneFull, "sglang", 1);
    QVERIFY2(!one.says("WS-E009", ""), one.dump().c_str());
    // Without indexer_types, index_topk_freq 3 from the default offset: layers 0, 1 and 4 compute
    // their top-k (max(l - 1, 0) % 3 == 0), so 1 and 4 want tensors the file does not hold.
    const std::string byFreq = editedCopy(d, written, [&](nlohmann::json& j) { withKeys(j), j.erase("indexer_types"), j["index_topk_freq"] = 3; });
    const Run freq = validateFor(byFreq, "sglang", 1);
    QVERIFY2(freq.says("WS-E009", "10 parameters of SGLang 0.5.23's GlmMoeDsaForCausalLM") && freq.says("WS-E009", "(model_loader/loader.py DefaultModelLoader.load_weights_and_postprocess): model.layers.1.self_attn.indexer.k_norm.bias"),
             freq.dump().c_str());
    // Interleaved indexer rope (GLM-5.2's): on CUDA wk and weights_proj fill one fused BF16
    // wk_weights_proj; a layer whose weights_proj is missing leaves its rows unfilled.
    const std::string fused = editedCopy(e, written, [&](nlohmann::json& j) { withKeys(j), j["indexer_rope_interleave"] = true; });
    const Run fusedRun = validateFor(fused, "sglang", 1);
    QVERIFY2(!fusedRun.says("WS-E009", ""), fusedRun.dump().c_str());
    const std::string half = tensorsEdited(f, fused, [](wstest::StFile& t) { t.remove("model.layers.3.self_attn.indexer.weights_proj.weight"); });
    const Run halfRun = validateFor(half, "sglang", 1);
    QVERIFY2(halfRun.says("WS-E009", "model.layers.3.self_attn.indexer.wk_weights_proj.weight (1 of 2 shards unfilled: weights_proj)"), halfRun.dump().c_str());
    // The key norm's biases gone: a LayerNorm's bias is left unfilled; an RMS-normed key
    // (index_k_norm_type "rms") has none, and loads.
    wstest::TempDir g, g2;
    const std::string noBias = tensorsEdited(g, glm, [](wstest::StFile& t) {
      t.remove("model.layers.0.self_attn.indexer.k_norm.bias");
      t.remove("model.layers.3.self_attn.indexer.k_norm.bias");
    });
    const Run layerNorm = validateFor(noBias, "sglang", 1);
    QVERIFY2(layerNorm.says("WS-E009", "2 parameters of SGLang") && layerNorm.says("WS-E009", "model.layers.0.self_attn.indexer.k_norm.bias"), layerNorm.dump().c_str());
    const std::string rms = editedCopy(g2, noBias, [](nlohmann::json& j) { j["index_k_norm_type"] = "rms"; });
    const Run rmsRun = validateFor(rms, "sglang", 1);
    QVERIFY2(!rmsRun.says("WS-E009", ""), rmsRun.dump().c_str());
    // vLLM 0.11.0 reads none of these keys: a DeepSeek-V3.2 config naming shared layers still gets
    // an indexer in every layer, so nothing about them is unknown.
    wstest::TempDir h;
    const std::string v32 = editedCopy(h, wstest::sourceDir() + "/tests/data/deepseek_v32", [](nlohmann::json& j) {
      j["indexer_types"] = nlohmann::json::array();
      for (int64_t l = 0; l < j["num_hidden_layers"].get<int64_t>(); ++l) j["indexer_types"].push_back(l == 0 ? "full" : "shared");
    });
    const Run v = validateFor(v32, "vllm", 1);
    QVERIFY2(!v.says("WS-E008", "consumes is unknown") && v.says("WS-E009", "model.layers.1.self_attn.indexer.weights_proj.bias"), v.dump().c_str());
  }

  // A quantization's own parameters exist only on the modules built with the quantization config:
  // DeepSeek's router is vLLM's ReplicatedLinear with quant_config=None and SGLang's bare
  // nn.Parameter. An FP8 checkpoint whose tool also quantized a router stores a weight_scale_inv
  // for it that neither engine has a parameter for: vLLM's params_dict lookup raises, SGLang warns
  // and drops it (and would run the FP8 bytes as the router's BF16 weight).
  void quantizedRouterHasNoScaleParameter() {
    wstest::TempDir d, e;
    const std::string ds = smallDeepseek(d, "fp8-block");
    const Run clean = validateFor(ds, "vllm", 1);
    QVERIFY2(!clean.says("WS-E009", ""), clean.dump().c_str());
    const std::string gate = "model.layers.1.mlp.gate.weight_scale_inv";
    const std::string scaled = tensorsEdited(e, ds, [&](wstest::StFile& f) { f.tensors.push_back({gate, "F32", {1, 1}, std::vector<uint8_t>(4, 0)}); });
    const Run v = validateFor(scaled, "vllm", 1);
    QVERIFY2(v.says("WS-E009", "KeyError: '" + gate + "'"), v.dump().c_str());
    const Run s = validateFor(scaled, "sglang", 1);
    QVERIFY2(s.says("WS-E009", gate), s.dump().c_str());
  }

  // A head dropped as tied: Mixtral's config says tie_word_embeddings, vLLM shares the embedding
  // and loads; SGLang's MixtralForCausalLM makes lm_head its own parameter (mixtral.py:355) and
  // serves it uninitialised.
  void tiedHeadByEngine() {
    wstest::TempDir a, b;
    const std::string untied = tensorsEdited(a, wstest::fixture("hf/mixtral"), [](wstest::StFile& f) { f.remove("lm_head.weight"); });
    const std::string tied = editedCopy(b, untied, [](nlohmann::json& c) { c["tie_word_embeddings"] = true; });
    QVERIFY(!validateFor(tied, "vllm", 1).says("WS-E009", ""));
    const Run s = validateFor(tied, "sglang", 1);
    QVERIFY2(s.says("WS-E009", "1 parameters of SGLang 0.5.23's MixtralForCausalLM (sglang/srt/models/mixtral.py MixtralForCausalLM.load_weights) left wholly or partly unfilled, which SGLang "
                               "loads uninitialised: its loader checks nothing after load_weights (model_loader/loader.py DefaultModelLoader.load_weights_and_postprocess): lm_head.weight"),
             s.dump().c_str());
    // Tied with the fixture's own lm_head kept (unlike its embedding): vLLM's AutoWeightsLoader
    // copies it into the shared tensor - one of the two overwrites the other.
    wstest::TempDir c;
    const std::string both = editedCopy(c, wstest::fixture("hf/mixtral"), [](nlohmann::json& j) { j["tie_word_embeddings"] = true; });
    const Run v = validateFor(both, "vllm", 1);
    QVERIFY2(v.says("WS-E009", "ties lm_head.weight to the embedding (tie_word_embeddings is true) and still loads the checkpoint's lm_head.weight into it, which differs from model.embed_tokens.weight"),
             v.dump().c_str());
  }

  // Names the engines treat apart: a layer past num_hidden_layers (a stray MTP layer) is vLLM
  // Mixtral's KeyError and SGLang's silent skip (get_layer_id's range); a module the class lacks is
  // vLLM's KeyError and SGLang Mixtral's logged "Parameter ... not found in params_dict".
  void strayNamesByEngine() {
    wstest::TempDir d;
    const std::string p = tensorsEdited(d, wstest::fixture("hf/mixtral"), [](wstest::StFile& f) {
      wstest::StEntry past = *f.find("model.norm.weight"), extra = past;
      past.name = "model.layers.2.input_layernorm.weight";  // the fixture has layers 0 and 1
      extra.name = "model.layers.0.extra_norm.weight";
      f.tensors.push_back(past);
      f.tensors.push_back(extra);
    });
    const Run v = validateFor(p, "vllm", 1);
    QVERIFY2(v.says("WS-E009", "2 checkpoint tensors vLLM 0.11.0's MixtralForCausalLM") && v.says("WS-E009", "model.layers.2.input_layernorm.weight"), v.dump().c_str());
    const Run s = validateFor(p, "sglang", 1);
    QVERIFY2(s.says("WS-E009", "1 checkpoint tensors SGLang 0.5.23's MixtralForCausalLM (sglang/srt/models/mixtral.py MixtralForCausalLM.load_weights) never loads: no parameter takes them and it skips "
                               "them with a warning ('Parameter model.layers.0.extra_norm.weight not found in params_dict'): model.layers.0.extra_norm.weight"),
             s.dump().c_str());
  }

  // docs/rules.md's table of which engine runs which quantization on which GPU generation is the
  // rule table's own rendering.
  void capabilityTableInDocs() {
    std::ifstream in(wstest::sourceDir() + "/docs/rules.md");
    const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string table = val::engines::quantKernelMarkdown();
    QVERIFY2(doc.find(table) != std::string::npos, ("docs/rules.md lacks the generated table:\n" + table).c_str());
    std::set<std::pair<std::string, std::string>> rows;
    for (const auto& r : val::engines::quantKernelTable()) QVERIFY2(rows.insert({std::string(r.engine), std::string(r.method)}).second, "one row per engine and path");
  }
};

QTEST_GUILESS_MAIN(TstEngineRules)
#include "tst_engine_rules.moc"
