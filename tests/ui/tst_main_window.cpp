// Drives the main window: open a fixture off the GUI thread, filter the tree, select a tensor,
// and get a clear failure for a path that is not a checkpoint. Checks state, not pixels.
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTreeView>
#include <QtTest>

#include <cmath>

#include "test_support.h"
#include "ui/expert_map_view.h"
#include "ui/heatmap_plot.h"
#include "ui/main_window.h"
#include "ui/tensor_tree_model.h"

using namespace ws;

namespace {

int countLeaves(const QAbstractItemModel* m, const QModelIndex& parent = {}) {
  int n = 0;
  for (int r = 0; r < m->rowCount(parent); ++r) {
    QModelIndex i = m->index(r, 0, parent);
    n += m->rowCount(i) == 0 ? 1 : countLeaves(m, i);
  }
  return n;
}

}  // namespace

class TstMainWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    qputenv("WEIGHTSCOPE_NO_DIALOGS", "1");
    QCoreApplication::setOrganizationName("WeightscopeTest");
  }

  void opensAndFilters() {
    ui::MainWindow w;
    w.show();
    QSignalSpy opened(&w, &ui::MainWindow::checkpointOpened);
    w.openPath(QString::fromStdString(wstest::fixture("hf/qwen3_moe")));
    QVERIFY(opened.wait(10000));
    QVERIFY(w.checkpoint());
    QCOMPARE(w.checkpoint()->tensors.size(), size_t(80));
    QCOMPARE(countLeaves(w.treeView()->model()), 80);

    QTest::keyClicks(w.filterEdit(), "experts.7.down");
    QCOMPARE(countLeaves(w.treeView()->model()), 2);  // layers 1 and 2

    w.filterEdit()->clear();
    QCOMPARE(countLeaves(w.treeView()->model()), 80);
    QVERIFY(w.windowTitle().contains("qwen3_moe"));
  }

  // The per-expert map: layers x experts of bytes; a click on a cell selects its tensor in the tree.
  void expertMapClickSelectsInTree() {
    ui::MainWindow w;
    w.show();
    QSignalSpy opened(&w, &ui::MainWindow::checkpointOpened);
    w.openPath(QString::fromStdString(wstest::fixture("hf/qwen3_moe")));
    QVERIFY(opened.wait(10000));
    w.tabs()->setCurrentIndex(1);
    auto* plot = w.expertMap()->plot();
    QCOMPARE(plot->rows(), 3);  // layers 0-2
    QCOMPARE(plot->cols(), 9);  // the dense MLP / shared column, then experts 0-7
    QVERIFY(std::isnan(plot->valueAt(0, 3)));          // layer 0 is dense: no routed experts
    QCOMPARE(plot->valueAt(1, 5), double(3 * 64 * 1024));  // gate, up, down of expert 4: 64 KiB each
    QVERIFY(plot->valueAt(0, 0) > 0);                   // the dense MLP of layer 0
    QTest::mouseClick(plot, Qt::LeftButton, Qt::NoModifier, plot->cellCentre(2, 8));  // layer 2, expert 7
    QCOMPARE(w.tabs()->currentIndex(), 0);
    const QModelIndex cur = w.treeView()->currentIndex();
    QVERIFY(cur.isValid());
    const uint32_t t = cur.data(ui::TensorTreeModel::TensorIndexRole).toUInt();
    QCOMPARE(w.checkpoint()->tensors[t].layer, 2);
    QCOMPARE(w.checkpoint()->tensors[t].expert, 7);
  }

  void reportsBadInput() {
    ui::MainWindow w;
    QSignalSpy failed(&w, &ui::MainWindow::openFailed);
    wstest::TempDir d;
    wstest::writeFile(d.file("broken.safetensors"), std::vector<uint8_t>{1, 2, 3});
    w.openPath(QString::fromStdString(d.file("broken.safetensors")));
    QVERIFY(failed.wait(10000));
    QString msg = failed.first().first().toString();
    QVERIFY2(msg.contains("broken.safetensors") && msg.contains("HEADER_TOO_SMALL"), qPrintable(msg));
    QVERIFY(!w.checkpoint());
  }
};

QTEST_MAIN(TstMainWindow)
#include "tst_main_window.moc"
