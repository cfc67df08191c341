#include "ui/gui_main.h"

#include <QApplication>
#include <QMetaObject>
#include <QTimer>
#include <QTabWidget>
#include <QTreeView>
#include <cstdio>
#include <cstdlib>

#include "ui/diff_window.h"
#include "ui/main_window.h"

namespace ws::ui {

namespace {

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
  auto save = [&] {
    QTimer::singleShot(200, &w, [&] {
      rc = w.grab().save(screenshot) ? 0 : 2;
      if (rc) std::fprintf(stderr, "weightscope: cannot write %s\n", qPrintable(screenshot));
      app.quit();
    });
  };
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
  // weightscope --screenshot FILE [--view tree|experts|diff] PATH [PATH2]: render the view to FILE.
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
  if (diffMode || view == "diff") return diffMain(app, paths, screenshot);
  const QString path = paths.value(0);
  MainWindow w;
  w.show();
  if (!screenshot.isEmpty()) {
    int rc = 2;
    QObject::connect(&w, &MainWindow::checkpointOpened, &w, [&] {
      w.treeView()->expandToDepth(1);
      if (view == "experts") w.tabs()->setCurrentIndex(1);
      QTimer::singleShot(200, &w, [&] {
        rc = w.grab().save(screenshot) ? 0 : 2;
        if (rc) std::fprintf(stderr, "weightscope: cannot write %s\n", qPrintable(screenshot));
        app.quit();
      });
    });
    QObject::connect(&w, &MainWindow::openFailed, &w, [&](const QString& m) {
      std::fprintf(stderr, "weightscope: %s\n", qPrintable(m));
      app.quit();
    });
    qputenv("WEIGHTSCOPE_NO_DIALOGS", "1");
    w.openPath(path);
    app.exec();
    return rc;
  }
  if (!path.isEmpty()) w.openPath(path);
  return app.exec();
}

}  // namespace ws::ui
