// weightscope load PATH --distributed, under mpirun or srun: each MPI rank is one EP rank and loads
// its part onto its own device at the same time as the others; rank 0 gathers one report
// (weightscope.load-distributed/1, docs/distributed.md) with the cross-rank expert coverage.
// A rank that fails still answers the gather with its error, so no rank waits for it.
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/distributed.h"
#include "app/cli/load_options.h"
#include "app/cli/progress.h"
#include "core/formats/open_checkpoint.h"
#include "core/io/atomic_file.h"
#include "core/load/backend_registry.h"
#include "core/load/expert_coverage.h"
#include "core/report/load_report.h"
#include "core/util/format_bytes.h"

namespace ws::cli {

namespace {

using nlohmann::json;

// The device of this rank: the node's local rank picks the GPU, as one rank per GPU needs.
std::string rankDevice(const Args& a, int localRank) {
  const std::string d = a.get("device", load::cudaBackendBuilt() ? "cuda" : "host");
  if (d == "cuda") return "cuda:" + std::to_string(localRank);
  if (d.rfind("cuda:", 0) == 0) throw std::invalid_argument("--distributed gives each rank the GPU of its local rank: say --device cuda, not " + d);
  return d;
}

// What one rank did, kept alive until every rank has loaded (all parts resident at once).
struct RankLoad {
  std::shared_ptr<const Checkpoint> checkpoint;
  load::LoadOptions options;
  std::unique_ptr<load::DeviceBackend> backend;
  std::optional<load::LoadResult> result;
  json entry;
};

void loadThisRank(const Args& a, dist::Communicator& comm, RankLoad& rl) {
  const int size = comm.size();
  if (a.has("ep-rank")) throw std::invalid_argument("--distributed takes each rank's EP rank from its MPI rank: leave out --ep-rank");
  if (a.has("ep-size") && a.getInt("ep-size", 0) != size)
    throw std::invalid_argument("--ep-size " + a.get("ep-size") + " but the job has " + std::to_string(size) + " MPI ranks (one EP rank each)");
  if (a.has("free")) throw std::invalid_argument("--free is for the load of one process");
  auto opened = openCheckpoint(a.positional()[0]);
  if (!opened) throw std::runtime_error(opened.error().describe());
  rl.checkpoint = opened.value();
  const Checkpoint& c = *rl.checkpoint;
  const std::string device = rankDevice(a, comm.localRank());
  rl.entry["device"] = device;
  auto backend = load::makeBackend(device);
  if (!backend) throw std::runtime_error(backend.error().describe());
  rl.backend = std::move(backend.value());
  rl.options = loadOptionsOf(a, c, size);
  rl.options.epRank = comm.rank();
  Progress progress;  // rank 0 speaks for the job: one progress line, not N interleaved
  if (comm.rank() == 0) rl.options.progress = [&](const char* phase, uint64_t done, uint64_t total) { progress.update(phase, done, total); };
  auto r = load::loadCheckpoint(c, *rl.backend, rl.options);
  progress.finish();
  rl.options.progress = nullptr;
  if (!r) throw std::runtime_error(r.error().describe());
  rl.result = std::move(r.value());
  const json doc = loadJson(c, *rl.result);
  const load::Holdings held = load::heldBy(c, *rl.result->store);
  double seconds = 0, gbPerS = 0;
  for (const auto& p : doc["phases"]) {
    seconds += p["seconds"].get<double>();
    if (p["phase"] == "read+upload") gbPerS = p["gb_per_s"].get<double>();
  }
  rl.entry["device"] = doc["device"];
  rl.entry["experts"] = load::expertIdsOf(held);
  for (const char* k : {"resident", "predicted", "residency", "derived_bytes", "memory"}) rl.entry[k] = doc[k];
  rl.entry["deferred"] = doc["deferred"].size();
  rl.entry["derived_buffers"] = doc["derived"].size();
  rl.entry["seconds"] = seconds;
  rl.entry["gb_per_s"] = gbPerS;
  rl.entry["holdings"] = load::holdingsJson(held);
}

// "0-3,8,10-11": a rank's experts, short.
std::string idRanges(const json& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1].get<int64_t>() == ids[j].get<int64_t>() + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(ids[i].get<int64_t>()) + (j > i ? "-" + std::to_string(ids[j].get<int64_t>()) : "");
    i = j + 1;
  }
  return out.empty() ? "-" : out;
}

std::string reportText(const json& rep) {
  std::ostringstream o;
  o << "distributed load of " << rep["path"].get<std::string>() << ": " << rep["ep_size"] << " EP ranks on " << rep["hosts"].size() << " host"
    << (rep["hosts"].size() == 1 ? "" : "s") << "\n";
  for (const auto& r : rep["ranks"]) {
    o << "rank " << r["rank"] << "  " << r["host"].get<std::string>() << "  " << (r["device"].is_string() ? r["device"].get<std::string>() : "-") << "  ";
    if (!r["error"].is_null()) {
      o << "FAILED: " << r["error"].get<std::string>() << "\n";
      continue;
    }
    o << "experts " << idRanges(r["experts"]) << "  resident " << formatBytes(r["resident"]["bytes"].get<uint64_t>()) << " (predicted "
      << formatBytes(r["predicted"]["resident"].get<uint64_t>()) << ")  " << r["gb_per_s"].get<double>() << " GB/s\n";
  }
  const json& v = rep["coverage"];
  if (v.is_null()) {
    o << "coverage  not checked: rank 0 has no plan to check against\n";
  } else if (v["ok"].get<bool>()) {
    o << "coverage  ok: every routed expert on the ranks the placement gives it, every other tensor once on every rank\n";
  } else {
    auto experts = [&](const char* key, const char* what) {
      for (const auto& g : v[key])
        o << "coverage  rank " << g["rank"] << " " << what << " expert " << g["expert"] << " of layer " << g["layer"] << " (" << g["held_parts"] << " of "
          << g["expected_parts"] << " parts)\n";
    };
    experts("missing", "lacks");
    experts("duplicated", "holds too much of");
    for (const auto& g : v["tensors_missing"]) o << "coverage  rank " << g["rank"] << " lacks " << g["tensor"].get<std::string>() << "\n";
    for (const auto& g : v["tensors_duplicated"]) o << "coverage  rank " << g["rank"] << " holds " << g["tensor"].get<std::string>() << " " << g["held"] << " times\n";
    for (const auto& r : v["unchecked_ranks"]) o << "coverage  rank " << r << " not checked: its load failed\n";
    for (const auto& g : v["unplaced"]) o << "coverage  expert " << g["expert"] << " of layer " << g["layer"] << " is given to no rank by the placement\n";
  }
  const json& s = rep["summary"];
  o << "summary   " << formatBytes(s["resident_bytes"].get<uint64_t>()) << " resident over all ranks (predicted " << formatBytes(s["predicted_bytes"].get<uint64_t>())
    << "), " << s["failed_ranks"] << " failed, " << (s["ok"].get<bool>() ? "ok" : "NOT OK") << "\n";
  return o.str();
}

// Rank 0's report from every rank's entry, the coverage checked against rank 0's own plan.
json gatherReport(const Args& a, const RankLoad& mine, const std::vector<json>& entries) {
  json ranks = json::array();
  std::set<std::string> hosts;
  uint64_t resident = 0, predicted = 0;
  int failed = 0;
  std::vector<std::optional<load::Holdings>> held;
  for (json e : entries) {
    hosts.insert(e["host"].get<std::string>());
    if (!e["error"].is_null()) ++failed;
    else resident += e["resident"]["bytes"].get<uint64_t>(), predicted += e["predicted"]["resident"].get<uint64_t>();
    held.push_back(e.contains("holdings") ? std::optional(load::holdingsFromJson(e["holdings"])) : std::nullopt);
    e.erase("holdings");
    ranks.push_back(std::move(e));
  }
  json coverage = nullptr;
  if (mine.checkpoint && mine.result) {
    const Checkpoint& c = *mine.checkpoint;
    auto planned = plan::planCheckpoint(c, mine.options.plan);
    if (planned) {
      std::vector<load::Holdings> expected;
      for (const auto& rp : planned.value().ranks) expected.push_back(load::expectedOf(c, mine.options.plan, rp));
      coverage = load::coverageJson(load::checkCoverage(c, mine.options.plan.placement, expected, held));
    }
  }
  const bool ok = failed == 0 && !coverage.is_null() && coverage["ok"].get<bool>();
  return {{"schema", "weightscope.load-distributed/1"},
          {"path", a.positional()[0]},
          {"ep_size", entries.size()},
          {"hosts", json(std::vector<std::string>(hosts.begin(), hosts.end()))},
          {"ranks", ranks},
          {"coverage", coverage},
          {"summary", {{"ranks", entries.size()}, {"failed_ranks", failed}, {"resident_bytes", resident}, {"predicted_bytes", predicted},
                       {"coverage_ok", !coverage.is_null() && coverage["ok"].get<bool>()}, {"ok", ok}}}};
}

}  // namespace

int distributedLoad(const Args& a) {
  auto comm = joinOrReport("load");
  if (!comm) return kExitCannotRun;
  RankLoad mine;
  mine.entry = {{"rank", comm->rank()}, {"host", comm->host()}, {"local_rank", comm->localRank()}, {"device", nullptr}, {"error", nullptr}};
  try {
    loadThisRank(a, *comm, mine);
  } catch (const std::exception& e) {
    mine.entry["error"] = e.what();
    std::cerr << "weightscope load (rank " << comm->rank() << " on " << comm->host() << "): " << e.what() << "\n";
  }
  std::vector<json> entries;
  for (const std::string& s : comm->allGather(mine.entry.dump())) entries.push_back(json::parse(s));
  // Every part was resident at once; now each rank gives its device back.
  if (mine.result) mine.result->store->release();
  int code = kExitOk;
  if (comm->rank() == 0) {
    try {
      const json rep = gatherReport(a, mine, entries);
      if (a.has("report")) {
        AtomicFile f(a.get("report"));
        f.write(rep.dump(1) + "\n");
        f.commit();
      }
      if (a.has("json")) std::cout << rep.dump(1) << "\n";
      else std::cout << reportText(rep);
      code = rep["summary"]["ok"].get<bool>() ? kExitOk : kExitFindings;
    } catch (const std::exception& e) {  // the others wait for the verdict below: give them one
      std::cerr << "weightscope load: " << e.what() << "\n";
      code = kExitCannotRun;
    }
  }
  // Rank 0's verdict is every rank's exit code, so the launcher reports one answer.
  return std::stoi(comm->allGather(std::to_string(code))[0]);
}

}  // namespace ws::cli
