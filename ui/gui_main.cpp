#include "ui/gui_main.h"

#include <QApplication>
#include <QMetaObject>
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
  MainWindow w;
  w.show();
  if (argc >= 2) w.openPath(QString::fromLocal8Bit(argv[1]));
  return app.exec();
}

}  // namespace ws::ui
