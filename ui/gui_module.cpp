// The GUI as a module that app/main.cpp opens (dlopen) only to show a window: a command then does
// not load Qt's GUI libraries and their dependencies, about 40 of the binary's 88 (weightscope
// --version took 21 ms with them linked, 8 ms without). The core it calls is the binary's own,
// exported by it (app/CMakeLists.txt), so both see one registry of backends, one set of options.
#include <string>

#include "ui/gui_main.h"

extern "C" {

__attribute__((visibility("default"))) int weightscope_gui_main(int argc, char** argv) { return ws::ui::guiMain(argc, argv); }

// Every --screenshot view name, for --help.
__attribute__((visibility("default"))) const char* weightscope_gui_views() {
  static const std::string views = ws::ui::screenshotViews();
  return views.c_str();
}
}
