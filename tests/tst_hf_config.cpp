// config.json readings: key aliases, nested text_config, dense/MoE layer rules, MTP, quant configs.
#include <QtTest>

#include "core/formats/hf_config.h"
#include "core/formats/tokenizer_info.h"
#include "corpus_support.h"
#include "test_support.h"

using namespace ws;

class TstHfConfig : public QObject {
  Q_OBJECT
 private slots:
  // The tokenizer summary of an HF folder: BPE vocabulary plus added tokens past it, special
  // tokens resolved to their ids (written as strings or as {"content": ...}), named chat templates;
  // a Unigram vocabulary ([piece, score] pairs, the id the position); unreadable files named.
  void tokenizerSummaryOfHfFolders() {
    wstest::TempDir d;
    wstest::copyCheckpoint(wstest::fixture("hf/qwen3_moe"), d.file("m"));
    const std::string dir = d.file("m");
    wstest::writeFile(dir + "/tokenizer.json", std::string(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "<s>": 2}, "merges": ["a b"]},
      "added_tokens": [{"id": 7, "content": "<|im_end|>", "special": true}]})"));
    wstest::writeFile(dir + "/tokenizer_config.json", std::string(R"({"bos_token": "<s>", "eos_token": {"content": "<|im_end|>"}, "pad_token": "<nope>",
      "chat_template": [{"name": "default", "template": "x"}, {"name": "tool_use", "template": "y"}]})"));
    auto c = wstest::openOrFail(dir);
    TokenizerInfo t = tokenizerInfo(*c);
    QVERIFY(t.present);
    QCOMPARE(t.model, std::string("BPE"));
    QCOMPARE(t.vocabSize, uint64_t(8));  // ids 0-2 and the added 7
    QCOMPARE(t.merges, uint64_t(1));
    QCOMPARE(t.addedTokens, uint64_t(1));
    QCOMPARE(t.special.size(), size_t(3));
    QCOMPARE(t.special[0].id, int64_t(2));
    QCOMPARE(t.special[1].id, int64_t(7));
    QCOMPARE(t.special[2].id, int64_t(-1));  // named, but no such token
    QCOMPARE(t.chatTemplates, (std::vector<std::string>{"default", "tool_use"}));
    wstest::writeFile(dir + "/tokenizer.json", std::string(R"({"model": {"type": "Unigram", "vocab": [["<unk>", 0.0], ["<s>", 0.0], ["x", -1.5]]}})"));
    wstest::writeFile(dir + "/tokenizer_config.json", std::string("{not json"));
    t = tokenizerInfo(*c);
    QCOMPARE(t.model, std::string("Unigram"));
    QCOMPARE(t.vocabSize, uint64_t(3));
    QCOMPARE(t.problems.size(), size_t(1));
    QVERIFY(QString::fromStdString(t.problems[0]).contains("tokenizer_config.json"));
  }

  void deepseekRules() {
    auto m = parseHfConfigText(R"({"model_type":"deepseek_v3","num_hidden_layers":6,"n_routed_experts":64,"n_shared_experts":2,
      "first_k_dense_replace":2,"moe_layer_freq":2,"num_nextn_predict_layers":1,"moe_intermediate_size":96,"intermediate_size":512})", "c");
    QCOMPARE(m.moeLayers, (std::vector<int>{2, 4}));  // >= 2 and even
    QCOMPARE(m.denseLayers, (std::vector<int>{0, 1, 3, 5}));
    QCOMPARE(m.mtpLayers, (std::vector<int>{6}));
    QCOMPARE(m.numSharedExperts, int64_t(2));
    QCOMPARE(m.expertIntermediateSize, int64_t(96));
  }

  void qwenRules() {
    auto m = parseHfConfigText(R"({"model_type":"qwen3_moe","num_hidden_layers":6,"num_experts":8,"decoder_sparse_step":2,
      "mlp_only_layers":[3]})", "c");
    QCOMPARE(m.moeLayers, (std::vector<int>{1, 5}));  // (N+1) % 2 == 0, minus 3
  }

  void llama4Interleave() {
    auto m = parseHfConfigText(R"({"model_type":"llama4","text_config":{"num_hidden_layers":4,"num_local_experts":16,
      "interleave_moe_layer_step":2,"intermediate_size":8192,"intermediate_size_mlp":16384,"num_experts_per_tok":1,"hidden_size":5120}})", "c");
    QCOMPARE(m.architecture, std::string("llama4"));
    QCOMPARE(m.moeLayers, (std::vector<int>{1, 3}));
    QCOMPARE(m.expertIntermediateSize, int64_t(8192));  // experts use intermediate_size
    QCOMPARE(m.intermediateSize, int64_t(16384));       // dense layers use intermediate_size_mlp
    QCOMPARE(m.hiddenSize, int64_t(5120));
  }

  void explicitMoeLayers() {
    auto m = parseHfConfigText(R"({"model_type":"x","num_hidden_layers":4,"num_experts":4,"moe_layers":[0,2]})", "c");
    QCOMPARE(m.moeLayers, (std::vector<int>{0, 2}));
  }

  void aliasesAndQuant() {
    auto m = parseHfConfigText(R"({"model_type":"kimi_k25","text_config":{"model_type":"kimi_k2","num_hidden_layers":2,
      "num_local_experts":4,"experts_per_token":2,"quantization_config":{"quant_method":"compressed-tensors","format":"pack-quantized",
      "config_groups":{"group_0":{"weights":{"num_bits":4,"group_size":32,"symmetric":true,"strategy":"group"}}}}}})", "c");
    QCOMPARE(m.numExperts, int64_t(4));
    QCOMPARE(m.expertsPerToken, int64_t(2));
    QCOMPARE(m.quant.method, std::string("compressed-tensors"));
    QCOMPARE(m.quant.bits, int64_t(4));
    QCOMPARE(m.quant.groupSize, int64_t(32));
    QCOMPARE(m.quant.strategy, std::string("group"));
  }

  void hfQuantConfigFile() {
    wstest::TempDir d;
    wstest::writeFile(d.file("config.json"), std::string(R"({"model_type":"deepseek_v3","num_hidden_layers":1})"));
    wstest::writeFile(d.file("hf_quant_config.json"),
                      std::string(R"({"producer":{"name":"modelopt"},"quantization":{"quant_algo":"NVFP4","group_size":16}})"));
    ModelDescription m;
    QVERIFY(readHfConfig(d.path(), m));
    QCOMPARE(m.quant.method, std::string("modelopt"));
    QCOMPARE(m.quant.algo, std::string("NVFP4"));
    QCOMPARE(m.quant.groupSize, int64_t(16));
    QCOMPARE(m.quant.activations, std::string("static"));  // ModelOpt NVFP4 stores input scales
    QVERIFY(!m.quant.kvCacheQuantized);                     // no kv_cache_quant_algo
  }

  // Which activation scales a config declares: compressed-tensors per config group (null: weights
  // only; dynamic false or "local": stored; true: per token), FP8's activation_scheme, and the
  // quantized KV cache of compressed-tensors' kv_cache_scheme.
  void activationScalesDeclared() {
    auto ct = [](const std::string& groups, const std::string& kv) {
      return parseHfConfigText(R"({"model_type":"qwen3_moe","num_hidden_layers":1,"quantization_config":{"quant_method":"compressed-tensors","config_groups":)" + groups +
                                   R"(,"kv_cache_scheme":)" + kv + "}}",
                               "c").quant;
    };
    const std::string w = R"("weights":{"num_bits":8,"type":"float","strategy":"channel"})";
    auto q = ct(R"({"g":{)" + w + R"(,"input_activations":{"dynamic":false,"strategy":"tensor"}}})", "null");
    QCOMPARE(q.activations, std::string("static"));
    QVERIFY(!q.kvCacheQuantized);
    QCOMPARE(ct(R"({"g":{)" + w + R"(,"input_activations":{"dynamic":true}}})", "null").activations, std::string("dynamic"));
    QCOMPARE(ct(R"({"g":{)" + w + R"(,"input_activations":{"dynamic":"local"}}})", "null").activations, std::string("static"));
    QCOMPARE(ct(R"({"g":{)" + w + R"(,"input_activations":null}})", "null").activations, std::string());
    // Two groups that disagree: which covers a tensor is the targets' business, so it is not said.
    QCOMPARE(ct(R"({"a":{)" + w + R"(,"input_activations":{"dynamic":false}},"b":{)" + w + R"(,"input_activations":{"dynamic":true}}})", "null").activations, std::string());
    q = ct(R"({"g":{)" + w + "}}", R"({"num_bits":8,"type":"float","strategy":"tensor","dynamic":false})");
    QVERIFY(q.kvCacheQuantized);
    QCOMPARE(q.activations, std::string());
    auto fp8 = parseHfConfigText(R"({"model_type":"qwen3_moe","num_hidden_layers":1,"quantization_config":{"quant_method":"fp8","activation_scheme":"static","kv_cache_scheme":{}}})", "c").quant;
    QCOMPARE(fp8.activations, std::string("static"));
    QVERIFY(!fp8.kvCacheQuantized);  // kv_cache_scheme is compressed-tensors' key
  }

  void badJsonNamesTheFile() {
    wstest::TempDir d;
    wstest::writeFile(d.file("config.json"), std::string("{not json"));
    ModelDescription m;
    bool threw = false;
    try {
      readHfConfig(d.path(), m);
    } catch (const CoreError& e) {
      threw = true;
      QVERIFY(QString::fromStdString(e.error().describe()).contains("config.json"));
    }
    QVERIFY(threw);
  }
};

QTEST_GUILESS_MAIN(TstHfConfig)
#include "tst_hf_config.moc"
