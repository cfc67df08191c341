// The tensor tree model passes Qt's model checker on every fixture and groups tensors by layer,
// module and expert with bytes that add up.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "core/synth/synth.h"
#include "test_support.h"
#include "ui/tensor_tree_model.h"

using namespace ws;

namespace {

uint64_t bytesOf(const QAbstractItemModel& m, const QModelIndex& idx) {
  return m.data(idx, ui::TensorTreeModel::BytesRole).toULongLong();
}

}  // namespace

class TstTensorTreeModel : public QObject {
  Q_OBJECT
 private slots:
  void modelChecker_data() {
    QTest::addColumn<QString>("path");
    for (const std::string& p : wstest::fixtureCheckpoints()) QTest::newRow(p.c_str()) << QString::fromStdString(wstest::fixture(p));
    // and a KTransformers expert folder, which no fixture holds: written by synth
    static wstest::TempDir kt;
    ws::synth::Options o;
    o.like = "deepseek-v3";
    o.scheme = "kt-int8";
    o.out = kt.path();
    QVERIFY(ws::synth::write(o));
    QTest::newRow("synth kt-int8") << QString::fromStdString(kt.path());
    // and the LoRA adapters PEFT and mlx-lm wrote (tests/data/adapters)
    for (const char* a : {"peft_qwen3_moe", "mlx_qwen3_moe"}) QTest::newRow(a) << QString::fromStdString(wstest::sourceDir() + "/tests/data/adapters/") + a;
  }

  void modelChecker() {
    QFETCH(QString, path);
    ui::TensorTreeModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto ckpt = wstest::openOrFail(path.toStdString());
    model.setCheckpoint(ckpt);
    QVERIFY(model.rowCount() > 0);
    // Top-level bytes add up to the checkpoint; every tensor has exactly one leaf.
    uint64_t sum = 0;
    for (int r = 0; r < model.rowCount(); ++r) sum += bytesOf(model, model.index(r, 0));
    QCOMPARE(sum, ckpt->totalBytes());
    for (uint32_t i = 0; i < ckpt->tensors.size(); ++i) {
      QModelIndex leaf = model.indexOfTensor(i);
      QVERIFY(leaf.isValid());
      QCOMPARE(leaf.data(ui::TensorTreeModel::FullNameRole).toString().toStdString(), ckpt->tensors[i].name);
      QVERIFY(QString::fromStdString(ckpt->tensors[i].name).endsWith(leaf.data().toString()));
      QCOMPARE(leaf.data(ui::TensorTreeModel::TensorIndexRole).toUInt(), i);
      QCOMPARE(model.rowCount(leaf), 0);
    }
    model.setCheckpoint(nullptr);  // reset to empty is legal too
    QCOMPARE(model.rowCount(), 0);
  }

  void expertsAreGroupedPerExpert() {
    ui::TensorTreeModel model;
    auto ckpt = wstest::openOrFail(wstest::fixture("hf/deepseek_v3"));
    model.setCheckpoint(ckpt);
    uint32_t idx = uint32_t(ckpt->find("model.layers.2.mlp.experts.10.gate_proj.weight") - ckpt->tensors.data());
    QModelIndex leaf = model.indexOfTensor(idx);
    QModelIndex expert = leaf.parent();
    QModelIndex module = expert.parent();
    QModelIndex layer = module.parent();
    QCOMPARE(leaf.data().toString(), QString("gate_proj.weight"));
    QCOMPARE(expert.data().toString(), QString("expert 10"));
    QCOMPARE(module.data().toString(), QString("routed experts"));
    QCOMPARE(layer.data().toString(), QString("layer 2 (MoE)"));
    QCOMPARE(model.rowCount(module), 16);
    QCOMPARE(model.rowCount(expert), 3);
    QVERIFY(!layer.parent().isValid());
  }

  // A LoRA adapter's factors sit together under the module they adapt, in its layer and role.
  void loraFactorsAreGroupedByTheirModule() {
    struct Case {
      const char* adapter;
      const char* factor;
      const char* group;
      const char* role;
    };
    for (const Case& k : {Case{"peft_qwen3_moe", "base_model.model.model.layers.1.self_attn.o_proj.lora_A.weight", "LoRA of self_attn.o_proj", "attention"},
                          Case{"mlx_qwen3_moe", "model.layers.2.mlp.switch_mlp.gate_proj.lora_b", "LoRA of mlp.switch_mlp.gate_proj", "routed experts"}}) {
      ui::TensorTreeModel model;
      auto ckpt = wstest::openOrFail(wstest::sourceDir() + "/tests/data/adapters/" + k.adapter);
      model.setCheckpoint(ckpt);
      const TensorRecord* t = ckpt->find(k.factor);
      QVERIFY2(t, k.factor);
      const QModelIndex leaf = model.indexOfTensor(uint32_t(t - ckpt->tensors.data()));
      const QModelIndex group = leaf.parent();
      QCOMPARE(group.data().toString(), QString(k.group));
      QCOMPARE(model.rowCount(group), 2);  // lora_A and lora_B
      QStringList factors;
      for (int r = 0; r < 2; ++r) factors << model.index(r, 0, group).data().toString();
      QVERIFY2(factors.join(" ").contains("lora_A") || factors.join(" ").contains("lora_a"), qPrintable(factors.join(", ")));
      QCOMPARE(group.parent().data().toString(), QString(k.role));
    }
  }
};

QTEST_MAIN(TstTensorTreeModel)
#include "tst_tensor_tree_model.moc"
