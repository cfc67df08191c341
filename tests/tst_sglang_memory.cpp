// SGLang 0.5.23's static share and headroom (core/plan/sglang_memory), each case worked out here by
// hand from srt/arg_groups/memory_hook.py handle_gpu_memory_settings and reserve_for_graph_mb, and
// cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes, on published configs' attention keys.
#include <QtTest>

#include <cmath>
#include <string>

#include "core/formats/hf_config.h"
#include "core/plan/kv_cache.h"
#include "core/plan/sglang_memory.h"

using namespace ws;

namespace {

ModelDescription config(const std::string& json) { return parseHfConfigText(json, "config.json"); }

// Qwen/Qwen3-30B-A3B's attention (GQA, no MLA) and deepseek-ai/DeepSeek-V3's (MLA).
const char* kQwen3 = R"({"architectures":["Qwen3MoeForCausalLM"],"model_type":"qwen3_moe","num_hidden_layers":48,"hidden_size":2048,
  "num_attention_heads":32,"num_key_value_heads":4,"head_dim":128,"max_position_embeddings":40960,"vocab_size":151936,"num_experts":128,
  "num_experts_per_tok":8,"moe_intermediate_size":768,"torch_dtype":"bfloat16"})";
const char* kDeepSeekV3 = R"({"architectures":["DeepseekV3ForCausalLM"],"model_type":"deepseek_v3","num_hidden_layers":61,"hidden_size":7168,
  "num_attention_heads":128,"num_key_value_heads":128,"kv_lora_rank":512,"qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":128,
  "vocab_size":129280,"max_position_embeddings":163840,"n_routed_experts":256,"num_experts_per_tok":8,"moe_intermediate_size":2048,"torch_dtype":"bfloat16"})";

plan::SglangStaticShare shareOf(const ModelDescription& m, const plan::SglangLaunch& l) {
  auto s = plan::sglangStaticShare(m, l);
  if (!s) qFatal("%s", s.error().describe().c_str());
  return s.value();
}

plan::SglangLaunch launch(double gpuMiB, int tp = 1, int attnDp = 1) {
  plan::SglangLaunch l;
  l.gpuMemMiB = gpuMiB, l.tpSize = tp, l.attnDpSize = attnDp;
  return l;
}

}  // namespace

class TstSglangMemory : public QObject {
  Q_OBJECT
 private slots:
  void prefillGraphBatchSizes() {
    // range(4,33,4) 8 + range(48,257,16) 14 + range(288,513,32) 8 + range(576,1025,64) 8 +
    // range(1280,4097,256) 12 + range(4608, max+1, 512)
    QCOMPARE(plan::sglangPrefillGraphCount(8192), int64_t(8 + 14 + 8 + 8 + 12 + 8));
    QCOMPARE(plan::sglangPrefillGraphCount(4096), int64_t(50));
    QCOMPARE(plan::sglangPrefillGraphCount(2048), int64_t(8 + 14 + 8 + 8 + 4));  // 1280 1536 1792 2048
    QCOMPARE(plan::sglangPrefillGraphCount(16384), int64_t(50 + 24));            // 4608 .. 16384 by 512
    QCOMPARE(plan::sglangPrefillGraphCount(3), int64_t(0));
  }

  void h100GqaTp1() {
    // 81,559 MiB: the H100/A100-80GB tier (< 90 GiB): chunked prefill 8192, decode max_bs 256 (TP < 4).
    // 512 + 8192 x 1.5 + 1 / 8 x 1024 + 256 x 2 + 58 prefill graphs x 8 = 13,904 MiB, above the 10 GiB floor.
    const auto s = shareOf(config(kQwen3), launch(81559));
    QCOMPARE(s.chunkedPrefillSize, int64_t(8192));
    QCOMPARE(s.decodeMaxBs, int64_t(256));
    QCOMPARE(s.prefillGraphs, int64_t(58));
    QCOMPARE(s.reservedMiB, 512 + 12288 + 128 + 512 + 58 * 8.0);
    QCOMPARE(s.memFractionStatic, 0.83);  // (81559 - 13904) / 81559 = 0.82952
  }

  void h200MlaWithDpAttention() {
    // 143,771 MiB (nvidia-smi on the H200): tier < 160 GiB, TP 8: max_bs 512; MLA prefill graphs a flat 1536;
    // DP attention 8: 512 x 8 x 3, and x 1.5 more above 300: 512 + 12288 + 1024 + 1024 + 1536 + 12288 + 6144 = 34,816.
    const auto s = shareOf(config(kDeepSeekV3), launch(143771, 8, 8));
    QCOMPARE(s.decodeMaxBs, int64_t(512));
    QCOMPARE(s.prefillMaxBs, int64_t(8192));
    QCOMPARE(s.reservedMiB, 34816.0);
    QCOMPARE(s.memFractionStatic, 0.758);  // 108955 / 143771 = 0.75784
  }

  void smallGpuHasNoFloor() {
    // A100-40GB (40,960 MiB, < 60 GiB): chunked prefill 4096, max_bs 32; 50 prefill graphs up to 4096.
    // 512 + 6144 + 128 + 64 + 400 = 7,248; no 10 GiB floor at or below 60 GiB.
    const auto s = shareOf(config(kQwen3), launch(40960));
    QCOMPARE(s.reservedMiB, 7248.0);
    QCOMPARE(s.memFractionStatic, 0.823);  // 33712 / 40960 = 0.82305
  }

  void theOtherTwoTiers() {
    // 24,564 MiB (an RTX 4090's nvidia-smi total, below 35 GiB): chunked prefill 4096, max_bs 48 at TP 1;
    // 512 + 6144 + 128 + 96 + 50 prefill graphs x 8 = 7,280.
    const auto small = shareOf(config(kQwen3), launch(24564));
    QCOMPARE(small.reservedMiB, 7280.0);
    QCOMPARE(small.memFractionStatic, 0.704);  // 17284 / 24564 = 0.70363
    // 183,359 MiB (B200, above 160 GiB): chunked prefill 16384, max_bs 512 whatever the TP;
    // 512 + 24576 + 128 + 1024 + 74 prefill graphs x 8 = 26,832.
    const auto big = shareOf(config(kQwen3), launch(183359));
    QCOMPARE(big.decodeMaxBs, int64_t(512));
    QCOMPARE(big.prefillGraphs, int64_t(74));
    QCOMPARE(big.reservedMiB, 26832.0);
    QCOMPARE(big.memFractionStatic, 0.854);  // 156527 / 183359 = 0.85367
  }

  void floorAbove60GiB() {
    // --chunked-prefill-size 2048 on an H100: 512 + 3072 + 128 + 512 + 42 x 8 = 4,560, raised to 10,240.
    auto l = launch(81559);
    l.chunkedPrefillSize = 2048;
    const auto s = shareOf(config(kQwen3), l);
    QCOMPARE(s.prefillGraphs, int64_t(42));
    QCOMPARE(s.reservedMiB, 10240.0);
    QCOMPARE(s.memFractionStatic, 0.874);  // 71319 / 81559 = 0.87445
  }

  void runningRequestsCapTheDecodeGraphs() {
    // --max-running-requests 64 lowers the default max_bs 256 to 64: 128 MiB of graphs instead of 512.
    auto l = launch(81559);
    l.maxRunningRequests = 64;
    const auto s = shareOf(config(kQwen3), l);
    QCOMPARE(s.decodeMaxBs, int64_t(64));
    QCOMPARE(s.reservedMiB, 512 + 12288 + 128 + 128 + 464.0);
  }

  void llama2PathCapsPrefillGraphs() {
    // "llama-2" in the model path caps the prefill graphs at 4096 tokens (50 of them).
    auto l = launch(81559);
    l.modelPath = "/models/meta-llama/llama-2-70b-hf";
    QCOMPARE(shareOf(config(kQwen3), l).prefillGraphs, int64_t(50));
  }

  void deepseekV4AndKdaDropPrefillGraphs() {
    // DeepSeek-V4 (compress_ratios) and KDA attention: no breakable prefill graphs, no 8 MiB each.
    const auto v4 = config(R"({"architectures":["DeepseekV4ForCausalLM"],"model_type":"deepseek_v4","num_hidden_layers":3,"hidden_size":64,
      "num_attention_heads":4,"num_key_value_heads":1,"head_dim":512,"compress_ratios":[0,4,128],"sliding_window":128,"torch_dtype":"bfloat16"})");
    QCOMPARE(shareOf(v4, launch(81559)).reservedMiB, 512 + 12288 + 128 + 512.0);
    const auto kimiLinear = config(R"({"architectures":["KimiLinearForCausalLM"],"model_type":"kimi_linear","num_hidden_layers":4,
      "hidden_size":64,"num_attention_heads":4,"num_key_value_heads":4,"head_dim":16,"linear_attn_config":{"kda_layers":[1,2,3]},"torch_dtype":"bfloat16"})");
    QVERIFY(kimiLinear.attention.kdaAttention);
    QCOMPARE(shareOf(kimiLinear, launch(81559)).prefillGraphs, int64_t(0));
    QVERIFY(!config(kQwen3).attention.kdaAttention);
  }

  void refusesWhatItCannotSay() {
    // A vision tower: SGLang's own lists decide; no GPU memory; a share at or below zero.
    const auto vl = config(R"({"architectures":["Qwen3VLMoeForConditionalGeneration"],"model_type":"qwen3_vl_moe","vision_config":{"depth":27},
      "text_config":{"num_hidden_layers":48,"hidden_size":2048,"num_attention_heads":32,"num_key_value_heads":4,"head_dim":128}})");
    QVERIFY(vl.visionTower);
    auto r = plan::sglangStaticShare(vl, launch(81559));
    QVERIFY(!r && r.error().message.find("--mem-fraction-static") != std::string::npos);
    QVERIFY(!plan::sglangStaticShare(config(kQwen3), launch(0)));
    auto tiny = plan::sglangStaticShare(config(kQwen3), launch(1024));
    QVERIFY(!tiny && tiny.error().message.find("4064") != std::string::npos);  // 512 + 2048 x 1.5 + 128 + 8 x 2 + 42 x 8 on 1 GiB
    // Given, it is taken as it is - even for a vision model.
    auto given = launch(0);
    given.memFractionStatic = 0.7;
    QCOMPARE(shareOf(vl, given).memFractionStatic, 0.7);
  }

  void headroomIsTheRestOfTheFreeMemory() {
    // The reserve line under --runtime sglang: free before the weights x (1 - share), nothing of vLLM's.
    plan::KvOptions o;
    o.sglang = true;
    o.sglangLaunch = launch(81559);
    o.sglangLaunch.preLoadFreeBytes = 80ull << 30;
    const auto r = plan::runtimeReserves(config(kQwen3), o, 0);
    QCOMPARE(int(r.size()), 1);
    QCOMPARE(r.front().name, std::string("sglang_headroom"));
    QCOMPARE(r.front().bytes, uint64_t(std::floor(double(80ull << 30) * (1 - 0.83))));
  }
};

QTEST_GUILESS_MAIN(TstSglangMemory)
#include "tst_sglang_memory.moc"
