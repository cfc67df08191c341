#include "app/gui_loader.h"

#include <dlfcn.h>

#include <filesystem>
#include <iostream>
#include <system_error>

namespace ws::app {

namespace {

struct Module {
  void* handle = nullptr;
  std::string error;  // why it could not be opened
};

// Beside the binary in a build tree; in ../lib/weightscope once installed (CMake's install rules).
const Module& guiModule() {
  static const Module m = [] {
    Module out;
    std::error_code ec;
    const std::filesystem::path bin = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
    if (ec || bin.empty()) {  // never look in the working folder instead
      out.error = "the binary's folder is unknown (/proc/self/exe: " + ec.message() + ")";
      return out;
    }
    for (const auto& p : {bin / "weightscope-gui.so", bin / ".." / "lib" / "weightscope" / "weightscope-gui.so"}) {
      if (!std::filesystem::exists(p, ec)) continue;
      if ((out.handle = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL))) return out;
      out.error = dlerror();  // there, but it does not load: say why
      return out;
    }
    out.error = "weightscope-gui.so is neither beside " + bin.string() + "/weightscope nor in " + (bin / ".." / "lib" / "weightscope").lexically_normal().string();
    return out;
  }();
  return m;
}

template <class Fn>
Fn* entry(const char* name) {
  const Module& m = guiModule();
  return m.handle ? reinterpret_cast<Fn*>(dlsym(m.handle, name)) : nullptr;
}

}  // namespace

int runGui(int argc, char** argv) {
  if (auto* main = entry<int(int, char**)>("weightscope_gui_main")) return main(argc, argv);
  std::cerr << "weightscope: the desktop GUI could not be loaded: " << guiModule().error << "\n"
            << "(the commands work without it: weightscope --help)\n";
  return 2;
}

std::string guiViews() {
  if (auto* views = entry<const char*()>("weightscope_gui_views")) return views();
  return "(not available: " + guiModule().error + ")";
}

}  // namespace ws::app
