// Drives the comparison window: run weightscope diff of qwen3_moe (A) against its FP8 version (B)
// off the GUI thread, read the error map, click a cell and see its tensors listed and previewed
// (A - B equal to A minus B), and cancel a run. Checks state, not pixels.
#include <QSignalSpy>
#include <QTabWidget>
#include <QTreeWidget>
#include <QtTest>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/diff/metadata_diff.h"
#include "core/formats/open_checkpoint.h"
#include "core/report/diff_report.h"
#include "test_support.h"
#include "ui/diff_window.h"
#include "ui/heatmap_plot.h"

using namespace ws;

class TstDiffWindow : public QObject {
  Q_OBJECT
 private slots:
  void mapsClicksAndPreviews() {
    ui::DiffWindow w;
    w.show();
    QSignalSpy finished(&w, &ui::DiffWindow::finished);
    w.start(QString::fromStdString(wstest::fixture("hf/qwen3_moe")), QString::fromStdString(wstest::fixture("hf/qwen3_moe_fp8")));
    QVERIFY(finished.wait(wstest::kPatienceMs));
    QVERIFY(w.report());
    QCOMPARE(w.report()->pairs.size(), size_t(80));
    auto* map = w.errorMap();
    QCOMPARE(map->rows(), 4);  // outside layers, then layers 0-2
    QCOMPARE(map->cols(), 9);  // the layer's other tensors, then experts 0-7
    QVERIFY(map->valueAt(0, 0) < 1e-6);                    // embeddings, final norm, lm_head: identical
    QVERIFY(map->valueAt(2, 5) > 0.01);                    // layer 1, expert 4: FP8 moved it
    QVERIFY(std::isnan(map->valueAt(1, 3)));               // layer 0 is dense: no experts

    // The window's worst cell is diff --json's, and so is every cell's value and tensor count.
    const nlohmann::json doc = diffJson(*w.report());
    const nlohmann::json& worst = doc["summary"]["worst_cell"];
    QCOMPARE(doc["summary"]["rank_metric"].get<std::string>(), std::string("rel_frobenius"));
    QCOMPARE(w.worstCell(), QPoint(worst["expert"].get<int>() + 1, worst["layer"].get<int>() + 1));
    double largest = 0;
    for (const auto& cell : doc["cells"]) {
      const double v = cell["rel_frobenius"].get<double>();
      largest = std::max(largest, v);
      QCOMPARE(map->valueAt(cell["layer"].get<int>() + 1, cell["expert"].get<int>() + 1), std::max(1e-9, v));
    }
    QCOMPARE(worst["rel_frobenius"].get<double>(), largest);
    w.selectCell(w.worstCell().y(), w.worstCell().x());
    QCOMPARE(w.cellList()->topLevelItem(0)->text(0), QString::fromStdString(worst["worst"].get<std::string>()));

    QSignalSpy preview(&w, &ui::DiffWindow::previewReady);
    QTest::mouseClick(map, Qt::LeftButton, Qt::NoModifier, map->cellCentre(2, 5));
    QCOMPARE(w.cellList()->topLevelItemCount(), 3);  // gate, up and down of expert 4
    for (int i = 0; i < 3; ++i) QVERIFY(w.cellList()->topLevelItem(i)->text(0).startsWith("blk.1.ffn_"));
    QVERIFY(preview.wait(wstest::kPatienceMs));
    QCOMPARE(w.previewKey(), w.cellList()->currentItem()->text(0));
    auto *a = w.preview(0), *b = w.preview(1), *d = w.preview(2);
    QVERIFY(a->rows() > 0 && a->rows() == b->rows() && a->cols() == d->cols());
    for (int r = 0; r < a->rows(); r += 37)
      for (int c = 0; c < a->cols(); c += 29) QCOMPARE(d->valueAt(r, c), a->valueAt(r, c) - b->valueAt(r, c));
  }

  // The Metadata tab lists diff's own metadata differences, row for row: the FP8 copy's config.json
  // gains its quantization_config (and transformers' EP plan); a cell click goes back to the tensors.
  void metadataTab() {
    ui::DiffWindow w;
    QSignalSpy finished(&w, &ui::DiffWindow::finished);
    const std::string a = wstest::fixture("hf/qwen3_moe"), b = wstest::fixture("hf/qwen3_moe_fp8");
    w.start(QString::fromStdString(a), QString::fromStdString(b));
    QVERIFY(finished.wait(wstest::kPatienceMs));
    const auto want = diff::diffMetadata(*openCheckpoint(a).value(), *openCheckpoint(b).value());
    QVERIFY(want.size() > 5);
    QTreeWidget* list = w.metadataList();
    QCOMPARE(list->topLevelItemCount(), int(want.size()));
    bool quantMethod = false;
    for (int i = 0; i < list->topLevelItemCount(); ++i) {
      const QTreeWidgetItem* row = list->topLevelItem(i);
      QCOMPARE(row->text(0), QString::fromStdString(want[size_t(i)].source));
      QCOMPARE(row->text(1), QString::fromStdString(want[size_t(i)].key));
      QCOMPARE(row->text(2), want[size_t(i)].a ? QString::fromStdString(*want[size_t(i)].a) : QString("(absent)"));
      QCOMPARE(row->text(3), want[size_t(i)].b ? QString::fromStdString(*want[size_t(i)].b) : QString("(absent)"));
      quantMethod |= row->text(0) == "config.json" && row->text(1) == "/quantization_config/quant_method" && row->text(2) == "(absent)" && row->text(3) == "\"fp8\"";
    }
    QVERIFY(quantMethod);
    QCOMPARE(w.lists()->tabText(1), QString("&Metadata (%1 differ)").arg(want.size()));
    w.lists()->setCurrentWidget(list);
    w.selectCell(w.worstCell().y(), w.worstCell().x());
    QCOMPARE(w.lists()->currentWidget(), static_cast<QWidget*>(w.cellList()));
  }

  void cancels() {
    ui::DiffWindow w;
    QSignalSpy finished(&w, &ui::DiffWindow::finished);
    w.start(QString::fromStdString(wstest::fixture("hf/qwen3_moe")), QString::fromStdString(wstest::fixture("hf/qwen3_moe_fp8")));
    w.cancel();
    QVERIFY(finished.wait(wstest::kPatienceMs));
    QVERIFY(!w.report());
  }

  void reportsAMissingSide() {
    ui::DiffWindow w;
    QSignalSpy finished(&w, &ui::DiffWindow::finished);
    w.start(QString::fromStdString(wstest::fixture("hf/qwen3_moe")), "/nonexistent/checkpoint");
    QVERIFY(finished.wait(wstest::kPatienceMs));
    QVERIFY(!w.report());
  }
};

QTEST_MAIN(TstDiffWindow)
#include "tst_diff_window.moc"
