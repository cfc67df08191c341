// The full load: stream a checkpoint, or one EP rank of it, onto a device through a ring of
// staging buffers filled by reader threads (pread) and uploaded on several streams; one
// allocation per tensor; deferred tensors recorded; derived buffers built; a residency report
// with the planner's prediction beside the measurement. Failure or cancel frees everything.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/load/weight_store.h"
#include "core/model/checkpoint.h"
#include "core/plan/ep_plan.h"

namespace ws::load {

// Half the cores, at least 2 and at most 8.
unsigned defaultReaders();

struct LoadOptions {
  plan::PlanOptions plan;            // placement (EP size), skips, defers, derive flags, reserve
  int epRank = 0;
  bool evictPageCache = false;       // posix_fadvise(DONTNEED) after each range is read
  // Sized for a GPU server: pinned host-to-device copies run at ~50 GB/s, a reader of the page
  // cache at ~8-12 GB/s, so several readers keep the copy engines busy. Each reader stages in a ring
  // of buffers no larger than the largest chunk (a small checkpoint does not pin 32 MiB buffers).
  unsigned readers = defaultReaders();  // reader threads (--readers)
  unsigned buffersPerReader = 3;        // staging ring depth per reader
  uint64_t stagingBytes = 32 << 20;     // bytes per staging buffer (--staging)
  bool preflight = true;             // refuse when the predicted peak exceeds free memory
  // Read every uploaded byte back from the device and compare it with the file (--verify): a
  // mismatch fails the load naming the tensor and the file offset.
  bool verify = false;
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(const char* phase, uint64_t done, uint64_t total)> progress;
};

struct PhaseTiming {
  std::string phase;
  double seconds = 0;
  uint64_t bytes = 0;
};

struct LoadReport {
  std::string device;
  int epRank = 0, epSize = 1;
  DeviceMemory before, after;
  std::array<uint64_t, plan::kCategories> bytes{};  // resident by category (deferred: on disk)
  uint64_t resident = 0, derivedBytes = 0, scaleBytes = 0;
  uint64_t verifiedBytes = 0;        // uploaded bytes read back and found equal to the file (--verify)
  plan::RankPlan predicted;          // the planner's numbers for this rank
  int64_t residentDifference = 0;    // measured - predicted
  int64_t derivedDifference = 0;
  std::vector<PhaseTiming> phases;
  std::vector<std::string> notes;
};

struct LoadResult {
  std::unique_ptr<WeightStore> store;
  LoadReport report;
};

Result<LoadResult> loadCheckpoint(const Checkpoint& c, DeviceBackend& device, const LoadOptions& opt);

}  // namespace ws::load
