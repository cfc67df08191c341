// Finds and opens the GUI module (ui/gui_module.cpp) when a window is asked for.
#pragma once

#include <string>

namespace ws::app {

// Runs the GUI; when its module cannot be loaded, says why on stderr and returns 2.
int runGui(int argc, char** argv);

// The --screenshot view names, or why they cannot be listed (the module is missing).
std::string guiViews();

}  // namespace ws::app
