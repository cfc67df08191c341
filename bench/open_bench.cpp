// Open, catalog, recognise and plan EP for one checkpoint, timed in-process (best of N runs, so
// process start-up and page-cache misses stay out), plus the structural validation rules that
// read no weight bytes. Prints one JSON object; bench/run_open_bench.py runs it and its peers.
//
// usage: open_bench PATH [--runs N] [--ep N]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "core/formats/open_checkpoint.h"
#include "core/plan/ep_plan.h"
#include "core/validate/validator.h"

namespace {

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Heap bytes a record holds beyond sizeof: its name and shape, as allocated.
uint64_t recordHeapBytes(const ws::TensorRecord& t) {
  const uint64_t name = t.name.capacity() > 15 ? t.name.capacity() + 1 : 0;  // beyond the SSO buffer
  return name + t.shape.capacity() * sizeof(uint64_t);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: open_bench PATH [--runs N] [--ep N]\n");
    return 2;
  }
  const std::string path = argv[1];
  int runs = 5, ep = 8;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--ep")) ep = std::atoi(argv[i + 1]);
  }
  double bestOpen = 1e9, bestPlan = 1e9, bestTotal = 1e9, bestStructure = 1e9;
  nlohmann::json out;
  for (int r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto c = ws::openCheckpoint(path);
    if (!c) {
      std::fprintf(stderr, "open_bench: %s\n", c.error().describe().c_str());
      return 2;
    }
    const double open = seconds(t0);
    auto t1 = std::chrono::steady_clock::now();
    const auto& ck = *c.value();
    auto placement = ws::plan::makePlacement(ws::plan::PlacementKind::Linear, ws::plan::Remainder::First, ep, ck.model.numExperts);
    if (!placement) {
      std::fprintf(stderr, "open_bench: %s\n", placement.error().describe().c_str());
      return 2;
    }
    ws::plan::PlanOptions opt;
    opt.placement = placement.value();
    auto plan = ws::plan::planCheckpoint(ck, opt);
    if (!plan) {
      std::fprintf(stderr, "open_bench: %s\n", plan.error().describe().c_str());
      return 2;
    }
    const double planS = seconds(t1);
    bestOpen = std::min(bestOpen, open);
    bestPlan = std::min(bestPlan, planS);
    bestTotal = std::min(bestTotal, open + planS);

    auto t2 = std::chrono::steady_clock::now();
    ws::val::ValidateOptions vo;
    vo.only = {"integrity", "completeness", "shapes", "compatibility"};  // the rules that read no weight bytes
    auto report = ws::val::validateCheckpoint(c.value(), vo);
    bestStructure = std::min(bestStructure, seconds(t2));

    if (r == 0) {
      uint64_t heap = 0;
      for (const auto& t : ck.tensors) heap += recordHeapBytes(t);
      out["tensors"] = ck.tensors.size();
      out["logical"] = ck.logical.size();
      out["files"] = ck.files.size();
      out["record_bytes"] = sizeof(ws::TensorRecord);
      out["record_heap_bytes_avg"] = ck.tensors.empty() ? 0.0 : double(heap) / double(ck.tensors.size());
      out["structure_findings"] = report.findings.size();
    }
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  out["open_s"] = bestOpen;
  out["plan_s"] = bestPlan;
  out["open_plan_s"] = bestTotal;
  out["structure_rules_s"] = bestStructure;
  out["peak_rss_mb"] = double(ru.ru_maxrss) / 1024.0;
  out["runs"] = runs;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
