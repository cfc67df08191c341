// weightscope validate PATH [--report FILE] [--format json|md|html|junit] [--rules LIST]
//                           [--skip-rules LIST] [--min-severity error|warning|info]
#include <iostream>

#include "app/cli/command.h"
#include "app/cli/distributed.h"
#include "core/formats/remote_open.h"
#include "app/cli/progress.h"
#include "core/io/atomic_file.h"
#include "core/report/validate_report.h"
#include "core/validate/engines/engine_rules.h"
#include "core/validate/rules.h"

namespace ws::cli {

namespace {

std::set<std::string> splitList(const std::string& s) {
  std::set<std::string> out;
  for (size_t p = 0; p <= s.size();) {
    size_t comma = s.find(',', p);
    if (comma == std::string::npos) comma = s.size();
    if (comma > p) out.insert(s.substr(p, comma - p));
    p = comma + 1;
  }
  return out;
}

// --format, else the report file's suffix, else Markdown (also on standard output).
std::string formatFor(const std::string& file, const std::string& given) {
  if (!given.empty()) return given;
  const std::string byName = validateFormatFor(file);
  return byName.empty() ? "md" : byName;
}

class ValidateCommand : public Command {
 public:
  std::string name() const override { return "validate"; }
  std::string summary() const override { return "check a checkpoint and write a report (exit 1 on errors)"; }
  std::string usage() const override {
    return "usage: weightscope validate PATH [--report FILE] [--format json|md|html|junit] [--rules LIST]\n"
           "                            [--skip-rules LIST] [--min-severity error|warning|info]\n"
           "                            [--runtime kt|seed|llama.cpp|vllm|sglang [--tp N] [--dp N] [--ep N] [--gpu DEVICE]]\n"
           "  --report FILE      write the report there (atomically); the format follows the extension\n"
           "                     (.json, .md, .html, .xml = JUnit) unless --format says otherwise.\n"
           "                     Without it the Markdown report goes to stdout.\n"
           "  --rules LIST       only these rule codes, names or families (integrity, completeness,\n"
           "                     shapes, compatibility, values, diff, load); --skip-rules: all but these\n"
           "  --min-severity S   leave out findings below S (the exit code still counts errors)\n"
           "  --runtime R        the runtime the checkpoint is meant for: what its loader refuses is\n"
           "                     an error (kt: KTransformers SFT, seed: the seed GPU runtime,\n"
           "                     llama.cpp); without it each such finding is an info naming the runtime.\n"
           "                     vllm (0.11.0), sglang (0.5.23): what that engine refuses at this layout\n"
           "                     on this GPU, the report opening with its verdict (docs/rules.md, engine)\n"
           "  --tp N --dp N --ep N   the engine's layout: tensor parallel, data parallel (SGLang: its\n"
           "                     attention DP size) and the ranks experts split over (vLLM: 1 or TP x DP)\n"
           "  --gpu DEVICE       a device of plan's table (H200-141GB ...) or a compute capability (sm_89)\n"
           "  --full-load        also load it (--device host|cuda:N, --ep-size N --ep-rank R,\n"
           "                     --placement, --remainder as in plan) and report load failures and\n"
           "                     residency against the planner\n"
           "  --against REF      compare every tensor with a reference checkpoint (any format, e.g. the\n"
           "                     BF16 original of an FP8 or GGUF conversion): missing, reshaped, and with\n"
           "                     --max-rel-error X moved by more than X (0.08: within 8%)\n"
           "  --base PATH        of a LoRA adapter (PEFT, mlx-lm): check its factors against the base model's\n"
           "                     modules, features and experts (docs/adapters.md)\n"
           "  --values           of a remote checkpoint (hf://, https://), also the value rules, which fetch\n"
           "                     every tensor's bytes; without it a remote checkpoint is checked from its headers\n"
           "  --distributed      under mpirun or srun: the value rules' tensors shared out by bytes over the MPI\n"
           "                     ranks, each reading (of a remote checkpoint, fetching) only its share; rank 0\n"
           "                     writes the report, the same as one process's (docs/distributed.md)\n"
           "  --hub [hf://ORG/REPO[@REV]]   every local file against the Hub's record: size, the LFS\n"
           "                     sha256 of weights, the git blob sha1 of small files (hashed on all cores);\n"
           "                     a file differing, missing or extra is an error naming it. Without a location:\n"
           "                     the Hugging Face cache snapshot PATH is in (models--ORG--REPO/snapshots/COMMIT)\n"
           "exit codes: 0 no errors, 1 errors found, 2 could not run. Rules: docs/rules.md\n";
  }
  int run(const std::vector<std::string>& given) override {
    // A bare --hub (not followed by an hf:// location): the cache snapshot PATH is in.
    std::vector<std::string> argv;
    for (size_t i = 0; i < given.size(); ++i) {
      argv.push_back(given[i]);
      if (given[i] == "--hub" && (i + 1 >= given.size() || given[i + 1].rfind("hf://", 0) != 0)) argv.push_back("auto");
    }
    Args a(argv, {"report", "format", "rules", "skip-rules", "min-severity", "device", "ep-size", "ep-rank", "placement", "remainder", "against", "max-rel-error", "runtime", "base",
                   "tp", "dp", "ep", "gpu", "hub"},
           {"full-load", "values", "distributed"});
    if (a.positional().size() != 1) {
      std::cerr << usage();
      return kExitCannotRun;
    }
    const std::string sev = a.get("min-severity", "info");
    val::Severity min = sev == "error" ? val::Severity::Error : sev == "warning" ? val::Severity::Warning : sev == "info" ? val::Severity::Info
                                                                                                                        : throw std::invalid_argument("--min-severity must be error, warning or info");
    const std::string report = a.get("report");
    const std::string format = formatFor(report, a.get("format"));
    if (format != "json" && format != "md" && format != "html" && format != "junit") throw std::invalid_argument("--format must be json, md, html or junit");
    val::ValidateOptions opt;
    opt.only = splitList(a.get("rules"));
    opt.skip = splitList(a.get("skip-rules"));
    opt.fullLoad = a.has("full-load");
    if (isRemoteLocation(a.positional()[0]) && !a.has("values")) {
      opt.skip.insert("values");  // headers only: the value rules would fetch every tensor
      std::cerr << "remote checkpoint: the value rules are left out (--values fetches every tensor's bytes for them)\n";
    }
    opt.device = a.get("device", "host");
    opt.epSize = int(a.getInt("ep-size", 1));
    opt.epRank = int(a.getInt("ep-rank", 0));
    opt.runtime = a.get("runtime");
    opt.layout.tp = int(a.getInt("tp", 1));
    opt.layout.dp = int(a.getInt("dp", 1));
    opt.layout.ep = int(a.getInt("ep", 1));
    opt.layout.gpu = a.get("gpu");
    if ((a.has("tp") || a.has("dp") || a.has("ep") || a.has("gpu")) && !val::engines::isServingEngine(opt.runtime))
      throw std::invalid_argument("--tp, --dp, --ep and --gpu describe a serving engine's layout: give --runtime vllm or --runtime sglang");
    // A runtime with residency rules of its own (the seed) loads by them under --full-load.
    if (const plan::ResidencyRules* r = plan::findResidencyRules(opt.runtime)) opt.residency = r;
    opt.placement = placementSpecOf(a, *opt.residency);
    opt.against = a.get("against");
    opt.hub = a.get("hub");
    opt.base = a.get("base");
    if (a.has("max-rel-error")) opt.maxRelError = std::stod(a.get("max-rel-error"));
    if (opt.maxRelError >= 0 && opt.against.empty()) throw std::invalid_argument("--max-rel-error needs --against REF");
    std::unique_ptr<dist::Communicator> comm;
    if (a.has("distributed")) {
      if (opt.fullLoad) throw std::invalid_argument("--full-load with --distributed: a distributed load is weightscope load --distributed");
      if (!opt.against.empty()) throw std::invalid_argument("--against with --distributed: the comparison is not shared out; run it in one process");
      if (!(comm = joinOrReport("validate"))) return kExitCannotRun;
      opt.comm = comm.get();
    }
    const bool speaks = !comm || comm->rank() == 0;  // rank 0 speaks for the job
    Progress progress;
    opt.progress = [&](const char* stage, uint64_t done, uint64_t total) {
      if (speaks) progress.update(stage, done, total);
      return true;
    };
    auto r = val::validatePath(a.positional()[0], opt);
    progress.finish();
    if (!r) {
      std::cerr << "weightscope validate" << (comm ? " (rank " + std::to_string(comm->rank()) + ")" : std::string{}) << ": " << r.error().describe() << "\n";
      // This rank cannot reach the next collective (its open or its fetch failed): the others
      // must not wait for it there.
      if (comm) comm->abort(kExitCannotRun);
      return kExitCannotRun;
    }
    const auto& rep = r.value();
    // Every rank holds the whole report; the others exit as rank 0 does.
    if (!speaks) return rep.count(val::Severity::Error) ? kExitFindings : kExitOk;
    const std::string text = validateReportText(rep, min, format);
    if (report.empty()) {
      std::cout << text;
    } else {
      AtomicFile f(report);
      f.write(text);
      f.commit();
      std::cerr << "weightscope validate: " << rep.count(val::Severity::Error) << " errors, " << rep.count(val::Severity::Warning) << " warnings, "
                << rep.count(val::Severity::Info) << " infos; report written to " << report << "\n";
    }
    return rep.count(val::Severity::Error) ? kExitFindings : kExitOk;
  }
};

}  // namespace

void registerValidate(CommandRegistry& r) { r.add(std::make_unique<ValidateCommand>()); }

}  // namespace ws::cli
