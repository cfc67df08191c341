// The full load: stream a checkpoint, or one EP rank of it, onto a device through a ring of
// staging buffers filled by reader threads (pread) and uploaded on several streams, into a few
// arenas (tensors are views into them); deferred tensors recorded; derived buffers built on the
// device by its kernels; a residency report with the prediction beside what the device and the
// readers measured (docs/load.md). Failure or cancel frees everything.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/load/arena.h"
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
  uint64_t arenaBytes = kArenaBytes;   // an arena closes past this size (tests make it small)
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

// The device's own account of the load beside the prediction. The prediction is the arena layout
// rounded to the allocator's granularity; the measurement is the fall in the device's free memory
// (CUDA: cudaMemGetInfo) - something that can disagree with it. The host stand-in's "free memory"
// is its own bookkeeping: reported, and never called measured.
struct Residency {
  bool measured = false;             // the figure comes from the device, not a stand-in
  std::string source;                // "cudaMemGetInfo", "host stand-in bookkeeping"
  uint64_t arenas = 0;               // allocations made (tensors and derived buffers)
  uint64_t reserved = 0;             // bytes the arenas asked the allocator for
  uint64_t slack = 0;                // of which alignment padding
  uint64_t granularity = 0;          // the allocator rounds each allocation to this
  uint64_t predictedFootprint = 0;   // the arenas rounded to the granularity
  int64_t used = 0;                  // free memory before - after
  int64_t difference = 0;            // used - predictedFootprint
  uint64_t tolerance = 0;            // how far free memory may move besides the allocations
  bool mismatch = false;             // |difference| > tolerance, or bytes read != predicted resident
};

// After --evict-page-cache: the loaded file ranges still in the page cache (mincore on a fresh
// mapping), pages rounded outwards.
struct PageCacheCheck {
  bool checked = false;
  uint64_t bytes = 0, cached = 0;
};

struct LoadReport {
  std::string device;
  std::string runtime;               // whose residency rules (--runtime)
  int epRank = 0, epSize = 1;
  DeviceMemory before, after;
  // Bytes the readers read from the files and uploaded, by category (counted from what pread
  // returned); Deferred: the deferred tensors' share, left on disk.
  std::array<uint64_t, plan::kCategories> bytes{};
  uint64_t resident = 0, derivedBytes = 0, scaleBytes = 0;
  uint64_t verifiedBytes = 0;        // uploaded bytes read back and found equal to the file (--verify)
  uint64_t convertedBytes = 0;       // F16 uploaded as BF16 (the runtime's rule)
  uint64_t kvCacheScales = 0;        // *.k_scale / *.v_scale tensors held
  // BF16 twins' row ranges decoded from the bytes the load had uploaded, and those staged from the
  // file again (a member not held as it is in the file: converted at load, KTransformers' parts).
  uint64_t bf16FromUploaded = 0, bf16Staged = 0;
  plan::RankPlan predicted;          // the planner's numbers for this rank
  int64_t residentDifference = 0;    // bytes read - predicted resident
  // How the reads ran: reader threads, bytes per staging buffer, and pread calls (each tensor's
  // range cut at the staging size).
  unsigned readers = 0;
  uint64_t stagingBytes = 0, reads = 0;
  Residency residency;
  PageCacheCheck pageCache;
  std::vector<PhaseTiming> phases;
  std::vector<std::string> notes;
};

// The WS-L002 message when the load's residency disagrees with its prediction; empty when it agrees.
std::string residencyMismatch(const LoadReport& r);

struct LoadResult {
  std::unique_ptr<WeightStore> store;
  LoadReport report;
};

Result<LoadResult> loadCheckpoint(const Checkpoint& c, DeviceBackend& device, const LoadOptions& opt);

}  // namespace ws::load
