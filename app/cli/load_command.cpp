// weightscope load PATH [--device cuda:N|host[:DEVICE]] [--ep-size N --ep-rank R] [--derive ...]
//                       [--evict-page-cache] [--free GLOB] [--report FILE]
#include <csignal>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/command.h"
#include "app/cli/load_options.h"
#include "app/cli/progress.h"
#include "core/formats/open_checkpoint.h"
#include "core/io/atomic_file.h"
#include "core/load/backend_registry.h"
#include "core/load/loader.h"
#include "core/plan/devices.h"
#include "core/report/load_report.h"
#include "core/util/format_bytes.h"

namespace ws::cli {

load::LoadOptions loadOptionsOf(const Args& a, const Checkpoint& c, int epSize) {
  auto placement = placementSpecOf(a, residencyRulesOf(a)).build(epSize, c.model.numExperts);
  if (!placement) throw std::invalid_argument(placement.error().describe());
  load::LoadOptions opt;
  opt.plan.placement = placement.value();
  opt.plan.rules = &residencyRulesOf(a);
  opt.plan.skipActivationScales = a.has("skip-activation-scales");
  opt.plan.skipMtp = a.has("skip-mtp");
  opt.plan.deferNgramTables = a.has("defer-ngram");
  if (a.has("defer")) opt.plan.defer.push_back(a.get("defer"));
  if (a.has("reserve")) opt.plan.reserved = plan::parseSize(a.get("reserve"));
  opt.plan.peakMultiplier = peakMultiplierOf(a);
  const std::string derive = a.get("derive");
  opt.plan.deriveFusedGateUp = derive.find("fused-gate-up") != std::string::npos;
  opt.plan.deriveTranspose = derive.find("transpose") != std::string::npos;
  opt.plan.deriveBf16 = derive.find("bf16") != std::string::npos;
  opt.evictPageCache = a.has("evict-page-cache");
  opt.verify = a.has("verify");
  if (a.has("readers")) {
    const long long n = a.getInt("readers", 0);
    if (n < 1 || n > 64) throw std::invalid_argument("--readers must be 1 to 64");
    opt.readers = unsigned(n);
  }
  if (a.has("staging")) {
    opt.stagingBytes = plan::parseSize(a.get("staging"));
    if (opt.stagingBytes < 4096 || opt.stagingBytes > (uint64_t(1) << 30)) throw std::invalid_argument("--staging must be 4 KiB to 1 GiB");
  }
  return opt;
}

namespace {

std::atomic<bool> gCancel{false};
void onSigint(int) { gCancel = true; }

class LoadCommand : public Command {
 public:
  std::string name() const override { return "load"; }
  std::string summary() const override { return "load a checkpoint (or one EP rank) onto a device and report residency"; }
  std::string usage() const override {
    return "usage: weightscope load PATH [--device cuda:N|host[:DEVICE]] [--ep-size N --ep-rank R] [--derive LIST]\n"
           "                        [--evict-page-cache] [--verify] [--free GLOB] [--report FILE.json] [plan options]\n"
           "  --verify       read every uploaded byte back from the device and compare it with the file\n"
           "  --readers N    reader threads (default: half the cores, 2 to 8)\n"
           "  --staging SIZE bytes per staging buffer, e.g. 64MiB (default 32MiB; 3 per reader, pinned on CUDA)\n"
           "  --device       cuda (first GPU), cuda:N, or host (host memory with the same bookkeeping;\n"
           "                 the default when no GPU is present); host:H200-141GB or host:80GiB stands in\n"
           "                 for a GPU of that capacity\n"
           "  --free GLOB    after the load, free the tensors and derived buffers matching GLOB, and report\n"
           "                 what came back to the device\n"
           "  --derive LIST  fused-gate-up,transpose,bf16: derived buffers to build\n"
           "  --placement, --remainder, --runtime, --skip-activation-scales, --skip-mtp, --defer GLOB,\n"
           "  --defer-ngram, --reserve SIZE, --peak-multiplier F as in plan (F: the pre-flight guard's load\n"
           "                 peak over resident bytes, the seed's peak_memory_multiplier)\n"
           "  --report FILE  the weightscope.load/2 residency report (docs/load.md); Ctrl-C cancels\n"
           "  --distributed  under mpirun or srun: each MPI rank loads its EP rank onto its own GPU (the node's\n"
           "                 local rank picks it), and rank 0 gathers one weightscope.load-distributed/1\n"
           "                 report with the cross-rank expert coverage (--report FILE; docs/distributed.md)\n";
  }
  int run(const std::vector<std::string>& argv) override {
    Args a(argv, {"device", "ep-size", "ep-rank", "derive", "report", "placement", "remainder", "runtime", "defer", "reserve", "peak-multiplier", "readers", "staging", "free"},
           {"evict-page-cache", "skip-activation-scales", "skip-mtp", "json", "verify", "defer-ngram", "distributed"});
    if (a.positional().size() != 1) {
      std::cerr << usage();
      return kExitCannotRun;
    }
    if (a.has("distributed")) return distributedLoad(a);
    auto opened = openOrReport(a.positional()[0]);
    if (!opened) return kExitCannotRun;
    const Checkpoint& c = *opened;
    std::string device = a.get("device", load::cudaBackendBuilt() ? "cuda" : "host");
    auto backend = load::makeBackend(device);
    if (!backend && !a.has("device")) {  // no GPU here: say so and fall back to the host backend
      std::cerr << "weightscope load: " << backend.error().message << "; using the host backend\n";
      backend = load::makeBackend("host");
    }
    if (!backend) {
      std::cerr << "weightscope load: " << backend.error().describe() << "\n";
      return kExitCannotRun;
    }
    load::LoadOptions opt = loadOptionsOf(a, c, int(a.getInt("ep-size", 1)));
    opt.epRank = int(a.getInt("ep-rank", 0));
    opt.cancel = &gCancel;
    Progress progress;
    opt.progress = [&](const char* phase, uint64_t done, uint64_t total) { progress.update(phase, done, total); };
    std::signal(SIGINT, onSigint);
    auto r = load::loadCheckpoint(c, *backend.value(), opt);
    progress.finish();
    std::signal(SIGINT, SIG_DFL);
    if (!r) {
      std::cerr << "weightscope load: " << r.error().describe() << "\n";
      std::cerr << "live allocations after cleanup: " << backend.value()->liveAllocations() << "\n";
      return kExitFindings;
    }
    nlohmann::json doc = loadJson(c, r.value());
    std::string freedText;
    if (a.has("free")) {
      // The seed runtime's free_matching: views dropped, and arenas left empty handed back.
      const load::Freed f = r.value().store->freeMatching(a.get("free"));
      const load::DeviceMemory m = backend.value()->memory();
      doc["freed"] = {{"glob", a.get("free")}, {"views", f.views}, {"bytes", f.bytes}, {"arenas", f.arenas}, {"arena_bytes", f.arenaBytes}, {"free_after", m.free}};
      freedText = "freed     " + std::to_string(f.views) + " tensors/buffers matching " + a.get("free") + " (" + formatBytes(f.bytes) + "); " +
                  std::to_string(f.arenas) + " arenas (" + formatBytes(f.arenaBytes) + ") back to the device, free now " + formatBytes(m.free) + "\n";
    }
    if (a.has("report")) {
      AtomicFile f(a.get("report"));
      f.write(doc.dump(1) + "\n");
      f.commit();
    }
    if (a.has("json")) std::cout << doc.dump(1) << "\n";
    else std::cout << loadText(c, r.value()) << freedText;
    r.value().store->release();
    return kExitOk;
  }
};

}  // namespace

void registerLoad(CommandRegistry& r) { r.add(std::make_unique<LoadCommand>()); }

}  // namespace ws::cli
