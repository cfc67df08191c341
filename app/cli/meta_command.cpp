// weightscope meta PATH [KEY|GLOB] [--json]: metadata entries in full (a whole chat template, every
// token of a vocabulary), for scripts.
#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/command.h"
#include "core/formats/open_checkpoint.h"
#include "core/report/metadata_report.h"
#include "core/util/glob.h"

namespace ws::cli {

namespace {

class MetaCommand : public Command {
 public:
  std::string name() const override { return "meta"; }
  std::string summary() const override { return "print metadata entries in full (GGUF key-value pairs, safetensors __metadata__)"; }
  std::string usage() const override {
    return "usage: weightscope meta PATH [KEY|GLOB] [--json]\n"
           "  KEY|GLOB   the entries whose key matches (all when omitted), e.g. tokenizer.chat_template\n"
           "             or 'tokenizer.ggml.*'\n"
           "  text: each value as stored, an array one element a line; --json: a list of\n"
           "  {key, type, value} with whole arrays (element_type, length). Exit 1 when no key matches.\n";
  }
  int run(const std::vector<std::string>& argv) override {
    Args a(argv, {}, {"json"});
    if (a.positional().empty() || a.positional().size() > 2) {
      std::cerr << usage();
      return kExitCannotRun;
    }
    auto c = openOrReport(a.positional()[0], Partial::Open);
    if (!c) return kExitCannotRun;
    const std::string glob = a.positional().size() == 2 ? a.positional()[1] : std::string();
    if (std::none_of(c->meta.begin(), c->meta.end(), [&](const MetaEntry& e) { return glob.empty() || globMatch(glob, e.key); })) {
      std::cerr << "weightscope meta: no metadata key matches '" << glob << "'\n";
      return kExitFindings;
    }
    if (a.has("json")) std::cout << metaJson(*c, glob).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else std::cout << metaText(*c, glob);
    return kExitOk;
  }
};

}  // namespace

void registerMeta(CommandRegistry& r) { r.add(std::make_unique<MetaCommand>()); }

}  // namespace ws::cli
