// The validation engine: runs the rules (core/validate/rules.h) over a checkpoint and returns
// every finding with the tensor, file and offset at fault. Checkpoints are opened read-only and
// tolerantly, so a damaged file becomes a finding instead of stopping the run.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/dist/communicator.h"
#include "core/formats/remote_open.h"
#include "core/load/device_backend.h"
#include "core/model/checkpoint.h"
#include "core/numerics/scale_stats.h"
#include "core/plan/placement.h"
#include "core/plan/residency_rules.h"
#include "core/validate/engines/engine_layout.h"
#include "core/validate/expert_health.h"
#include "core/validate/finding.h"

namespace ws::val {

struct ValidateOptions {
  std::set<std::string> only;  // rule codes or families to run; empty: all
  std::set<std::string> skip;  // rule codes or families not to run
  // Called between units of work with bytes read so far and the bytes the value rules will read;
  // returning false cancels (the run then fails with "cancelled").
  std::function<bool(const char* stage, uint64_t done, uint64_t total)> progress;
  unsigned threads = 0;        // 0: all cores
  // --full-load: load the checkpoint (one EP rank of it) and report residency findings.
  bool fullLoad = false;
  std::string device = "host";
  // Builds the backend named by `device` (tests put in a stand-in whose allocator misbehaves).
  std::function<Result<std::unique_ptr<load::DeviceBackend>>(const std::string&)> makeBackend = load::makeBackend;
  int epSize = 1, epRank = 0;
  plan::PlacementSpec placement;
  const plan::ResidencyRules* residency = &plan::defaultResidencyRules();  // how --full-load decides residency
  // --against REF: match every tensor with the reference checkpoint (any format), dequantize both
  // and report what is missing, reshaped, or moved more than maxRelError (when >= 0).
  // --runtime NAME (core/validate/runtimes.h): the runtime the checkpoint is meant for; its
  // refusals are errors. Empty: each runtime rule says which runtime would refuse what.
  std::string runtime;
  // --tp / --dp / --ep / --gpu: the layout and GPU a serving engine (--runtime vllm|sglang) is
  // held to (core/validate/engines); gpu resolved to its compute capability by validatePath.
  engines::EngineLayout layout;
  std::string against;
  double maxRelError = -1;
  // --base PATH: a LoRA adapter's factors checked against the base model's modules (WS-A003).
  std::string base;
  // --hub LOCATION (hf://ORG/REPO[@REV]; "auto": the Hub cache snapshot the path is in): every
  // local file held to the Hub's record (core/validate/hub_rules.h), which validatePath fetches
  // into hubRecord.
  std::string hub;
  std::shared_ptr<const HubRecord> hubRecord;
  // --distributed: the value rules' tensors are shared out by bytes over this job's ranks, and
  // every rank ends with the whole report (core/validate/value_shares.h). Null: one process.
  dist::Communicator* comm = nullptr;
};

struct ValidationReport {
  std::string path;
  std::shared_ptr<const Checkpoint> checkpoint;  // what could be opened
  std::vector<Finding> findings;                 // errors first, then warnings, then infos
  std::vector<std::string> rulesRun;             // codes
  std::map<std::string, uint64_t> bytesReadByFamily;
  // --distributed: the bytes each rank read in each value pass ("values (scales)", "values
  // (weights)"), in rank order: how evenly the work was shared.
  std::map<std::string, std::vector<uint64_t>> bytesReadByRank;
  // --distributed: what the kernel counted each rank reading with read/pread during its value pass
  // (process_io.h), in rank order, -1 where it could not say: measured beside the claims above,
  // which it equals where every byte is read with pread (scales, packed codes) and falls short of
  // by what is read through the mapping (plain float weights).
  std::vector<int64_t> kernelBytesReadByRank;
  num::ScaleReport scalesByLayer;                // for the HTML report's histograms
  // The value pass's sampled statistics of each routed expert (WS-V015 / WS-V016's samples), for
  // the Experts tab's health maps and the JSON report; empty where those rules did not run.
  std::vector<ExpertHealthCell> expertHealth;
  // --runtime vllm|sglang: "vLLM 0.11.0, TP 8 on H200-141GB (SM 9.0): loads" - the report's
  // first line (engines::verdictLine); empty for other runs.
  std::string verdict;
  double seconds = 0;

  size_t count(Severity s) const;
};

// Returns an Error only when nothing can be validated (missing path, not a checkpoint, bad
// options); every problem inside the checkpoint is a finding.
Result<ValidationReport> validatePath(const std::string& path, const ValidateOptions& opt);

// Validates an already opened checkpoint (its Checkpoint::issues become integrity findings).
ValidationReport validateCheckpoint(std::shared_ptr<const Checkpoint> c, const ValidateOptions& opt);

// What opening recorded (Checkpoint::issues) as validate's integrity findings: what `inspect`
// lists for a damaged or incomplete checkpoint.
std::vector<Finding> openingFindings(const Checkpoint& c);

// True when `code` is selected by the options (by code or by family).
bool ruleEnabled(const ValidateOptions& opt, const std::string& code);

}  // namespace ws::val
