#include "ui/gui_main.h"

#include <QApplication>
#include <QMetaObject>
#include <QSettings>
#include <QTemporaryDir>
#include <QTimer>
#include <QTabWidget>
#include <QTreeView>
#include <cstdio>
#include <cstdlib>

#include "ui/diff_window.h"
#include "ui/findings_view.h"
#include "ui/load_view.h"
#include "ui/main_window.h"
#include "ui/preview_view.h"
#include "ui/rank_map_view.h"
#include "ui/scale_histogram_view.h"

namespace ws::ui {

namespace {

// Saves the window to `file` once pending paints are done, sets rc (0, or 2 when it cannot be
// written) and ends the event loop.
void saveSoon(QApplication& app, QWidget& w, const QString& file, int& rc) {
  QTimer::singleShot(300, &w, [&app, &w, file, &rc] {
    rc = w.grab().save(file) ? 0 : 2;
    if (rc) std::fprintf(stderr, "weightscope: cannot write %s\n", qPrintable(file));
    app.quit();
  });
}

// The comparison window for A and B; with `screenshot`, the worst cell selected, then a PNG.
int diffMain(QApplication& app, const QStringList& paths, const QString& screenshot) {
  if (paths.size() != 2) {
    std::fprintf(stderr, "weightscope: --diff needs two checkpoints, A (the reference) and B\n");
    return 2;
  }
  DiffWindow w;
  w.show();
  w.start(paths[0], paths[1]);
  if (screenshot.isEmpty()) return app.exec();
  int rc = 2;
  auto save = [&] { saveSoon(app, w, screenshot, rc); };
  QObject::connect(&w, &DiffWindow::previewReady, &w, save);
  QObject::connect(&w, &DiffWindow::finished, &w, [&] {
    if (!w.report() || w.report()->pairs.empty()) {
      std::fprintf(stderr, "weightscope: the comparison did not finish\n");
      app.quit();
      return;
    }
    // the worst cell: the pair with the largest relative error
    const auto& pairs = w.report()->pairs;
    size_t worst = 0;
    for (size_t i = 0; i < pairs.size(); ++i)
      if (pairs[i].metrics.relFrobenius > pairs[worst].metrics.relFrobenius) worst = i;
    w.selectCell(pairs[worst].pair.layer + 1, pairs[worst].pair.expert + 1);
  });
  app.exec();
  return rc;
}

// The first routed-expert weight (the tensor a preview of an MoE is most often about), else the
// first weight.
uint32_t tensorToPreview(const Checkpoint& c) {
  for (uint32_t i = 0; i < c.tensors.size(); ++i)
    if (c.tensors[i].role == Role::RoutedExpert && c.tensors[i].component == Component::Weight) return i;
  for (uint32_t i = 0; i < c.tensors.size(); ++i)
    if (c.tensors[i].component == Component::Weight) return i;
  return 0;
}

// Opens PATH, brings up the view, starts its work, and saves the window once that work is done.
int screenshotMain(QApplication& app, MainWindow& w, const QString& path, const QString& view, const QString& screenshot) {
  static const QStringList views = {"tree", "experts", "ranks", "histogram", "preview", "findings", "residency"};
  if (!views.contains(view)) {
    std::fprintf(stderr, "weightscope: unknown --view '%s' (%s, diff)\n", qPrintable(view), qPrintable(views.join(", ")));
    return 2;
  }
  int rc = 2;
  auto save = [&] { saveSoon(app, w, screenshot, rc); };
  bool started = false;
  QObject::connect(&w, &MainWindow::checkpointOpened, &w, [&] {
    w.treeView()->expandToDepth(1);
    w.showTab(MainWindow::Tab(views.indexOf(view)));
    started = true;
    if (view == "tree" || view == "experts") save();
    else if (view == "preview") {
      const uint32_t t = tensorToPreview(*w.checkpoint());
      w.selectTensor(t);  // its details beside the preview
      w.preview()->showTensor(t);
      w.showTab(MainWindow::PreviewTab);
    }
    else if (view == "findings") w.findings()->run();
    else if (view == "residency") w.loadView()->start();
  });
  // Views whose work starts by itself on open (the plan, the scale statistics) report when done.
  QObject::connect(w.rankMap(), &RankMapView::planned, &w, [&] {
    if (started && view == "ranks") save();
  });
  QObject::connect(w.histograms(), &ScaleHistogramView::computed, &w, [&] {
    if (started && view == "histogram") save();
  });
  QObject::connect(w.preview(), &PreviewView::previewReady, &w, save);
  QObject::connect(w.findings(), &FindingsView::finished, &w, save);
  QObject::connect(w.loadView(), &LoadView::finished, &w, save);
  QObject::connect(&w, &MainWindow::openFailed, &w, [&](const QString& m) {
    std::fprintf(stderr, "weightscope: %s\n", qPrintable(m));
    app.quit();
  });
  qputenv("WEIGHTSCOPE_NO_DIALOGS", "1");
  w.openPath(path);
  app.exec();
  return rc;
}

}  // namespace

int guiMain(int argc, char** argv) {
  // Without a display Qt would abort; say so plainly instead (the CLI still works).
  const bool display = std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY") || std::getenv("QT_QPA_PLATFORM");
  if (!display) {
    std::fprintf(stderr, "weightscope: no display for the GUI; use a command instead (weightscope --help), e.g.\n"
                         "  weightscope inspect PATH\n");
    return 2;
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Weightscope");
  QApplication::setApplicationName("Weightscope");
  QApplication::setApplicationVersion(WEIGHTSCOPE_VERSION);
  // weightscope --screenshot FILE [--view tree|experts|ranks|histogram|preview|findings|residency|diff] PATH [PATH2]:
  // render the view to FILE once its work is done.
  // weightscope --diff A B: the comparison window.
  QString screenshot, view = "tree";
  QStringList paths;
  bool diffMode = false;
  for (int i = 1; i < argc; ++i) {
    QString a = QString::fromLocal8Bit(argv[i]);
    if (a == "--screenshot" && i + 1 < argc) screenshot = QString::fromLocal8Bit(argv[++i]);
    else if (a == "--view" && i + 1 < argc) view = QString::fromLocal8Bit(argv[++i]);
    else if (a == "--diff") diffMode = true;
    else if (!a.startsWith("--")) paths << a;
  }
  // A screenshot shows the defaults - the window size, every view option - and leaves the user's
  // settings alone: it reads and writes settings of its own, thrown away afterwards.
  QTemporaryDir scratch;
  if (!screenshot.isEmpty() && scratch.isValid()) {
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, scratch.path());
  }
  if (diffMode || view == "diff") return diffMain(app, paths, screenshot);
  const QString path = paths.value(0);
  MainWindow w;
  w.show();
  if (!screenshot.isEmpty()) return screenshotMain(app, w, path, view, screenshot);
  if (!path.isEmpty()) w.openPath(path);
  return app.exec();
}

}  // namespace ws::ui
