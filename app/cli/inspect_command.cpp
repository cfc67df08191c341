// weightscope inspect PATH [--json] [--flat] [--filter GLOB] [--health]
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/command.h"
#include "core/formats/open_checkpoint.h"
#include "core/report/inspect_report.h"
#include "core/validate/validator.h"

namespace ws::cli {

namespace {

class InspectCommand : public Command {
 public:
  std::string name() const override { return "inspect"; }
  std::string summary() const override { return "show what a checkpoint holds: model, layers, experts, schemes, tensors"; }
  std::string usage() const override {
    return "usage: weightscope inspect PATH [--json] [--flat] [--filter GLOB] [--health]\n"
           "  PATH        a .safetensors file, a folder with model.safetensors.index.json,\n"
           "              a .gguf file (a split set is found from any of its parts), or a\n"
           "              KTransformers expert folder\n"
           "  --json      write the weightscope.inspect/1 document (docs/inspect-schema.md)\n"
           "  --flat      one line per tensor instead of the grouped tree\n"
           "  --filter G  only tensors whose name matches the shell glob G\n"
           "  --health    also sample every routed expert's values (validate's value pass for\n"
           "              WS-V015 / WS-V016) and show each one's norm against its layer's\n"
           "              median and its nearest sibling in the experts grid\n"
           "A damaged or incomplete checkpoint (a cut file, a missing part) is shown as far as\n"
           "it can be read, its problems listed; the exit status is then 1.\n";
  }
  int run(const std::vector<std::string>& argv) override {
    Args a(argv, {"filter"}, {"json", "flat", "health"});
    if (a.positional().size() != 1) {
      std::cerr << usage();
      return kExitCannotRun;
    }
    auto c = openOrReport(a.positional()[0], Partial::Open);
    if (!c) return kExitCannotRun;
    InspectOptions opt;
    opt.filter = a.get("filter");
    opt.flat = a.has("flat");
    opt.problems = val::openingFindings(*c);
    if (a.has("health")) {
      // The two rules' value pass alone: their samples are the health grid; their findings are
      // validate's to report.
      val::ValidateOptions vo;
      vo.only = {"WS-V015", "WS-V016"};
      opt.health = val::validateCheckpoint(c, vo).expertHealth;
    }
    if (a.has("json")) std::cout << inspectJsonText(*c, opt);
    else std::cout << inspectText(*c, opt);
    return opt.problems.empty() ? kExitOk : kExitFindings;
  }
};

}  // namespace

void registerInspect(CommandRegistry& r) { r.add(std::make_unique<InspectCommand>()); }

}  // namespace ws::cli
