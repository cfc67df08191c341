// The KV cache per layer kind and dtype, and what fits, against arithmetic written out here, on the
// attention keys of the published config.json files (DeepSeek-V3, DeepSeek-V3.2-Exp, Kimi-K2, GLM-4.5,
// Qwen3-235B-A22B, gpt-oss-120b, Qwen3-Next-80B-A3B) and on the fixtures.
#include <QtTest>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "core/formats/hf_config.h"
#include "core/plan/kv_cache.h"
#include "core/plan/llama_cpp_cache.h"
#include "core/plan/llama_cpp_compute.h"
#include "core/plan/vllm_profile.h"
#include "core/plan/sglang_dsv4_pool.h"
#include "test_support.h"

using namespace ws;

namespace {

ModelDescription config(const std::string& json) { return parseHfConfigText(json, "config.json"); }

plan::KvCache kvOf(const ModelDescription& m, const plan::KvOptions& o) {
  auto r = plan::kvCachePerRank(m, o);
  if (!r) qFatal("%s", r.error().describe().c_str());
  return r.value();
}

// The attention keys of the published configs (huggingface.co/<repo>/blob/main/config.json).
const char* kDeepSeekV3 = R"({"model_type":"deepseek_v3","num_hidden_layers":61,"hidden_size":7168,"num_attention_heads":128,
  "num_key_value_heads":128,"kv_lora_rank":512,"qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":128,"vocab_size":129280,
  "max_position_embeddings":163840,"num_nextn_predict_layers":1,"n_routed_experts":256,"num_experts_per_tok":8,"moe_intermediate_size":2048,
  "torch_dtype":"bfloat16"})";
// DeepSeek-V3.2-Exp: DeepSeek-V3's attention and a sparse-attention indexer (index_*).
const char* kDeepSeekV32 = R"({"architectures":["DeepseekV32ForCausalLM"],"model_type":"deepseek_v32","num_hidden_layers":61,
  "hidden_size":7168,"num_attention_heads":128,"num_key_value_heads":128,"kv_lora_rank":512,"q_lora_rank":1536,"qk_rope_head_dim":64,
  "qk_nope_head_dim":128,"v_head_dim":128,"index_head_dim":128,"index_n_heads":64,"index_topk":2048,"vocab_size":129280,
  "max_position_embeddings":163840,"num_nextn_predict_layers":1,"n_routed_experts":256,"num_experts_per_tok":8,
  "moe_intermediate_size":2048,"torch_dtype":"bfloat16"})";
// google/gemma-3n-E4B's text_config: the last 15 of 35 layers reuse earlier layers' keys and values.
const std::string kGemma3nE4B = [] {
  std::string types;
  for (int i = 0; i < 35; ++i) types += std::string(i ? "," : "") + (i % 5 == 4 ? "\"full_attention\"" : "\"sliding_attention\"");
  return R"({"model_type":"gemma3n","text_config":{"model_type":"gemma3n_text","num_hidden_layers":35,"hidden_size":2048,
    "num_attention_heads":8,"num_key_value_heads":2,"head_dim":256,"sliding_window":512,"num_kv_shared_layers":15,
    "vocab_size":262400,"max_position_embeddings":32768,"layer_types":[)" + types + R"(]}})";
}();
// Kimi-K2 is DeepSeek-V3's MLA with half the heads and no MTP layer; GLM-4.5 is plain GQA with
// one MTP layer.
const char* kKimiK2 = R"({"model_type":"kimi_k2","num_hidden_layers":61,"hidden_size":7168,"num_attention_heads":64,
  "num_key_value_heads":64,"kv_lora_rank":512,"q_lora_rank":1536,"qk_rope_head_dim":64,"qk_nope_head_dim":128,"v_head_dim":128,
  "vocab_size":163840,"max_position_embeddings":131072,"num_nextn_predict_layers":0,"n_routed_experts":384,"num_experts_per_tok":8,
  "moe_intermediate_size":2048,"torch_dtype":"bfloat16"})";
const char* kGlm45 = R"({"model_type":"glm4_moe","num_hidden_layers":92,"hidden_size":5120,"num_attention_heads":96,
  "num_key_value_heads":8,"head_dim":128,"vocab_size":151552,"max_position_embeddings":131072,"num_nextn_predict_layers":1,
  "n_routed_experts":160,"num_experts_per_tok":8,"moe_intermediate_size":1536,"first_k_dense_replace":3,"torch_dtype":"bfloat16"})";
const char* kQwen3_235B = R"({"model_type":"qwen3_moe","num_hidden_layers":94,"hidden_size":4096,"num_attention_heads":64,
  "num_key_value_heads":4,"head_dim":128,"vocab_size":151936,"max_position_embeddings":40960,"num_experts":128,"num_experts_per_tok":8,
  "moe_intermediate_size":1536,"sliding_window":null,"use_sliding_window":false,"torch_dtype":"bfloat16"})";
const std::string kGptOss120b = [] {
  std::string types;
  for (int i = 0; i < 36; ++i) types += std::string(i ? "," : "") + (i % 2 ? "\"full_attention\"" : "\"sliding_attention\"");
  return R"({"model_type":"gpt_oss","num_hidden_layers":36,"hidden_size":2880,"num_attention_heads":64,"num_key_value_heads":8,
    "head_dim":64,"sliding_window":128,"layer_types":[)" + types + R"(],"vocab_size":201088,"max_position_embeddings":131072,
    "num_local_experts":128,"num_experts_per_tok":4,"intermediate_size":2880})";
}();
const char* kQwen3Next = R"({"model_type":"qwen3_next","num_hidden_layers":48,"hidden_size":2048,"num_attention_heads":16,
  "num_key_value_heads":2,"head_dim":256,"full_attention_interval":4,"linear_num_key_heads":16,"linear_num_value_heads":32,
  "linear_key_head_dim":128,"linear_value_head_dim":128,"linear_conv_kernel_dim":4,"vocab_size":151936,"max_position_embeddings":262144,
  "num_experts":512,"num_experts_per_tok":10,"moe_intermediate_size":512,"torch_dtype":"bfloat16"})";

}  // namespace

class TstKvCache : public QObject {
  Q_OBJECT
 private slots:
  // MLA: one latent of kv_lora_rank + qk_rope_head_dim per token and layer, whatever the TP.
  void deepSeekV3Mla() {
    const ModelDescription m = config(kDeepSeekV3);
    plan::KvOptions o;
    o.maxModelLen = 32768;
    for (int tp : {1, 8}) {
      o.tp = tp;
      const plan::KvCache kv = kvOf(m, o);
      QCOMPARE(kv.layers.mla, 61);
      QCOMPARE(kv.bytesPerToken, uint64_t((512 + 64) * 2 * 61));  // 1152 B a layer: 70,272 B a token
    }
    o.dtype = "fp8_ds_mla";
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(656 * 61));  // 40,016
    o.dtype = "fp8";
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t((512 + 64) * 61));
    o.dtype = "auto";
    o.speculative = 1;  // the MTP layer drafts: its latent cache too
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(1152 * 62));
  }

  // DeepSeek-V3.2: vLLM 0.11.0 keeps, beside each layer's latent, the indexer's key - 128 FP8 values
  // and one FP32 scale, 132 B - and turns "auto" and fp8 into its fp8_ds_mla (656 B a latent).
  void deepSeekV32Indexer() {
    const ModelDescription m = config(kDeepSeekV32);
    plan::KvOptions o;
    o.maxModelLen = 32768;
    for (int tp : {1, 8}) {
      o.tp = tp;
      const plan::KvCache kv = kvOf(m, o);
      QCOMPARE(kv.dtype, std::string("fp8_ds_mla"));
      QCOMPARE(kv.layers.mla, 61);
      QCOMPARE(kv.indexerBytesPerToken, uint64_t(132 * 61));        // 8,052 B
      QCOMPARE(kv.bytesPerToken, uint64_t((656 + 132) * 61));       // 48,068 B a token
      QCOMPARE(kv.blockSize, int64_t(64));                          // FlashMLASparse's blocks, whatever --block-size says
    }
    o.dtype = "fp8_e4m3";
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t((656 + 132) * 61));
    o.dtype = "bf16";  // vLLM's bfloat16 means the model's dtype: the plain latent
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(((512 + 64) * 2 + 132) * 61));
    o.dtype = "auto";
    o.speculative = 1;  // the MTP layer is the same decoder layer: latent and indexer key
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t((656 + 132) * 62));
    // Tokens are counted in whole blocks of 64: 1,000 tokens' worth of bytes hold 960.
    const plan::KvCache kv = kvOf(m, o);
    QCOMPARE(plan::fitKvCache(kv, int64_t(kv.bytesPerToken) * 1000 + 5, kv.blockSize).tokensFit, uint64_t(960));
    // As transformers 5.25.0 writes V3.2 (tests/data/deepseek_v32: layer_types "indexed_attention",
    // latent 32 + rope 16, indexer keys of 64): fp8_ds_mla's fixed 656 B and 64 + 0 scale bytes a
    // layer in vLLM; in llama.cpp's conversion the latent and a 64-wide key in f16, each layer.
    auto written = wstest::openOrFail(wstest::sourceDir() + "/tests/data/deepseek_v32");
    plan::KvOptions w;
    w.maxModelLen = 4096;
    QCOMPARE(kvOf(written->model, w).bytesPerToken, uint64_t((656 + 64) * 3));
    auto gguf = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/deepseek-v32-bf16.gguf");
    w.llamaCpp = true;
    const plan::KvCache lc = kvOf(gguf->model, w);
    QCOMPARE(lc.indexerBytesPerToken, uint64_t(64 * 2 * 3));
    QCOMPARE(lc.bytesPerToken, uint64_t((32 + 16 + 64) * 2 * 3));
    // The indexer without its width is an error naming the key.
    nlohmann::json j = nlohmann::json::parse(kDeepSeekV32);
    j.erase("index_head_dim");
    auto noWidth = plan::kvCachePerRank(config(j.dump()), o);
    QVERIFY(!noWidth);
    QVERIFY2(noWidth.error().message.find("index_head_dim") != std::string::npos, noWidth.error().message.c_str());
  }

  // Gemma 3n: vLLM 0.11.0 gives the 15 KV-sharing layers no cache (gemma3n.py:332-344); of the 20
  // that keep one, every fifth is full: 4 full and 16 sliding layers of 2 heads x (256 + 256) x 2 B.
  void gemma3nSharedLayers() {
    plan::KvOptions o;
    o.maxModelLen = 32768;
    const plan::KvCache kv = kvOf(config(kGemma3nE4B), o);
    QCOMPARE(kv.layers.shared, 15);
    QCOMPARE(kv.layers.full, 4);
    QCOMPARE(kv.layers.sliding, 16);
    QCOMPARE(kv.bytesPerToken, uint64_t(4 * 2048));
    QCOMPARE(kv.slidingBytesPerToken, uint64_t(16 * 2048));
    // The window as vLLM caps it: ceil(min(511 + 8192, 32768) / 16) + 1 = 545 blocks of 16 tokens.
    QCOMPARE(kv.slidingBytesPerSeq, uint64_t(545 * 16) * 16 * 2048);
  }

  // Gemma 4 as llama.cpp 0c1e57098 converted and allocates it (tests/data/llama_cpp/gemma4-bf16.gguf,
  // tests/scripts/make_gemma4.py): head_count_kv an array (2 heads of 16 on the sliding layers, 1
  // of 32 on the full ones: key_length_swa 16, key_length 32), and the last 4 of 8 layers reusing
  // earlier ones' caches (attention.shared_kv_layers). llama.cpp's own lines are held in
  // llamaCppLogsItsOwnCache; here each layer and the plan's bytes a token, worked out by hand.
  void ggufGemma4PerLayerWidths() {
    auto c = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/gemma4-bf16.gguf");
    const AttentionConfig& a = c->model.attention;
    QCOMPARE(a.kvHeadsPerLayer, (std::vector<int64_t>{2, 2, 2, 1, 2, 2, 2, 1}));
    QCOMPARE(a.headDimSwa, int64_t(16));
    QCOMPARE(a.headDim, int64_t(32));
    QCOMPARE(a.kvSharedLayers, int64_t(4));
    const auto layers = plan::llamaCppLayerKv(c->model);
    QCOMPARE(layers.size(), size_t(8));
    for (size_t il = 0; il < layers.size(); ++il) {
      QCOMPARE(layers[il].hasKv, il < 4);
      QCOMPARE(layers[il].sliding, il % 4 != 3);
      QCOMPARE(layers[il].kWidth, uint64_t(layers[il].sliding ? 2 * 16 : 1 * 32));
    }
    // The HF source as transformers 5.25.0 wrote it: per_layer_config gives the full layers theirs.
    auto hf = wstest::openOrFail(wstest::sourceDir() + "/tests/data/gemma4");
    const AttentionConfig& h = hf->model.attention;
    for (int64_t il = 0; il < 8; ++il) {
      QCOMPARE(h.headDimAt(il), int64_t(il % 4 == 3 ? 32 : 16));
      QCOMPARE(h.kvHeadsAt(il), int64_t(il % 4 == 3 ? 1 : 2));
    }
    QCOMPARE(h.kvSharedLayers, int64_t(4));
    // Without per_layer_config, transformers gives the full layers global_head_dim, and
    // num_global_key_value_heads only where attention_k_eq_v is true.
    const std::string older = R"({"model_type":"gemma4_text","num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,
      "global_head_dim":64,"num_global_key_value_heads":1,"layer_types":["sliding_attention","full_attention"])";
    QCOMPARE(config(older + R"(,"attention_k_eq_v":true})").attention.kvHeadsAt(1), int64_t(1));
    QCOMPARE(config(older + "}").attention.kvHeadsAt(1), int64_t(2));
    QCOMPARE(config(older + "}").attention.headDimAt(1), int64_t(64));
    QCOMPARE(config(older + "}").attention.headDimAt(0), int64_t(16));
    plan::KvOptions o;
    o.llamaCpp = true;
    o.maxModelLen = 4096;
    const plan::KvCache kv = kvOf(c->model, o);
    QCOMPARE(kv.layers.shared, 4);
    QCOMPARE(kv.layers.full, 1);
    QCOMPARE(kv.layers.sliding, 3);
    QCOMPARE(kv.bytesPerToken, uint64_t((32 + 32) * 2));             // layer 3 alone grows with the context
    QCOMPARE(kv.slidingBytesPerToken, uint64_t(3 * (32 + 32) * 2));  // layers 0-2
    QCOMPARE(kv.slidingBytesPerSeq, uint64_t(768) * 3 * 128);        // PAD(64 + 512, 256) cells
  }

  // Kimi-K2: the same latent as DeepSeek-V3 (heads do not enter it), 61 layers.
  void kimiK2Mla() {
    const ModelDescription m = config(kKimiK2);
    plan::KvOptions o;
    o.maxModelLen = 131072;
    const plan::KvCache kv = kvOf(m, o);
    QCOMPARE(kv.layers.mla, 61);
    QCOMPARE(kv.bytesPerToken, uint64_t((512 + 64) * 2 * 61));  // 70,272 B, as DeepSeek-V3 with 128 heads
    o.dtype = "fp8_e5m2";
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t((512 + 64) * 1 * 61));
  }

  // GLM-4.5: 8 KV heads of 128 over 92 layers; its MTP layer caches too when it drafts.
  void glm45Gqa() {
    const ModelDescription m = config(kGlm45);
    plan::KvOptions o;
    o.maxModelLen = 32768;
    QCOMPARE(kvOf(m, o).layers.full, 92);
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(8 * (128 + 128) * 2 * 92));  // 4096 B a layer: 376,832 B
    o.tp = 8;
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(1 * 256 * 2 * 92));  // one head a rank: 47,104 B
    o.speculative = 1;
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(1 * 256 * 2 * 93));
    o.dtype = "fp8";
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(1 * 256 * 1 * 93));
  }

  // GQA: KV heads split over TP, replicated once TP exceeds them.
  void qwen3Gqa() {
    const ModelDescription m = config(kQwen3_235B);
    plan::KvOptions o;
    o.maxModelLen = 32768;
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(4 * (128 + 128) * 2 * 94));  // 2048 B a layer: 192,512 B
    o.tp = 4;
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(1 * 256 * 2 * 94));  // one head a rank: 48,128 B
    o.tp = 8;
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(1 * 256 * 2 * 94));  // 4 heads over 8 ranks: replicated, still one
    o.attentionDp = true;
    QCOMPARE(kvOf(m, o).bytesPerToken, uint64_t(4 * 256 * 2 * 94));  // attention DP keeps every head
    QCOMPARE(kvOf(m, o).layers.sliding, 0);  // use_sliding_window false
  }

  // gpt-oss: 18 full layers grow with the context; 18 sliding ones keep the window vLLM's way.
  void gptOssSlidingAndFull() {
    const ModelDescription m = config(kGptOss120b);
    plan::KvOptions o;
    o.maxModelLen = 32768;
    const plan::KvCache kv = kvOf(m, o);
    QCOMPARE(kv.layers.full, 18);
    QCOMPARE(kv.layers.sliding, 18);
    QCOMPARE(kv.bytesPerToken, uint64_t(8 * (64 + 64) * 2 * 18));  // 2048 B a layer: 36,864 B
    QCOMPARE(kv.window, int64_t(128));
    // min(128 - 1 + 8192, 32768) = 8319 tokens: ceil(8319 / 16) + 1 = 521 blocks of 16.
    QCOMPARE(kv.slidingBytesPerSeq, uint64_t(521) * 16 * 2048 * 18);
    o.maxModelLen = 100;  // a request shorter than the window and a batch
    QCOMPARE(kvOf(m, o).slidingBytesPerSeq, uint64_t(7 + 1) * 16 * 2048 * 18);  // ceil(100 / 16) + 1
    // A batch that makes window - 1 + batch a whole number of blocks: 127 + 8193 = 8320 = 520 blocks,
    // + 1 = 521 (window + batch, without vLLM's - 1, would need 522).
    o.maxModelLen = 32768;
    o.maxNumBatchedTokens = 8193;
    QCOMPARE(kvOf(m, o).slidingBytesPerSeq, uint64_t(520 + 1) * 16 * 2048 * 18);
  }

  // gpt-oss under SGLang 0.5.23: a hybrid-SWA architecture (model_config.py is_hybrid_swa_model,
  // SWA_SINK_ARCHS), so a full pool of N tokens and a sliding pool of 0.8 x N: N = budget //
  // (18 x 2048 + 0.8 x 18 x 2048) = budget // 66,355.2, no window a sequence. Named otherwise, the
  // same config is one pool of every layer at 2048 B.
  void gptOssInSglang() {
    ModelDescription m = config(kGptOss120b);
    m.architectures = {"GptOssForCausalLM"};
    plan::KvOptions o;
    o.maxModelLen = 32768;
    o.sglang = true;
    o.blockSize = 1;  // SGLang's page
    const plan::KvCache kv = kvOf(m, o);
    QCOMPARE(kv.layers.full, 18);
    QCOMPARE(kv.layers.sliding, 18);
    QCOMPARE(kv.bytesPerToken, uint64_t(36'864));
    QCOMPARE(kv.poolBytesPerToken, 36'864 + 0.8 * 36'864);
    QCOMPARE(kv.slidingBytesPerSeq, uint64_t(0));
    const plan::KvFit f = plan::fitKvCache(kv, int64_t(10) << 30, 1);
    QCOMPARE(f.tokensFit, uint64_t(161'817));  // 10,737,418,240 // 66,355.2 = 161,817 (Python)
    QCOMPARE(f.maxConcurrency, 161'817.0 / 32'768);
    QCOMPARE(plan::fitKvCache(kv, int64_t(10) << 30, 64).tokensFit, uint64_t(161'792));  // whole pages of 64
    m.architectures = {"SomeSlidingForCausalLM"};
    const plan::KvCache one = kvOf(m, o);
    QCOMPARE(one.bytesPerToken, uint64_t(2 * 36'864));  // the sliding layers at a full layer's cost
    QCOMPARE(one.poolBytesPerToken, 0.0);
    QCOMPARE(one.slidingBytesPerSeq, uint64_t(0));
    m.architectures.clear();
    m.attention.hybridSwaFlag = true;  // a config's own is_hybrid_swa opts in
    QCOMPARE(kvOf(m, o).poolBytesPerToken, 36'864 * 1.8);
  }

  // Qwen3-Next: every 4th layer is full attention, the rest Gated DeltaNet with a fixed state.
  void qwen3NextHybrid() {
    const ModelDescription m = config(kQwen3Next);
    plan::KvOptions o;
    o.maxModelLen = 65536;
    const plan::KvCache kv = kvOf(m, o);
    QCOMPARE(kv.layers.full, 12);
    QCOMPARE(kv.layers.linear, 36);
    QCOMPARE(kv.bytesPerToken, uint64_t(2 * (256 + 256) * 2 * 12));  // 24,576 B
    // conv (4 - 1) x (2 x 16 x 128 + 32 x 128) = 24,576; recurrent 32 x 128 x 128 = 524,288; BF16.
    QCOMPARE(kv.stateBytesPerSeq, uint64_t((24'576 + 524'288) * 2 * 36));
    o.tp = 2;  // both states split over TP
    QCOMPARE(kvOf(m, o).stateBytesPerSeq, uint64_t((12'288 + 262'144) * 2 * 36));
  }

  // Qwen3-Next under SGLang 0.5.23: a state pool of slots first, then the 12 full layers' tokens.
  // A slot at TP 1: conv (2 x 16 x 128 + 32 x 128) x 3 x 2 B = 49,152 and SSM 32 x 128 x 128 x 4 B
  // (FP32) = 2,097,152, over 36 layers = 77,266,944 B. With 40 GiB: 40 x 0.9 / 1.9 GiB holds 263.3
  // slots, so 262 and the padding one; the rest, 22,628,466,688 B, is 920,754 tokens of 24,576 B;
  // 5 slots a running request: 52 requests at most.
  void qwen3NextInSglang() {
    ModelDescription m = config(kQwen3Next);
    m.architectures = {"Qwen3NextForCausalLM"};
    plan::KvOptions o;
    o.sglang = true;
    o.blockSize = 1;
    const plan::KvCache kv = kvOf(m, o);
    QCOMPARE(kv.stateSlotBytes, uint64_t(77'266'944));
    QCOMPARE(kv.bytesPerToken, uint64_t(24'576));
    const plan::KvFit f = plan::fitKvCache(kv, int64_t(40) << 30, 1);
    QCOMPARE(f.stateSlots, int64_t(262));
    QCOMPARE(f.tokensFit, uint64_t(920'754));
    QCOMPARE(f.maxRunning, int64_t(52));
    QCOMPARE(f.maxConcurrency, 920'754.0 / 262'144);  // the config's 262,144 tokens a request: fewer than 52
    QCOMPARE(plan::fitKvCache(kv, int64_t(40) << 30, 1, 30).maxRunning, int64_t(30));  // --max-running-requests 30 below the cap
    QCOMPARE(plan::fitKvCache(kv, int64_t(40) << 30, 1, 5000).maxRunning, int64_t(52));  // and above it
    o.tp = 2;  // both states split: half a slot, 525 of them
    const plan::KvCache kv2 = kvOf(m, o);
    QCOMPARE(kv2.stateSlotBytes, uint64_t(38'633'472));
    QCOMPARE(plan::fitKvCache(kv2, int64_t(40) << 30, 1).stateSlots, int64_t(525));
    // Qwen3.5's text config is Qwen3-Next's; one that says its SSM dtype keeps it: 16 x 128 x 128 x 2 B at TP 2.
    const ModelDescription q35 = config(std::string(kQwen3Next).insert(1, R"("architectures":["Qwen3_5MoeForCausalLM"],"mamba_ssm_dtype":"bfloat16",)"));
    QCOMPARE(kvOf(q35, o).stateSlotBytes, uint64_t((24'576 + 524'288) * 36));
    m.architectures = {"SomeLinearForCausalLM"};  // another linear-attention architecture: not read
    QVERIFY(!plan::kvCachePerRank(m, o));
    QCOMPARE(plan::fitKvCache(kv, int64_t(1) << 20, 1).tokensFit, uint64_t(0));  // not one slot: SGLang refuses
  }

  // Kimi Linear (SGLang 0.5.23 configs/kimi_linear.py): linear_attn_config.kda_layers are 1-based
  // (is_kda_layer: layer_idx + 1 in them); those keep a KDA state, the rest MLA's latent. Worked
  // by hand on a config of its shape - 27 layers, KDA on all but 4, 8, ..., 24, 27; 32 heads of
  // 128; conv kernel 4: 7 MLA layers x (512 + 64) x 2 B a token. A state slot in SGLang
  // (KimiLinearStateShape: conv over q, k, v of 32 x 128 each, 3 steps, BF16; recurrent 32 x 128 x
  // 128 FP32, mamba2_state_dtype(None) whatever the config says) x 20 layers; vLLM's formula
  // keeps both in BF16 a sequence.
  void kimiLinearKdaLayers() {
    const std::string kimi = R"({"architectures":["KimiLinearForCausalLM"],"model_type":"kimi_linear","num_hidden_layers":27,"hidden_size":2304,
      "num_attention_heads":32,"kv_lora_rank":512,"qk_rope_head_dim":64,"max_position_embeddings":1048576,"torch_dtype":"bfloat16","mamba_ssm_dtype":"bfloat16",
      "linear_attn_config":{"full_attn_layers":[4,8,12,16,20,24,27],"kda_layers":[1,2,3,5,6,7,9,10,11,13,14,15,17,18,19,21,22,23,25,26],
      "num_heads":32,"head_dim":128,"short_conv_kernel_size":4}})";
    const ModelDescription m = config(kimi);
    QVERIFY(m.attention.kdaAttention);
    QCOMPARE(m.attention.layerTypes.size(), size_t(27));
    QCOMPARE(m.attention.layerTypes[0], std::string("linear_attention"));  // kda_layers' 1
    QCOMPARE(m.attention.layerTypes[3], std::string("full_attention"));    // full_attn_layers' 4
    QCOMPARE(m.attention.layerTypes[26], std::string("full_attention"));   // 27
    plan::KvOptions o;
    o.maxModelLen = 32768;
    const plan::KvCache vllm = kvOf(m, o);
    QCOMPARE(vllm.layers.mla, 7);
    QCOMPARE(vllm.layers.linear, 20);
    QCOMPARE(vllm.bytesPerToken, uint64_t(7 * (512 + 64) * 2));
    QCOMPARE(vllm.stateBytesPerSeq, uint64_t((3 * 3 * 32 * 128 + 32 * 128 * 128) * 2 * 20));
    o.sglang = true, o.blockSize = 1;
    const plan::KvCache sgl = kvOf(m, o);
    QCOMPARE(sgl.stateSlotBytes, uint64_t((3 * 3 * 32 * 128 * 2 + 32 * 128 * 128 * 4) * 20));
    QCOMPARE(sgl.slotsPerRequest, 5);  // KimiLinearForCausalLM is on _MAMBA_EXTRA_BUFFER_ARCHS
    const double budget = double(int64_t(40) << 30), slot = double(sgl.stateSlotBytes);
    QCOMPARE(plan::fitKvCache(sgl, int64_t(40) << 30, 1).stateSlots, int64_t(std::floor((budget * 0.9 / 1.9 - slot) / slot)));
    o.tp = 2;  // heads split: half a slot
    QCOMPARE(kvOf(m, o).stateSlotBytes, sgl.stateSlotBytes / 2);
    // Kimi K3 wraps the same KimiLinearConfig as its text_config (configs/kimi_k3.py): the same pool.
    std::string k3 = kimi;
    k3.replace(k3.find(R"("architectures":["KimiLinearForCausalLM"],)"), std::string(R"("architectures":["KimiLinearForCausalLM"],)").size(), "");
    k3 = R"({"architectures":["KimiK3ForConditionalGeneration"],"model_type":"kimi_k3","text_config":)" + k3 + "}";
    o.tp = 1;
    QCOMPARE(kvOf(config(k3), o).stateSlotBytes, sgl.stateSlotBytes);
  }

  // llama.cpp: n_ctx x n_layer x (n_embd_k_gqa + n_embd_v_gqa), f16 unless told, from the GGUF keys.
  void ggufLlamaCpp() {
    auto c = wstest::openOrFail(wstest::fixture("gguf/tiny-qwen3moe-kquants.gguf"));
    plan::KvOptions o;
    o.llamaCpp = true;
    o.maxModelLen = 4096;
    o.tp = 4;  // llama.cpp keeps one copy: no split
    const auto& a = c->model.attention;
    QCOMPARE(a.numKvHeads, int64_t(2));
    QCOMPARE(a.headDim, int64_t(64));
    QCOMPARE(kvOf(c->model, o).bytesPerToken, uint64_t(2 * (64 + 64) * 2 * 2));
    o.dtype = "q8_0";  // 34 bytes per 32 values
    QCOMPARE(kvOf(c->model, o).bytesPerToken, uint64_t(2 * (64 + 64) * 34 / 32 * 2));
  }

  // A GGUF's reserves are llama.cpp's, not vLLM's profile-run terms: its compute buffers (a lower
  // bound, llama_cpp_compute.h) and its output buffer of n_vocab x n_seq_max FP32 logits in host memory. The
  // real gpt-oss conversion has no gpt-oss.vocab_size key: n_vocab is its token list's length, as
  // llama.cpp's load_hparams falls back to - checked here against token_embd.weight's rows.
  void ggufReservesAreLlamaCpps() {
    auto c = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/gpt-oss-bf16.gguf");
    uint64_t vocab = 0;
    for (const auto& t : c->tensors)
      if (t.name == "token_embd.weight") vocab = t.shape.front();  // PyTorch order: [vocab, hidden]
    QVERIFY(vocab > 0);
    plan::KvOptions o;
    o.llamaCpp = true;
    o.maxNumSeqs = 4;
    const auto r = plan::runtimeReserves(c->model, o, 0);
    std::map<std::string, plan::Reserve> by;
    for (const auto& x : r) by[x.name] = x;
    QCOMPARE(by.size(), size_t(2));
    QVERIFY(by.count("compute_buffers") && by.count("output_buffer"));
    // The compute buffers by hand at n_ctx = the GGUF's context_length over -np 4 streams, with
    // flash attention: the F16 KQ mask of pad(pad(n_ctx, 256) / 4, 256) cells x 512 tokens (the
    // n_ubatch), against 512 outputs of (n_vocab + n_embd) FP32 logits and hidden state.
    QCOMPARE(c->model.hiddenSize, int64_t(64));
    const uint64_t nCtx = uint64_t(c->model.attention.maxPositions);
    const uint64_t cells = ((nCtx + 255) / 256 * 256 / 4 + 255) / 256 * 256;
    QCOMPARE(by["compute_buffers"].bytes, std::max(cells * 512 * 2, uint64_t(512) * (vocab + 64) * 4));
    QVERIFY(by["compute_buffers"].formula.find("at least") != std::string::npos);
    QCOMPARE(by["output_buffer"].bytes, uint64_t(0));  // not on the GPU
    QCOMPARE(by["output_buffer"].hostBytes, vocab * 4 * 4);
    QVERIFY(plan::runtimeReserves(c->model, [] { plan::KvOptions v; return v; }(), 0).front().name == "profile_run");  // the same model as vLLM would serve it
  }

  // llama.cpp's compute bound (llama_cpp_compute.h) where the reserve's tokens are not n_ubatch, by
  // hand on the real gpt-oss conversion (n_vocab 1000, n_embd 64, 4 heads): -c 256 caps them at
  // n_ctx (256 cells x 256 tokens x (4 B of F32 mask + 4 heads x 4 B of KQ) without flash
  // attention, above 256 outputs x 1064 x 4 B); -np 3 rounds 512 up to 513, a multiple of the
  // sequences (513 outputs x 1064 x 4 B, above the F16 mask of pad(4096 / 3, 256) = 1536 cells).
  void llamaCppComputeTokensByHand() {
    auto c = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/gpt-oss-bf16.gguf");
    QCOMPARE(c->model.attention.numHeads, int64_t(4));
    QCOMPARE(c->model.hiddenSize, int64_t(64));
    plan::LlamaCppComputeOptions o;
    o.cache.nCtx = 256, o.flashAttn = false;
    auto capped = plan::llamaCppComputeBound(c->model, o);
    QVERIFY2(capped, capped ? "" : capped.error().message.c_str());
    QCOMPARE(capped.value().attentionBytes, uint64_t(256) * 256 * (4 + 4 * 4));
    QCOMPARE(capped.value().outputBytes, uint64_t(256) * (1000 + 64) * 4);
    QCOMPARE(capped.value().bytes, capped.value().attentionBytes);
    o.cache.nCtx = 4096, o.cache.nSeq = 3, o.flashAttn = true;
    auto rounded = plan::llamaCppComputeBound(c->model, o);
    QVERIFY(rounded);
    QCOMPARE(rounded.value().outputBytes, uint64_t(513) * (1000 + 64) * 4);
    QCOMPARE(rounded.value().attentionBytes, uint64_t(1536) * 513 * 2);
    QCOMPARE(rounded.value().bytes, rounded.value().outputBytes);
    ModelDescription unsized = c->model;
    unsized.vocabSize = -1;
    QVERIFY(!plan::llamaCppComputeBound(unsized, o));  // no vocabulary: not bounded, said why
  }

  // vLLM 0.11.0's profile-run moments by hand for a Qwen3-30B-A3B-shaped MoE (vocab 151,936,
  // hidden 2048, 128 experts of 768, top-8): the dummy sampler's min(tokens, max_num_seqs) rows of
  // 16-bit logits and their float32 copy; fused_experts_impl's cache13 (M x top-k x max(2 x 768,
  // 2048)) and cache2 (M x top-k x 768) in BF16, M = min(tokens, 32768); for a dense model
  // (Qwen2-7B's intermediate 18,944) 2 x intermediate / TP a token (an ungated MLP's two tensors;
  // a gated one holds more). The reserve is the largest moment, not their sum. And `vllm serve`'s defaults by
  // device (arg_utils.py): 8192 tokens / 1024 sequences from 70 GiB unless an A100, else 2048 / 256.
  void vllmProfileReservesByHand() {
    ModelDescription m;
    m.vocabSize = 151936, m.hiddenSize = 2048, m.numExperts = 128, m.expertsPerToken = 8, m.expertIntermediateSize = 768, m.intermediateSize = 6144;
    auto moments = [&](int64_t tokens, int64_t seqs, int64_t defaultSeqs, int tp = 1) {
      plan::KvOptions o;
      o.maxNumBatchedTokens = tokens, o.maxNumSeqs = seqs, o.defaultMaxNumSeqs = defaultSeqs, o.tp = tp;
      std::map<std::string, uint64_t> by;
      for (const auto& x : plan::vllmProfileMoments(m, o)) by[x.name] = x.bytes;
      const auto lines = plan::runtimeReserves(m, o, 0);
      by["reserve"] = lines.front().name == "profile_run" ? lines.front().bytes : 0;
      return by;
    };
    auto h100 = moments(8192, -1, 1024);
    QCOMPARE(h100.size(), size_t(3));  // sampler, fused MoE, the reserve: a MoE model's intermediate_size is no dense MLP
    QCOMPARE(h100["sampler"], uint64_t(1024) * 151936 * 6);
    QCOMPARE(h100["fused MoE"], uint64_t(8192) * 8 * (2048 + 768) * 2);
    QCOMPARE(h100["reserve"], std::max(h100["sampler"], h100["fused MoE"]));
    QCOMPARE(h100["reserve"], h100["sampler"]);  // 890 MiB of logits against the caches' 352
    auto few = moments(2048, 64, 1024);  // --max-num-seqs 64 and 2048 tokens: the sampler is the smaller
    QCOMPARE(few["sampler"], uint64_t(64) * 151936 * 6);
    QCOMPARE(few["reserve"], uint64_t(2048) * 8 * (2048 + 768) * 2);
    QCOMPARE(moments(100, -1, 1024)["sampler"], uint64_t(100) * 151936 * 6);   // fewer tokens than sequences
    QCOMPARE(moments(65536, -1, 1024)["fused MoE"], uint64_t(32768) * 8 * (2048 + 768) * 2);  // one fused-MoE chunk
    m.hiddenSize = 1024;  // 2 x 768 above the hidden size: cache13 is w13's output
    QCOMPARE(moments(2048, -1, 256)["fused MoE"], uint64_t(2048) * 8 * (1536 + 768) * 2);
    m.numExperts = 0, m.intermediateSize = 18944, m.vocabSize = 152064;  // dense, Qwen2-7B's MLP
    auto dense = moments(2048, -1, 256);
    QCOMPARE(dense["dense MLP"], uint64_t(2048) * 2 * 18944 * 2);
    QCOMPARE(dense["sampler"], uint64_t(256) * 152064 * 6);
    QCOMPARE(dense["reserve"], dense["sampler"]);  // 222.75 MiB against the MLP's 148.0
    QCOMPARE(moments(2048, -1, 256, 2)["dense MLP"], uint64_t(2048) * 2 * (18944 / 2) * 2);  // TP 2 shards the MLP
    m.intermediateSize = 200000;  // an MLP wider than the sampler's logits: it decides
    QCOMPARE(moments(2048, -1, 256)["reserve"], uint64_t(2048) * 2 * 200000 * 2);
    const auto d = [](double gib, const char* name) {
      const plan::VllmServeDefaults v = plan::vllmServeDefaults(uint64_t(gib * double(1ull << 30)), name);
      return std::pair{v.maxNumBatchedTokens, v.maxNumSeqs};
    };
    QCOMPARE(d(79.19, "H100-80GB"), (std::pair<int64_t, int64_t>{8192, 1024}));
    QCOMPARE(d(70.0, ""), (std::pair<int64_t, int64_t>{8192, 1024}));
    QCOMPARE(d(69.99, ""), (std::pair<int64_t, int64_t>{2048, 256}));
    QCOMPARE(d(79.25, "A100-80GB"), (std::pair<int64_t, int64_t>{2048, 256}));
    QCOMPARE(d(79.25, "NVIDIA A100-SXM4-80GB"), (std::pair<int64_t, int64_t>{2048, 256}));
  }

  // llama.cpp's own layout for the real gpt-oss conversion (tests/data/llama_cpp, written by the
  // converter of llama.cpp 0c1e57098): its architecture's pattern 2 slides layer 0 and keeps layer 1
  // full (openai-moe.cpp load_swa_pattern(ml, 2); set_swa_pattern: il % 2 < 1), not every layer as
  // vLLM's reading of the bare sliding_window key would. Worked by hand from the GGUF keys:
  // head_count_kv 2 x key_length 64 (K) and value_length 64 (V), f16: 512 B a cell a layer.
  void ggufGptOssLlamaCppLayers() {
    auto c = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/gpt-oss-bf16.gguf");
    QCOMPARE(plan::llamaCppSlidingLayers(c->model), (std::vector<bool>{true, false}));
    plan::KvOptions o;
    o.llamaCpp = true;
    o.maxModelLen = 4096;
    const plan::KvCache kv = kvOf(c->model, o);
    QCOMPARE(kv.layers.full, 1);
    QCOMPARE(kv.layers.sliding, 1);
    QCOMPARE(kv.bytesPerToken, uint64_t(512));
    // One sequence: PAD(min(4096, 128 + 512), 256) = 768 sliding cells.
    QCOMPARE(kv.slidingBytesPerSeq, uint64_t(768 * 512));
    plan::LlamaCppCacheOptions lo;
    lo.nCtx = 4096;
    auto one = plan::llamaCppCache(c->model, lo);
    QVERIFY(one.ok());
    QCOMPARE(one.value().size(), size_t(2));
    QCOMPARE(one.value()[0].logLine(lo), std::string("llama_kv_cache: size =    2.00 MiB (  4096 cells,   1 layers,  1/1 seqs), K (f16):    1.00 MiB, V (f16):    1.00 MiB"));
    QCOMPARE(one.value()[1].logLine(lo), std::string("llama_kv_cache: size =    0.38 MiB (   768 cells,   1 layers,  1/1 seqs), K (f16):    0.19 MiB, V (f16):    0.19 MiB"));
    // llama-server's default: 4 slots, one unified stream; the sliding part PAD(min(4096, 128 x 4 +
    // 512), 256) = 1024 cells. With --swa-full it is the whole context.
    lo.nSeq = 4, lo.unified = true;
    auto server = plan::llamaCppCache(c->model, lo);
    QCOMPARE(server.value()[1].cells, uint64_t(1024));
    QCOMPARE(server.value()[1].logLine(lo), std::string("llama_kv_cache: size =    0.50 MiB (  1024 cells,   1 layers,  4/1 seqs), K (f16):    0.25 MiB, V (f16):    0.25 MiB"));
    lo.swaFull = true;
    QCOMPARE(plan::llamaCppCache(c->model, lo).value()[1].cells, uint64_t(4096));
    // Four streams of their own: PAD(4096 / 4, 256) = 1024 cells each, the sliding part
    // PAD(min(1024, 128 + 512), 256) = 768 a stream.
    lo.swaFull = false, lo.unified = false;
    auto streams = plan::llamaCppCache(c->model, lo).value();
    QCOMPARE(streams[0].cells, uint64_t(1024));
    QCOMPARE(streams[1].cells, uint64_t(768));
    QCOMPARE(streams[1].kBytes, uint64_t(768 * 4 * 256));
  }

  // llama.cpp's MLA cache (DeepSeek2 with key_length_mla): K only, key_length 96 = kv_lora_rank
  // 64 + rope 32 a cell, V none (llama-kv-cache.cpp: has_v = !is_mla).
  void ggufDeepSeekLlamaCppMla() {
    auto c = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/deepseek-v3-bf16.gguf");
    plan::LlamaCppCacheOptions lo;
    lo.nCtx = 1000;  // padded to 1024 cells
    auto parts = plan::llamaCppCache(c->model, lo).value();
    QCOMPARE(parts.size(), size_t(1));
    QCOMPARE(parts[0].kBytes, uint64_t(96 * 2 * 1024 * 2));
    QCOMPARE(parts[0].vBytes, uint64_t(0));
    lo.typeK = "q8_0";  // MLA: llama_init_from_model makes no context unless K and V types agree
    auto mixed = plan::llamaCppCache(c->model, lo);
    QVERIFY(!mixed);
    QVERIFY2(mixed.error().message.find("does not support different K (q8_0) and V (f16) cache types") != std::string::npos, mixed.error().message.c_str());
    lo.typeV = "q8_0";
    QCOMPARE(plan::llamaCppCache(c->model, lo).value()[0].kBytes, uint64_t(96 / 32 * 34 * 1024 * 2));
  }

  // GLM-DSA (tests/data/llama_cpp/glm-5.2-bf16.gguf, make_glm5.py): indexer types full, shared,
  // shared, full, shared - llama.cpp keeps indexer keys on layers 0 and 3 only (kv_logs.json has its
  // own lines). A GGUF without the array (renamed in a copy here) takes llama.cpp's fallback
  // (glm-dsa.cpp): every layer below a 1,048,576-token n_ctx_train, GLM-5.2's table at or above it.
  void glmDsaIndexerLayers() {
    const std::string path = wstest::sourceDir() + "/tests/data/llama_cpp/glm-5.2-bf16.gguf";
    auto typed = wstest::openOrFail(path);
    QCOMPARE(plan::llamaCppIndexerLayers(typed->model), (std::vector<bool>{true, false, false, true, false}));
    plan::KvOptions o;
    o.maxModelLen = 4096;
    o.llamaCpp = true;
    QCOMPARE(kvOf(typed->model, o).indexerBytesPerToken, uint64_t(64 * 2 * 2));
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto patched = [&](uint32_t nCtxTrain) {
      std::string b = bytes;
      const size_t types = b.find("glm-dsa.attention.indexer.types");
      b[types + std::strlen("glm-dsa.attention.indexer.type")] = 'z';  // the key llama.cpp reads is gone
      const size_t ctx = b.find("glm-dsa.context_length") + std::strlen("glm-dsa.context_length") + 4;  // after the u32 type id
      std::memcpy(&b[ctx], &nCtxTrain, 4);
      return b;
    };
    wstest::TempDir d;
    wstest::writeFile(d.file("glm5.gguf"), patched(4096));
    wstest::writeFile(d.file("glm5-1m.gguf"), patched(1048576));
    auto glm5 = wstest::openOrFail(d.file("glm5.gguf")), glm52 = wstest::openOrFail(d.file("glm5-1m.gguf"));
    QVERIFY(glm5->model.attention.indexerFull.empty());
    QCOMPARE(glm52->model.attention.maxPositions, int64_t(1048576));
    QCOMPARE(plan::llamaCppIndexerLayers(glm5->model), std::vector<bool>(5, true));
    QCOMPARE(plan::llamaCppIndexerLayers(glm52->model), (std::vector<bool>{true, true, true, false, false}));
    plan::LlamaCppCacheOptions lo;
    QCOMPARE(plan::llamaCppCache(glm52->model, lo).value()[1].layers, 3);
    QCOMPARE(plan::llamaCppCache(glm52->model, lo).value()[1].kBytes, uint64_t(64 * 2 * 4096 * 3));
  }

  // DeepSeek-V4 (tests/data/deepseek_v4, published naming; its llama.cpp conversion): layers of
  // ratio 0, 128, 4, 128, 4; keys 64 wide, one KV head; indexer keys 128; window 16. Worked out by
  // hand from llama_kv_cache_dsv4 (src/llama-kv-cache-dsv4.cpp): f16 rows of 128 B, indexer 256 B.
  void deepSeekV4Compressed() {
    auto st = wstest::openOrFail(wstest::sourceDir() + "/tests/data/deepseek_v4");
    QCOMPARE(st->model.attention.compressRatios, (std::vector<int64_t>{0, 128, 4, 128, 4}));  // the published config's compress_ratios
    plan::KvOptions o;
    o.maxModelLen = 4096;
    auto vllm = plan::kvCachePerRank(st->model, o);  // no engine but llama.cpp is modelled: said, not guessed
    QVERIFY(!vllm);
    QVERIFY2(vllm.error().message.find("vLLM 0.11.0 registers no DeepseekV4ForCausalLM") != std::string::npos, vllm.error().message.c_str());
    // transformers 5.25.0's own form: layer_types, with compress_rates overriding the defaults.
    std::ifstream in(wstest::sourceDir() + "/tests/data/deepseek_v4/config.json");
    nlohmann::json j = nlohmann::json::parse(in);
    j.erase("compress_ratios");
    j["compress_rates"] = {{"compressed_sparse_attention", 8}};
    QCOMPARE(config(j.dump()).attention.compressRatios, (std::vector<int64_t>{0, 128, 8, 128, 8}));

    auto gguf = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/deepseek-v4-bf16.gguf");
    QCOMPARE(gguf->model.attention.compressRatios, (std::vector<int64_t>{0, 128, 4, 128, 4}));
    plan::LlamaCppCacheOptions lo;
    lo.nCtx = 4096;
    auto parts = plan::llamaCppCache(gguf->model, lo).value();
    QCOMPARE(parts.size(), size_t(8));
    QCOMPARE(parts[0].layers, 0);                                       // non-SWA: every layer slides
    QCOMPARE(parts[1].kBytes, uint64_t(768 * 5 * 128));                 // SWA: PAD(16 + 512, 256) cells, 5 layers
    QCOMPARE(parts[1].vBytes, uint64_t(0));                             // K only
    QCOMPARE(parts[2].kBytes, uint64_t(1024 * 2 * 128));                // CSA: 4096 / 4 cells, layers 2 and 4
    QCOMPARE(parts[3].kBytes, uint64_t(256 * 2 * 128));                 // HCA: 4096 / 128 = 32, padded to 256
    QCOMPARE(parts[4].kBytes, uint64_t(1024 * 2 * 256));                // the CSA layers' indexer keys
    QCOMPARE(parts[5].kBytes, uint64_t(2 * 128 * 8 * 4 * 2));           // csa state: kv and score, 2 x 64 by 8, F32
    QCOMPARE(parts[6].kBytes, uint64_t(2 * 64 * 128 * 4 * 2));          // hca state: 64 by 128
    QCOMPARE(parts[7].kBytes, uint64_t(2 * 256 * 8 * 4 * 2));           // lid state: 2 x 128 by 8
    lo.nSeq = 4, lo.unified = true;                                     // streams stay one a sequence
    QCOMPARE(plan::llamaCppCache(gguf->model, lo).value()[2].kBytes, uint64_t(1024 * 2 * 128 * 4));
    lo.typeV = "q8_0";                                                  // K and V types must agree
    QVERIFY(!plan::llamaCppCache(gguf->model, lo));
    ModelDescription unsaid = gguf->model;                              // a deepseek4 GGUF without compress_ratios:
    unsaid.attention.compressRatios.clear();                            // llama.cpp refuses it, and so does the plan
    plan::KvOptions llamaCpp;
    llamaCpp.maxModelLen = 4096;
    llamaCpp.llamaCpp = true;
    auto refused = plan::kvCachePerRank(unsaid, llamaCpp);
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.find("compress_ratios has 0 entries for 5 blocks") != std::string::npos, refused.error().message.c_str());
    // plan's per-sequence figures are those caches at -c max-model-len, the growth a token
    // ceil(128 / 4 x 2 + 128 / 128 x 2 + 256 / 4 x 2).
    o.llamaCpp = true;
    const plan::KvCache kv = kvOf(gguf->model, o);
    QCOMPARE(kv.layers.sliding, 5);
    QCOMPARE(kv.slidingBytesPerSeq, uint64_t(768 * 5 * 128));
    QCOMPARE(kv.compressedLayers, 4);
    QCOMPARE(kv.compressedBytesPerSeq, uint64_t((1024 + 256) * 2 * 128 + 1024 * 2 * 256));
    QCOMPARE(kv.stateBytesPerSeq, uint64_t(2 * 128 * 8 * 4 * 2 + 2 * 64 * 128 * 4 * 2 + 2 * 256 * 8 * 4 * 2));
    QCOMPARE(kv.bytesPerToken, uint64_t(64 + 2 + 128));
    const double perSeq = double(kv.compressedBytesPerSeq + kv.slidingBytesPerSeq + kv.stateBytesPerSeq);
    QCOMPARE(plan::fitKvCache(kv, int64_t(perSeq * 3), 16).maxConcurrency, 3.0);
  }

  // DeepSeek-V4 as SGLang 0.5.23 sizes its pools (DSV4PoolConfigurator, pool_configurator.py
  // 1353-1528, 1638-1701; the V4 page layout of kernels/ops/attention/dsv4/kv_layout.py), worked out
  // by hand for a V4-Flash-shaped config: 43 layers, ratios 0, 0, then 4 and 128 twenty times, then
  // 4 (21 ratio-4, 20 ratio-128), head_dim 512 with a 64-wide rope, indexer keys 128.
  //  - a 256-token page of raw keys: 256 x 584 B rounded up to 576 = 149,760 B, 585 B a token;
  //    ratio-4 keys 64 a page (37,440 B, 585 a slot), ratio-128 keys 2 a page (1,152 -> 1,728 B,
  //    864 a slot);
  //  - a sliding token: 585 x 43 + 8 / 256 x (2 x 2 x 512 x 4 + 2 x 2 x 128 x 4) x 21;
  //  - a full token: a tenth of that + 21 x (585 / 4 + (128 + 4) / 4) + 20 x 864 / 128
  //    = 2,515.5 + 4,436.25 + 135 = 7,086.75 B;
  //  - once: 20 ratio-128 states of (257 x 128 + 129 rounded up to 128 = 33,152) rows x 1,024 x 4 B.
  void deepSeekV4SglangPools() {
    ModelDescription m;
    m.numLayers = 43;
    m.attention.headDim = 512, m.attention.qkRopeHeadDim = 64, m.attention.indexHeadDim = 128, m.attention.slidingWindow = 128;
    m.attention.compressRatios = {0, 0};
    for (int i = 0; i < 20; ++i) m.attention.compressRatios.insert(m.attention.compressRatios.end(), {4, 128});
    m.attention.compressRatios.insert(m.attention.compressRatios.end(), {4, 0});  // and the MTP layer's entry, not counted
    m.attention.maxPositions = 1048576;
    const double swaToken = 585.0 * 43 + 8.0 / 256 * (2 * 2 * 512 * 4 + 2 * 2 * 128 * 4) * 21;
    const double fullToken = 0.1 * swaToken + 21 * (37440.0 / 64 / 4 + 132.0 / 4) + 20 * (1728.0 / 2 / 128);
    QCOMPARE(fullToken, 7086.75);
    const uint64_t fixed = uint64_t(20) * 33152 * 1024 * 4;
    auto pool = plan::sglangDsv4Pool(m);
    QVERIFY2(pool.ok(), pool.ok() ? "" : pool.error().message.c_str());
    QCOMPARE(pool.value().bytesPerFullToken, fullToken);
    QCOMPARE(pool.value().fixedBytes, fixed);
    // A budget of 40 GiB, as the sizer floors it: whole 256-token pages, a tenth as many sliding.
    const double budget = 40.0 * (1 << 30);
    const int64_t full = int64_t((budget - double(fixed)) / fullToken) / 256 * 256;
    const plan::SglangDsv4Sizes sizes = plan::sglangDsv4Sizes(pool.value().bytesPerFullToken, pool.value().fixedBytes, budget);
    QCOMPARE(sizes.full, full);
    QCOMPARE(sizes.swa, int64_t(double(full) * 0.1) / 256 * 256);
    QCOMPARE(sizes.c4, full / 4);
    QCOMPARE(sizes.c128, full / 128);
    QCOMPARE(sizes.c4State, sizes.swa / 256 * 8);
    // plan --runtime sglang: the same charge a token, the fixed states once, tokens in whole pages.
    plan::KvOptions o;
    o.maxModelLen = 131072, o.sglang = true;
    const plan::KvCache kv = kvOf(m, o);
    QCOMPARE(kv.poolBytesPerToken, fullToken);
    QCOMPARE(kv.poolFixedBytes, fixed);
    QCOMPARE(kv.dtype, std::string("fp8_e4m3"));
    const plan::KvFit f = plan::fitKvCache(kv, int64_t(budget), 16);
    QCOMPARE(f.tokensFit, uint64_t(full));
    QCOMPARE(f.maxConcurrency, double(full) / 131072);
    // Without --runtime sglang nothing is guessed; the layout's 584-byte token refuses other widths
    // (the transformers-written tiny V4 of tests/data: head_dim 64), and so does a BF16 cache.
    plan::KvOptions plain;
    plain.maxModelLen = 4096;
    QVERIFY(!plan::kvCachePerRank(m, plain));
    auto tiny = wstest::openOrFail(wstest::sourceDir() + "/tests/data/deepseek_v4");
    auto refused = plan::kvCachePerRank(tiny->model, o);
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.find("asserts 584 bytes a token - head_dim 512 with a 64-wide rope") != std::string::npos, refused.error().message.c_str());
    o.dtype = "bf16";
    QVERIFY(!plan::kvCachePerRank(m, o));
  }

  // Measured: the KV-cache lines llama.cpp 0c1e57098 itself logged creating a context for each
  // real conversion (tests/data/llama_cpp/kv_logs.json, made by make_llama_cpp_kv_logs.py with its
  // library) - one, four unified, four separate streams, --swa-full, q8_0 - line for line (DeepSeek-V4:
  // its five caches and three compressor states); where it
  // made no context (Gemma 4's 16-wide heads in a q8_0 cache) the plan refuses with its reason.
  void llamaCppLogsItsOwnCache() {
    std::ifstream in(wstest::sourceDir() + "/tests/data/llama_cpp/kv_logs.json");
    const auto doc = nlohmann::json::parse(in);
    int compared = 0, refusals = 0;
    for (const auto& c : doc["cases"]) {
      auto ckpt = wstest::openOrFail(wstest::sourceDir() + "/tests/data/llama_cpp/" + c["file"].get<std::string>());
      plan::LlamaCppCacheOptions lo;
      lo.nCtx = c["n_ctx"].get<int64_t>();
      lo.nSeq = c["n_seq"].get<int>();
      lo.unified = c["unified"].get<bool>();
      lo.swaFull = c["swa_full"].get<bool>();
      lo.typeK = lo.typeV = c["type"].get<std::string>();
      if (c.contains("refused")) {  // llama.cpp made no context at this setting: neither may the plan
        auto parts = plan::llamaCppCache(ckpt->model, lo);
        QVERIFY2(!parts.ok(), c.dump().c_str());
        const std::string why = c["refused"].get<std::string>();
        QVERIFY2(parts.error().message.find(why.substr(why.find(": ") + 2)) != std::string::npos, (parts.error().message + " | " + why).c_str());
        ++refusals;
        continue;
      }
      std::vector<std::string> logged, predicted;
      for (const auto& l : c["lines"])
        if (l.get<std::string>().rfind("llama_kv_cache: size =", 0) == 0 || l.get<std::string>().rfind("llama_dsv4_comp_state:", 0) == 0)
          logged.push_back(l.get<std::string>());
      auto parts = plan::llamaCppCache(ckpt->model, lo);
      QVERIFY2(parts.ok(), parts.ok() ? "" : parts.error().message.c_str());
      for (const auto& p : parts.value()) predicted.push_back(p.logLine(lo));
      QVERIFY2(!logged.empty(), c.dump().c_str());
      QCOMPARE(predicted, logged);
      ++compared;
    }
    QVERIFY(compared >= 39);
    QVERIFY(refusals >= 3);
  }

  // What fits: free bytes over bytes per token in whole blocks; concurrency per request of L.
  void fitAndConcurrency() {
    const ModelDescription m = config(kQwen3_235B);
    plan::KvOptions o;
    o.maxModelLen = 32768;
    o.tp = 4;
    const plan::KvCache kv = kvOf(m, o);  // 48,128 B a token
    const int64_t free = int64_t(10) << 30;
    const plan::KvFit f = plan::fitKvCache(kv, free, 16);
    QCOMPARE(f.tokensFit, uint64_t(10737418240ull / 48128 / 16 * 16));  // 223,101 tokens, 223,088 in whole blocks
    QCOMPARE(f.maxConcurrency, 10737418240.0 / (32768.0 * 48128.0));
    QCOMPARE(plan::fitKvCache(kv, -5, 16).tokensFit, uint64_t(0));  // the weights already do not fit
  }

  // Concurrency counts what each request keeps besides its tokens: the sliding layers' capped
  // window (gpt-oss) and the linear-attention state (Qwen3-Next), worked out here from the byte
  // counts the tests above check. Leaving either out roughly doubles gpt-oss's answer.
  void slidingAndLinearConcurrency() {
    const int64_t free = int64_t(10) << 30;
    plan::KvOptions o;
    o.maxModelLen = 32768;
    const plan::KvFit gptOss = plan::fitKvCache(kvOf(config(kGptOss120b), o), free, 16);
    // 32,768 tokens x 36,864 B (18 full layers) + 521 blocks x 16 x 2,048 B x 18 sliding layers.
    QCOMPARE(gptOss.maxConcurrency, 10737418240.0 / (32768.0 * 36864.0 + 521.0 * 16 * 2048 * 18));
    QCOMPARE(gptOss.tokensFit, uint64_t(10737418240ull / 36864 / 16 * 16));  // tokens: the full layers' bytes alone
    o.maxModelLen = 65536;
    const plan::KvFit next = plan::fitKvCache(kvOf(config(kQwen3Next), o), free, 16);
    // 65,536 tokens x 24,576 B (12 full layers) + (24,576 + 524,288) x 2 B x 36 linear layers of state.
    QCOMPARE(next.maxConcurrency, 10737418240.0 / (65536.0 * 24576.0 + (24576.0 + 524288.0) * 2 * 36));
    // --max-num-seqs caps what is served, not what fits.
    QCOMPARE(plan::fitKvCache(kvOf(config(kQwen3Next), o), free, 16, 2).servedConcurrency, 2.0);
  }

  // A layer kind whose keys the config lacks is an error naming the key, never a silent zero.
  void missingKeysAreNamed() {
    plan::KvOptions o;
    o.maxModelLen = 1024;
    auto noRope = plan::kvCachePerRank(config(R"({"num_hidden_layers":2,"kv_lora_rank":512,"num_attention_heads":8})"), o);
    QVERIFY(!noRope);
    QVERIFY2(noRope.error().message.find("qk_rope_head_dim") != std::string::npos, noRope.error().message.c_str());
    auto noWindow = plan::kvCachePerRank(config(R"({"num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"head_dim":64,
      "layer_types":["sliding_attention","full_attention"]})"), o);
    QVERIFY(!noWindow);
    QVERIFY2(noWindow.error().message.find("sliding_window") != std::string::npos, noWindow.error().message.c_str());
    auto noLen = plan::kvCachePerRank(config(R"({"num_hidden_layers":2,"num_attention_heads":8,"head_dim":64})"), plan::KvOptions{});
    QVERIFY(!noLen);
    QVERIFY2(noLen.error().message.find("--max-model-len") != std::string::npos, noLen.error().message.c_str());
    o.dtype = "fp8_ds_mla";
    QVERIFY(!plan::kvCachePerRank(config(kQwen3_235B), o));  // fp8_ds_mla is MLA's alone
  }

  // The fixtures' own configs: DeepSeek-V3's tiny MLA and Qwen3-MoE's GQA.
  void fixtures() {
    plan::KvOptions o;
    auto ds = wstest::openOrFail(wstest::fixture("hf/deepseek_v3"));
    QCOMPARE(kvOf(ds->model, o).bytesPerToken, uint64_t((64 + 32) * 2 * 3));  // kv_lora_rank 64, rope 32, 3 layers
    QCOMPARE(kvOf(ds->model, o).maxModelLen, int64_t(512));                   // max_position_embeddings
    auto q = wstest::openOrFail(wstest::fixture("hf/qwen3_moe"));
    QCOMPARE(kvOf(q->model, o).bytesPerToken, uint64_t(2 * (64 + 64) * 2 * 3));
  }
};

QTEST_GUILESS_MAIN(TstKvCache)
#include "tst_kv_cache.moc"
