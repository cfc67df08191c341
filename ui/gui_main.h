// GUI start-up, called by app/main.cpp when the GUI is built and no CLI command was given.
#pragma once

#include <string>

class QApplication;
class QString;

namespace ws::ui {

class MainWindow;

int guiMain(int argc, char** argv);

// --screenshot FILE --view VIEW PATH in window `w`: opens PATH, shows the view, starts its work,
// saves the window once that work is done, and returns 0 (2 when the view is unknown, the path
// cannot be opened or the file cannot be written).
int screenshotInWindow(QApplication& app, MainWindow& w, const QString& path, const QString& view, const QString& screenshot);

// Every --view name, space-separated (the view table's, then diff), for --help.
std::string screenshotViews();

}  // namespace ws::ui
