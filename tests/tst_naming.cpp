// Name classification across naming families, and natural ordering.
#include <QtTest>

#include <random>

#include "core/model/naming.h"

using namespace ws;

Q_DECLARE_METATYPE(Role)
Q_DECLARE_METATYPE(Projection)
Q_DECLARE_METATYPE(Component)

class TstNaming : public QObject {
  Q_OBJECT
 private slots:
  // naturalLess skips equal prefixes at memcmp speed; it must order exactly like the plain
  // definition (digit runs by value, then fewer leading zeros first), on any strings.
  void naturalOrderEqualsItsDefinition() {
    auto reference = [](std::string_view a, std::string_view b) {
      size_t i = 0, j = 0;
      auto digit = [](char c) { return c >= '0' && c <= '9'; };
      while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
          size_t i2 = i, j2 = j;
          while (i2 < a.size() && a[i2] == '0') ++i2;
          while (j2 < b.size() && b[j2] == '0') ++j2;
          size_t ie = i2, je = j2;
          while (ie < a.size() && digit(a[ie])) ++ie;
          while (je < b.size() && digit(b[je])) ++je;
          if (ie - i2 != je - j2) return ie - i2 < je - j2;
          if (int c = a.substr(i2, ie - i2).compare(b.substr(j2, je - j2))) return c < 0;
          if (ie - i != je - j) return ie - i < je - j;
          i = ie;
          j = je;
        } else {
          if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
          ++i;
          ++j;
        }
      }
      return a.size() - i < b.size() - j;
    };
    std::mt19937 rng(7);
    const char alphabet[] = "a.0019x";
    auto word = [&] {
      std::string w(rng() % 9, ' ');
      for (auto& ch : w) ch = alphabet[rng() % 7];
      return w;
    };
    for (int n = 0; n < 200000; ++n) {
      std::string a = word(), b = rng() % 3 ? a.substr(0, rng() % (a.size() + 1)) + word() : word();
      if (naturalLess(a, b) != reference(a, b)) QFAIL(qPrintable(QString("'%1' vs '%2'").arg(a.c_str(), b.c_str())));
      // and the precomputed keys order the same way as plain bytes
      const std::string ka = naturalKey(a), kb = naturalKey(b);
      if ((std::string_view(ka) < std::string_view(kb)) != reference(a, b))
        QFAIL(qPrintable(QString("keys of '%1' vs '%2'").arg(a.c_str(), b.c_str())));
    }
  }

  void naturalOrder() {
    QVERIFY(naturalLess("experts.2.w1", "experts.10.w1"));
    QVERIFY(!naturalLess("experts.10.w1", "experts.2.w1"));
    QVERIFY(naturalLess("layers.9", "layers.10"));
    QVERIFY(naturalLess("a", "b"));
    QVERIFY(naturalLess("x.1", "x.1.weight"));
    QVERIFY(!naturalLess("x", "x"));
  }

  void classify_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<Role>("role");
    QTest::addColumn<int>("layer");
    QTest::addColumn<int>("expert");
    QTest::addColumn<Projection>("projection");
    QTest::addColumn<Component>("component");
    QTest::addColumn<QString>("logical");
    auto row = [](const char* n, Role r, int l, int e, Projection p, Component c, const char* logical) {
      QTest::newRow(n) << QString(n) << r << l << e << p << c << QString(logical);
    };
    using R = Role; using P = Projection; using C = Component;
    row("model.layers.3.mlp.experts.10.gate_proj.weight", R::RoutedExpert, 3, 10, P::Gate, C::Weight, "model.layers.3.mlp.experts.10.gate_proj");
    row("model.layers.3.mlp.experts.10.down_proj.weight_scale_inv", R::RoutedExpert, 3, 10, P::Down, C::Scale, "model.layers.3.mlp.experts.10.down_proj");
    row("model.layers.1.mlp.shared_experts.up_proj.weight", R::SharedExpert, 1, -1, P::Up, C::Weight, "model.layers.1.mlp.shared_experts.up_proj");
    row("model.layers.1.mlp.gate.weight", R::Router, 1, -1, P::None, C::Weight, "model.layers.1.mlp.gate");
    row("model.layers.1.mlp.gate.e_score_correction_bias", R::Router, 1, -1, P::None, C::Bias, "model.layers.1.mlp.gate.e_score_correction");
    row("model.layers.0.mlp.gate_proj.weight", R::DenseMlp, 0, -1, P::Gate, C::Weight, "model.layers.0.mlp.gate_proj");
    row("model.layers.0.self_attn.q_proj.weight", R::Attention, 0, -1, P::None, C::Weight, "model.layers.0.self_attn.q_proj");
    row("model.layers.0.self_attn.q_norm.weight", R::Norm, 0, -1, P::None, C::Weight, "model.layers.0.self_attn.q_norm");
    row("model.layers.0.self_attn.kv_a_layernorm.weight", R::Norm, 0, -1, P::None, C::Weight, "model.layers.0.self_attn.kv_a_layernorm");
    row("model.layers.0.input_layernorm.weight", R::Norm, 0, -1, P::None, C::Weight, "model.layers.0.input_layernorm");
    row("model.layers.1.block_sparse_moe.experts.5.w1.weight", R::RoutedExpert, 1, 5, P::Gate, C::Weight, "model.layers.1.block_sparse_moe.experts.5.w1");
    row("model.layers.1.block_sparse_moe.experts.5.w3.weight", R::RoutedExpert, 1, 5, P::Up, C::Weight, "model.layers.1.block_sparse_moe.experts.5.w3");
    row("model.layers.1.block_sparse_moe.gate.weight", R::Router, 1, -1, P::None, C::Weight, "model.layers.1.block_sparse_moe.gate");
    row("model.language_model.layers.1.mlp.experts.gate_up_proj", R::RoutedExpert, 1, -1, P::GateUp, C::Weight, "model.language_model.layers.1.mlp.experts.gate_up_proj");
    row("model.layers.2.mlp.experts.gate_up_proj_blocks", R::RoutedExpert, 2, -1, P::GateUp, C::Weight, "model.layers.2.mlp.experts.gate_up_proj");
    row("model.layers.2.mlp.experts.gate_up_proj_scales", R::RoutedExpert, 2, -1, P::GateUp, C::Scale, "model.layers.2.mlp.experts.gate_up_proj");
    row("model.layers.2.mlp.experts.down_proj_bias", R::RoutedExpert, 2, -1, P::Down, C::Bias, "model.layers.2.mlp.experts.down_proj");
    row("model.layers.2.mlp.experts.gate_up_proj_scale_inv", R::RoutedExpert, 2, -1, P::GateUp, C::Scale, "model.layers.2.mlp.experts.gate_up_proj");
    row("model.layers.2.mlp.router.weight", R::Router, 2, -1, P::None, C::Weight, "model.layers.2.mlp.router");
    // Under a model prefix the seeds detect (Qwen-Omni's thinker.), the top-level tensors keep their roles
    row("thinker.model.embed_tokens.weight", R::Embedding, -1, -1, P::None, C::Weight, "thinker.model.embed_tokens");
    row("thinker.lm_head.weight", R::LmHead, -1, -1, P::None, C::Weight, "thinker.lm_head");
    row("thinker.model.norm.weight", R::Norm, -1, -1, P::None, C::Weight, "thinker.model.norm");
    // A PEFT-wrapped model's state dict: the wrapped module's own weight and its factors under adapter "default"
    row("base_model.model.model.layers.1.mlp.experts.0.down_proj.base_layer.weight", R::RoutedExpert, 1, 0, P::Down, C::Weight, "base_model.model.model.layers.1.mlp.experts.0.down_proj");
    row("base_model.model.model.layers.1.mlp.experts.0.down_proj.lora_B.default.weight", R::RoutedExpert, 1, 0, P::Down, C::LoraB, "base_model.model.model.layers.1.mlp.experts.0.down_proj");
    row("base_model.model.model.embed_tokens.lora_embedding_A.default", R::Embedding, -1, -1, P::None, C::LoraA, "base_model.model.model.embed_tokens");
    row("base_model.model.lm_head.weight", R::LmHead, -1, -1, P::None, C::Weight, "base_model.model.lm_head");
    // KV-cache scales: on the attention module (compressed-tensors) or on k_proj / v_proj (vLLM's older exports)
    row("model.layers.0.self_attn.k_scale", R::Attention, 0, -1, P::None, C::KvScale, "model.layers.0.self_attn");
    row("model.layers.0.self_attn.v_proj.v_scale", R::Attention, 0, -1, P::None, C::KvScale, "model.layers.0.self_attn.v_proj");
    row("model.layers.0.self_attn.kv_scale", R::Attention, 0, -1, P::None, C::KvScale, "model.layers.0.self_attn");
    row("model.layers.4.mlp.experts.0.up_proj.weight_packed", R::RoutedExpert, 4, 0, P::Up, C::Weight, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.weight_shape", R::RoutedExpert, 4, 0, P::Up, C::Shape, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.weight_zero_point", R::RoutedExpert, 4, 0, P::Up, C::ZeroPoint, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.weight_g_idx", R::RoutedExpert, 4, 0, P::Up, C::GIdx, "model.layers.4.mlp.experts.0.up_proj");
    // GPTQ / AWQ (qweight, qzeros, scales, g_idx) and bitsandbytes (absmax, the quant state, SCB).
    row("model.layers.4.mlp.experts.0.up_proj.qweight", R::RoutedExpert, 4, 0, P::Up, C::Weight, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.qzeros", R::RoutedExpert, 4, 0, P::Up, C::ZeroPoint, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.g_idx", R::RoutedExpert, 4, 0, P::Up, C::GIdx, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.weight.absmax", R::RoutedExpert, 4, 0, P::Up, C::Scale, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.weight.nested_absmax", R::RoutedExpert, 4, 0, P::Up, C::QuantState, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.weight.quant_state.bitsandbytes__nf4", R::RoutedExpert, 4, 0, P::Up, C::QuantState, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.SCB", R::RoutedExpert, 4, 0, P::Up, C::Scale, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.weight_scale_2", R::RoutedExpert, 4, 0, P::Up, C::GlobalScale, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.4.mlp.experts.0.up_proj.input_scale", R::RoutedExpert, 4, 0, P::Up, C::InputScale, "model.layers.4.mlp.experts.0.up_proj");
    row("model.layers.5.mlp.switch_mlp.down_proj.biases", R::RoutedExpert, 5, -1, P::Down, C::ZeroPoint, "model.layers.5.mlp.switch_mlp.down_proj");
    row("blk.0.ffn_gate_exps.weight", R::RoutedExpert, 0, -1, P::Gate, C::Weight, "blk.0.ffn_gate_exps");
    row("blk.0.ffn_down_shexp.weight", R::SharedExpert, 0, -1, P::Down, C::Weight, "blk.0.ffn_down_shexp");
    row("blk.0.ffn_gate_inp.weight", R::Router, 0, -1, P::None, C::Weight, "blk.0.ffn_gate_inp");
    row("blk.0.exp_probs_b.bias", R::Router, 0, -1, P::None, C::Bias, "blk.0.exp_probs_b");
    row("blk.0.attn_q.weight", R::Attention, 0, -1, P::None, C::Weight, "blk.0.attn_q");
    row("blk.0.attn_k_norm.weight", R::Norm, 0, -1, P::None, C::Weight, "blk.0.attn_k_norm");
    row("blk.0.ffn_up.weight", R::DenseMlp, 0, -1, P::Up, C::Weight, "blk.0.ffn_up");
    row("token_embd.weight", R::Embedding, -1, -1, P::None, C::Weight, "token_embd");
    row("output.weight", R::LmHead, -1, -1, P::None, C::Weight, "output");
    row("output_norm.weight", R::Norm, -1, -1, P::None, C::Weight, "output_norm");
    row("blk.7.ffn_up_exps.12.numa.1.weight", R::RoutedExpert, 7, 12, P::Up, C::Weight, "blk.7.ffn_up_exps.12");
    row("blk.7.ffn_down_exps.12.numa.0.scale", R::RoutedExpert, 7, 12, P::Down, C::Scale, "blk.7.ffn_down_exps.12");
    row("model.embed_tokens.weight", R::Embedding, -1, -1, P::None, C::Weight, "model.embed_tokens");
    row("model.language_model.embed_tokens.weight", R::Embedding, -1, -1, P::None, C::Weight, "model.language_model.embed_tokens");
    row("lm_head.weight", R::LmHead, -1, -1, P::None, C::Weight, "lm_head");
    row("model.norm.weight", R::Norm, -1, -1, P::None, C::Weight, "model.norm");
    row("model.visual.blocks.0.attn.qkv.weight", R::Vision, -1, -1, P::None, C::Weight, "model.visual.blocks.0.attn.qkv");
    row("model.layers.61.eh_proj.weight", R::Mtp, 61, -1, P::None, C::Weight, "model.layers.61.eh_proj");
    row("model.layers.61.mlp.experts.3.up_proj.weight", R::Mtp, 61, 3, P::Up, C::Weight, "model.layers.61.mlp.experts.3.up_proj");
    // Llama 4 as first published: language_model.model. prefix, feed_forward modules
    row("language_model.model.layers.1.feed_forward.experts.gate_up_proj", R::RoutedExpert, 1, -1, P::GateUp, C::Weight, "language_model.model.layers.1.feed_forward.experts.gate_up_proj");
    row("language_model.model.layers.1.feed_forward.router.weight", R::Router, 1, -1, P::None, C::Weight, "language_model.model.layers.1.feed_forward.router");
    row("language_model.model.layers.1.feed_forward.shared_expert.down_proj.weight", R::SharedExpert, 1, -1, P::Down, C::Weight, "language_model.model.layers.1.feed_forward.shared_expert.down_proj");
    row("language_model.model.layers.0.feed_forward.up_proj.weight", R::DenseMlp, 0, -1, P::Up, C::Weight, "language_model.model.layers.0.feed_forward.up_proj");
    row("language_model.model.embed_tokens.weight", R::Embedding, -1, -1, P::None, C::Weight, "language_model.model.embed_tokens");
    // Qwen2-MoE style shared expert gate; gpt-oss original checkpoint names
    row("model.layers.3.mlp.shared_expert_gate.weight", R::SharedExpert, 3, -1, P::None, C::Weight, "model.layers.3.mlp.shared_expert_gate");
    row("block.4.mlp.mlp1_weight.blocks", R::RoutedExpert, 4, -1, P::GateUp, C::Weight, "block.4.mlp.mlp1");
    row("block.4.mlp.mlp1_weight.scales", R::RoutedExpert, 4, -1, P::GateUp, C::Scale, "block.4.mlp.mlp1");
    row("block.4.mlp.mlp1_bias", R::RoutedExpert, 4, -1, P::GateUp, C::Bias, "block.4.mlp.mlp1");
    row("block.4.mlp.mlp2_weight.blocks", R::RoutedExpert, 4, -1, P::Down, C::Weight, "block.4.mlp.mlp2");
    row("block.4.mlp.gate.weight", R::Router, 4, -1, P::None, C::Weight, "block.4.mlp.gate");
    row("block.4.attn.norm.scale", R::Norm, 4, -1, P::None, C::Weight, "block.4.attn.norm");
    row("unembedding.weight", R::LmHead, -1, -1, P::None, C::Weight, "unembedding");
    row("mtp.layers.0.mlp.experts.1.up_proj.weight", R::Mtp, 0, 1, P::Up, C::Weight, "mtp.layers.0.mlp.experts.1.up_proj");
  }

  // The model prefix of a name, as the seed runtime detects it before classifying.
  void prefix_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("prefix");
    auto row = [](const char* n, const char* p) { QTest::newRow(n) << QString(n) << QString(p); };
    row("model.layers.3.mlp.experts.7.down_proj.weight", "model.");
    row("model.embed_tokens.weight", "model.");
    row("model.norm.weight", "model.");
    row("lm_head.weight", "");
    row("model.language_model.layers.0.self_attn.q_proj.weight", "model.language_model.");
    row("model.language_model.embed_tokens.weight", "model.language_model.");
    row("model.visual.blocks.0.attn.qkv.weight", "model.visual.");  // not "model.visual.blocks."
    row("model.visual.merger.norm.weight", "model.visual.");
    row("language_model.model.layers.1.mlp.gate.weight", "language_model.model.");
    row("thinker.model.layers.2.mlp.experts.0.up_proj.weight", "thinker.model.");
    row("thinker.model.norm.weight", "thinker.model.");
    row("thinker.audio_tower.layers.0.fc1.weight", "thinker.audio_tower.");
    row("mtp.layers.0.mlp.experts.1.up_proj.weight", "mtp.");
    row("blk.0.ffn_down_exps.weight", "");
    row("token_embd.weight", "");
    row("v.blk.0.attn_q.weight", "v.");  // a GGUF mmproj tower
    row("transformer.h.4.attn.c_attn.weight", "transformer.");
  }
  void prefix() {
    QFETCH(QString, name);
    QFETCH(QString, prefix);
    QCOMPARE(QString::fromStdString(namePrefix(name.toStdString())), prefix);
  }

  void classify() {
    QFETCH(QString, name);
    QFETCH(Role, role);
    QFETCH(int, layer);
    QFETCH(int, expert);
    QFETCH(Projection, projection);
    QFETCH(Component, component);
    QFETCH(QString, logical);
    ModelDescription m;
    m.numLayers = 61;  // so that layer 61 is an MTP layer, as in DeepSeek-V3
    NameParts p = parseTensorName(name.toStdString(), m);
    QCOMPARE(std::string(roleName(p.role)), std::string(roleName(role)));
    QCOMPARE(p.layer, layer);
    QCOMPARE(p.expert, expert);
    QCOMPARE(std::string(projectionName(p.projection)), std::string(projectionName(projection)));
    QCOMPARE(std::string(componentName(p.component)), std::string(componentName(component)));
    QCOMPARE(QString::fromStdString(p.logical), logical);
  }
};

QTEST_GUILESS_MAIN(TstNaming)
#include "tst_naming.moc"
