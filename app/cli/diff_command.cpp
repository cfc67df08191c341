// weightscope diff A B: match every tensor of two checkpoints across formats and naming families,
// dequantize both sides and report how far each moved.
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/command.h"
#include "app/cli/progress.h"
#include "core/diff/diff.h"
#include "core/io/atomic_file.h"
#include "core/report/diff_report.h"

namespace ws::cli {

namespace {

class DiffCommand : public Command {
 public:
  std::string name() const override { return "diff"; }
  std::string summary() const override { return "compare two checkpoints tensor by tensor, across formats (exit 1 on differences that matter)"; }
  std::string usage() const override {
    return "usage: weightscope diff A B [--tensors GLOB] [--json] [--report FILE.html|.json] [--all] [--max-rel-error X] [--cpu] [--numerics reference|kt]\n"
           "  A, B              checkpoints in any format: safetensors (HF, compressed-tensors, ModelOpt), GGUF, KTransformers.\n"
           "                    Tensors are matched by meaning (layer, role, projection, expert), so HF names meet\n"
           "                    GGUF names and per-expert tensors meet stacked or fused ones; A is the reference.\n"
           "  --tensors GLOB    only units whose canonical key (blk.3.ffn_up_exps.7) or either name matches\n"
           "  --json            print the weightscope.diff/1 document instead of the table\n"
           "  --report FILE     also write the report there (atomically): .html, or .json\n"
           "  --all             list identical tensors in the table too\n"
           "  --max-rel-error X exit 1 when a tensor's relative Frobenius error ||a-b||/||a|| exceeds X\n"
           "                    (e.g. 0.08: every tensor within 8% of the reference)\n"
           "  --cpu             dequantize on the CPU even when a GPU is there (results are identical)\n"
           "  --numerics kt     both sides as the KTransformers loader computes them (block FP8:\n"
           "                    bf16(code x bf16(scale)); the rest .to(bf16)); default reference (f32)\n"
           "Exit: 0 every tensor matched with equal shapes (and within --max-rel-error); 1 otherwise; 2 could not run.\n";
  }
  int run(const std::vector<std::string>& argv) override {
    Args a(argv, {"tensors", "report", "max-rel-error", "numerics"}, {"json", "all", "cpu"});
    if (a.positional().size() != 2) {
      std::cerr << usage();
      return kExitCannotRun;
    }
    double maxRel = -1;
    if (a.has("max-rel-error")) maxRel = std::stod(a.get("max-rel-error"));
    auto ca = openOrReport(a.positional()[0]);
    if (!ca) return kExitCannotRun;
    auto cb = openOrReport(a.positional()[1]);
    if (!cb) return kExitCannotRun;
    diff::DiffOptions opt;
    opt.tensors = a.get("tensors");
    opt.useDevice = !a.has("cpu");
    const auto numerics = num::parseNumerics(a.get("numerics", "reference"));
    if (!numerics) throw std::invalid_argument("--numerics must be reference or kt");
    opt.numerics = *numerics;
    Progress progress;
    opt.progress = [&](uint64_t done, uint64_t total) {
      progress.update("comparing tensors", done, total);
      return true;
    };
    auto r = diff::diffCheckpoints(*ca, *cb, opt);
    progress.finish();
    if (!r) {
      std::cerr << "weightscope diff: " << r.error().describe() << "\n";
      return kExitCannotRun;
    }
    const auto& rep = r.value();
    if (a.has("json")) std::cout << diffJson(rep).dump(1) << "\n";
    else std::cout << diffText(rep, a.has("all"));
    const std::string report = a.get("report");
    if (!report.empty()) {
      const bool json = report.size() >= 5 && report.compare(report.size() - 5, 5, ".json") == 0;
      AtomicFile f(report);
      f.write(json ? diffJson(rep).dump(1) + "\n" : diffHtml(rep));
      f.commit();
    }
    uint64_t over = 0;
    if (maxRel >= 0)
      for (const auto& p : rep.pairs) over += p.error.empty() && p.metrics.shapesAgree && !(p.metrics.relFrobenius <= maxRel);
    if (over) std::cerr << "weightscope diff: " << over << " tensors moved more than " << maxRel << " (relative Frobenius error)\n";
    const bool problems = !rep.onlyA.empty() || !rep.onlyB.empty() || rep.shapeMismatches || rep.errors || over;
    return problems ? kExitFindings : kExitOk;
  }
};

}  // namespace

void registerDiff(CommandRegistry& r) { r.add(std::make_unique<DiffCommand>()); }

}  // namespace ws::cli
