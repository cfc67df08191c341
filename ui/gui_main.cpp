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
#include "ui/main_window.h"
#include "ui/view_table.h"

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
    // the worst cell, as diff --json names it
    const QPoint worst = w.worstCell();
    w.selectCell(worst.y(), worst.x());
  });
  app.exec();
  return rc;
}

}  // namespace

int screenshotInWindow(QApplication& app, MainWindow& w, const QString& path, const QString& view, const QString& screenshot) {
  const int index = viewIndex(view);
  if (index < 0) {
    std::fprintf(stderr, "weightscope: unknown --view '%s' (%s)\n", qPrintable(view), screenshotViewNames().c_str());
    return 2;
  }
  int rc = 2;
  QObject::connect(&w, &MainWindow::checkpointOpened, &w, [&] {
    w.treeView()->expandToDepth(1);
    viewTable()[size_t(index)].screenshot(w, [&] { saveSoon(app, w, screenshot, rc); });
    w.showTab(index);
  }, Qt::SingleShotConnection);
  QObject::connect(&w, &MainWindow::openFailed, &w, [&](const QString& m) {
    std::fprintf(stderr, "weightscope: %s\n", qPrintable(m));
    app.quit();
  });
  qputenv("WEIGHTSCOPE_NO_DIALOGS", "1");
  w.openPath(path);
  app.exec();
  return rc;
}

std::string screenshotViews() { return screenshotViewNames(); }

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
  // weightscope --screenshot FILE [--view VIEW] PATH [PATH2]: render the view (a name of the view
  // table, or diff) to FILE once its work is done.
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
  if (!screenshot.isEmpty()) return screenshotInWindow(app, w, path, view, screenshot);
  if (!path.isEmpty()) w.openPath(path);
  return app.exec();
}

}  // namespace ws::ui
