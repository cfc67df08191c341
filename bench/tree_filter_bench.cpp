// How fast the main window's tensor tree answers the filter box on a large checkpoint: opens it
// in a real MainWindow (offscreen), then types a filter one key at a time with QTest and times
// each keystroke until the view has laid itself out again; then expands the whole tree and times
// page-down frames; also the time from openPath to a usable tree. Prints one JSON object;
// bench/run_open_bench.py runs it.
//
// usage: tree_filter_bench PATH [TEXT [substring|glob|regex]]   (QT_QPA_PLATFORM=offscreen)
#include <QApplication>
#include <QElapsedTimer>
#include <QComboBox>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTest>
#include <QTreeView>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "ui/main_window.h"
#include "ui/tensor_tree_model.h"

int main(int argc, char** argv) {
  qputenv("WEIGHTSCOPE_NO_DIALOGS", "1");
  QApplication app(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: tree_filter_bench PATH [TEXT [substring|glob|regex]]\n");
    return 2;
  }
  const QString text = argc > 2 ? QString::fromLocal8Bit(argv[2]) : QStringLiteral("experts.17.down");
  const QString mode = argc > 3 ? QString::fromLocal8Bit(argv[3]) : QStringLiteral("substring");
  ws::ui::MainWindow w;
  w.resize(1400, 900);
  w.filterModeBox()->setCurrentText(mode);
  w.show();
  QSignalSpy opened(&w, &ws::ui::MainWindow::checkpointOpened);
  QElapsedTimer open;
  open.start();
  w.openPath(QString::fromLocal8Bit(argv[1]));
  if (!opened.wait(120000)) {
    std::fprintf(stderr, "tree_filter_bench: could not open %s\n", argv[1]);
    return 2;
  }
  QCoreApplication::processEvents();
  const double openMs = double(open.nsecsElapsed()) / 1e6;

  std::vector<double> perKey;
  for (const QChar ch : text) {
    QElapsedTimer t;
    t.start();
    QTest::keyClick(w.filterEdit(), ch.toLatin1());
    QCoreApplication::processEvents();  // the proxy refilters synchronously; this lays the view out
    w.treeView()->viewport()->repaint();
    perKey.push_back(double(t.nsecsElapsed()) / 1e6);
  }
  QElapsedTimer clear;
  clear.start();
  w.filterEdit()->clear();
  QCoreApplication::processEvents();
  w.treeView()->viewport()->repaint();
  const double clearMs = double(clear.nsecsElapsed()) / 1e6;

  // Scrolling: everything expanded, then 200 page-downs through the whole tree, one frame each.
  w.treeView()->expandAll();
  QCoreApplication::processEvents();
  std::vector<double> frames;
  w.treeView()->setFocus();
  for (int i = 0; i < 200; ++i) {
    QElapsedTimer t;
    t.start();
    QTest::keyClick(w.treeView(), Qt::Key_PageDown);
    QCoreApplication::processEvents();
    w.treeView()->viewport()->repaint();
    frames.push_back(double(t.nsecsElapsed()) / 1e6);
  }
  std::sort(frames.begin(), frames.end());
  std::vector<double> sorted = perKey;
  std::sort(sorted.begin(), sorted.end());
  std::printf("{\"mode\": \"%s\", \"tensors\": %llu, \"open_to_tree_ms\": %.1f, \"keystrokes\": %zu, \"keystroke_max_ms\": %.1f, \"keystroke_median_ms\": %.1f, \"clear_ms\": %.1f, "
              "\"scroll_frames\": %zu, \"scroll_frame_max_ms\": %.1f, \"scroll_frame_median_ms\": %.1f}\n",
              qPrintable(w.filterModeBox()->currentText()), (unsigned long long)(w.checkpoint() ? w.checkpoint()->tensors.size() : 0), openMs, perKey.size(), sorted.back(),
              sorted[sorted.size() / 2], clearMs, frames.size(), frames.back(), frames[frames.size() / 2]);
  return 0;
}
