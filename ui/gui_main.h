// GUI start-up, called by app/main.cpp when the GUI is built and no CLI command was given.
#pragma once

namespace ws::ui {

int guiMain(int argc, char** argv);

}  // namespace ws::ui
