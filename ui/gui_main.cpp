#include "ui/gui_main.h"

#include <QApplication>
#include <QMetaObject>
#include <QTimer>
#include <QTreeView>
#include <cstdio>
#include <cstdlib>

#include "ui/main_window.h"

namespace ws::ui {

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
  // weightscope --screenshot FILE PATH: open PATH, render the window to FILE (PNG), exit.
  QString screenshot, path;
  for (int i = 1; i < argc; ++i) {
    QString a = QString::fromLocal8Bit(argv[i]);
    if (a == "--screenshot" && i + 1 < argc) screenshot = QString::fromLocal8Bit(argv[++i]);
    else if (!a.startsWith("--")) path = a;
  }
  MainWindow w;
  w.show();
  if (!screenshot.isEmpty()) {
    int rc = 2;
    QObject::connect(&w, &MainWindow::checkpointOpened, &w, [&] {
      w.treeView()->expandToDepth(1);
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
