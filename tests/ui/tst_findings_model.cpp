// The findings table passes Qt's model checker on the validation of every fixture (and of a
// damaged checkpoint, whose findings name files and offsets), and shows each finding as the
// validator reported it.
#include <QAbstractItemModelTester>
#include <QtTest>

#include <unistd.h>

#include "core/validate/validator.h"
#include "test_support.h"
#include "ui/findings_model.h"

using namespace ws;

class TstFindingsModel : public QObject {
  Q_OBJECT
 private slots:
  void modelChecker_data() {
    QTest::addColumn<QString>("path");
    for (const std::string& p : wstest::fixtureCheckpoints()) QTest::newRow(p.c_str()) << QString::fromStdString(wstest::fixture(p));
  }

  void modelChecker() {
    QFETCH(QString, path);
    ui::FindingsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto rep = val::validatePath(path.toStdString(), {});
    QVERIFY2(rep, rep ? "" : rep.error().describe().c_str());
    auto shared = std::make_shared<val::ValidationReport>(std::move(rep.value()));
    model.setReport(shared);
    QCOMPARE(model.rowCount(), int(shared->findings.size()));
    for (int r = 0; r < model.rowCount(); ++r) {
      const val::Finding& f = shared->findings[size_t(r)];
      QCOMPARE(model.index(r, ui::FindingsModel::Code).data().toString().toStdString(), f.code);
      QCOMPARE(model.index(r, ui::FindingsModel::Tensor).data().toString().toStdString(), f.tensor);
      QCOMPARE(model.index(r, 0).data(ui::FindingsModel::SeverityRole).toInt(), int(f.severity));
    }
    model.setReport(nullptr);
    QCOMPARE(model.rowCount(), 0);
  }

  // A shard cut short: the findings carry the file and offset, and the model shows them.
  void damagedCheckpoint() {
    wstest::TempDir d;
    wstest::SafetensorsBuilder b;
    b.add("model.layers.0.mlp.gate_proj.weight", "BF16", {64, 64});
    b.write(d.file("model.safetensors"));
    const auto size = wstest::fileSize(d.file("model.safetensors"));
    QVERIFY(::truncate(d.file("model.safetensors").c_str(), off_t(size - 100)) == 0);
    ui::FindingsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto rep = val::validatePath(d.path(), {});
    QVERIFY(rep);
    model.setReport(std::make_shared<val::ValidationReport>(std::move(rep.value())));
    QVERIFY(model.rowCount() > 0);
    bool named = false;
    for (int r = 0; r < model.rowCount(); ++r)
      named |= model.index(r, ui::FindingsModel::Where).data().toString().startsWith("model.safetensors");
    QVERIFY(named);
    QCOMPARE(model.index(0, ui::FindingsModel::Severity).data().toString(), QString("error"));
  }
};

QTEST_MAIN(TstFindingsModel)
#include "tst_findings_model.moc"
