// weightscope: the headless CLI, and the desktop GUI when built with Qt and a display exists.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include "app/cli/command.h"
#include "app/cli/progress.h"
#include "core/formats/remote_open.h"
#include "core/plan/devices.h"

#ifdef WEIGHTSCOPE_HAVE_GUI
#include "app/gui_loader.h"
#endif
#ifdef WEIGHTSCOPE_HAVE_CUDA
#include "kernels/cuda_backend.h"
#endif

namespace {

constexpr const char* kVersion = WEIGHTSCOPE_VERSION;

void printHelp(const ws::cli::CommandRegistry& reg) {
  std::cout << "weightscope " << kVersion << " - explore and validate LLM checkpoints\n\n"
            << "usage: weightscope COMMAND [options]   (weightscope COMMAND --help for details)\n"
#ifdef WEIGHTSCOPE_HAVE_GUI
            << "       weightscope [PATH]               open the desktop GUI (a file, or a checkpoint folder)\n"
            << "       weightscope --diff A B           the comparison window: B against A, the reference\n"
            << "       weightscope --screenshot FILE [--view VIEW] PATH [PATH2]\n"
            << "                                        render a view to a PNG once its work is done, and exit;\n"
            << "                                        VIEW: " << ws::app::guiViews() << "\n"
#endif
            << "\nPATH may be remote, read without downloading the weights: hf://ORG/REPO[@REVISION][/FOLDER|/FILE]\n"
            << "(HF_ENDPOINT, HF_TOKEN), or an http(s) URL of a .safetensors, .gguf, model.safetensors.index.json or a\n"
            << "folder ending in '/'. Headers are cached under $XDG_CACHE_HOME/weightscope; --no-cache fetches them anew;\n"
            << "--max-fetch SIZE caps the tensor bytes a command fetches (default 8GiB).\n"
            << "\ncommands:\n";
  for (const auto& [name, cmd] : reg.all()) std::cout << "  " << name << std::string(10 - std::min<size_t>(9, name.size()), ' ') << cmd->summary() << "\n";
  std::cout << "\nexit codes: 0 success, 1 problems found, 2 could not run (bad usage, unreadable input)\n"
            << "weightscope --version prints the version. Documentation: README.md and docs/ of the source.\n";
}

}  // namespace

int main(int argc, char** argv) {
#ifdef WEIGHTSCOPE_HAVE_CUDA
  ws::kernels::registerCuda();
#endif
  ws::cli::CommandRegistry reg;
  ws::cli::registerInspect(reg);
  ws::cli::registerMeta(reg);
  ws::cli::registerSynth(reg);
  ws::cli::registerNumerics(reg);
  ws::cli::registerPlan(reg);
  ws::cli::registerValidate(reg);
  ws::cli::registerLoad(reg);
  ws::cli::registerDiff(reg);

  if (argc >= 2 && (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "-V"))) {
    std::cout << "weightscope " << kVersion << "\n";
    return 0;
  }
  if (argc >= 2 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help"))) {
    printHelp(reg);
    return 0;
  }
  if (argc >= 2) {
    if (ws::cli::Command* cmd = reg.find(argv[1])) {
      std::vector<std::string> args(argv + 2, argv + argc);
      // --no-cache, for any command: a remote checkpoint's headers are fetched anew, into a
      // mirror that goes when the command ends.
      // --max-fetch SIZE: the tensor bytes a command may fetch of a remote checkpoint.
      if (auto it = std::find(args.begin(), args.end(), "--no-cache"); it != args.end()) {
        args.erase(it);
        ws::remoteOptions().useCache = false;
      }
      if (auto it = std::find(args.begin(), args.end(), "--max-fetch"); it != args.end()) {
        try {
          if (it + 1 == args.end()) throw std::invalid_argument("no size");
          ws::remoteOptions().fetchBudget = ws::plan::parseSize(*(it + 1));
        } catch (const std::invalid_argument&) {
          std::cerr << "weightscope: --max-fetch needs a size (such as 20GiB)\n";
          return ws::cli::kExitCannotRun;
        }
        args.erase(it, it + 2);
      }
      static ws::cli::Progress remoteProgress;  // stderr, as every long command reports
      ws::remoteOptions().progress = [](const char* stage, uint64_t done, uint64_t total) { remoteProgress.update(stage, done, total); };
      for (const auto& a : args)
        if (a == "--help" || a == "-h") {
          std::cout << cmd->usage();
          return 0;
        }
      try {
        return cmd->run(args);
      } catch (const std::invalid_argument& e) {
        std::cerr << "weightscope " << cmd->name() << ": " << e.what() << "\n" << cmd->usage();
        return ws::cli::kExitCannotRun;
      } catch (const std::exception& e) {
        std::cerr << "weightscope " << cmd->name() << ": " << e.what() << "\n";
        return ws::cli::kExitCannotRun;
      }
    }
  }
#ifdef WEIGHTSCOPE_HAVE_GUI
  if (argc < 2 || argv[1][0] != '-' || !std::strcmp(argv[1], "--screenshot")) return ws::app::runGui(argc, argv);
#endif
  if (argc >= 2) std::cerr << "weightscope: unknown command '" << argv[1] << "'\n\n";
  printHelp(reg);
  return argc >= 2 ? ws::cli::kExitCannotRun : 0;
}
