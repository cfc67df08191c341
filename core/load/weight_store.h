// What a load put on a device: a few arenas, the tensors and derived buffers as views into them,
// and the deferred tensors left on disk. It owns every arena: an arena goes back to the device
// when its last view is freed (freeMatching) and at teardown, so live allocations return to zero.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/load/arena.h"
#include "core/load/device_backend.h"
#include "core/plan/ep_plan.h"

namespace ws::load {

// A tensor's (or derived buffer's) place: its bytes inside an arena allocation.
struct View {
  DeviceBuffer buffer;  // ptr and bytes of the view itself (id: the arena's allocation)
  uint32_t arena = ArenaLayout::kNoArena;
};

struct ResidentTensor {
  std::string name;
  plan::Category category = plan::Other;
  DeviceBuffer buffer;
  uint32_t arena = ArenaLayout::kNoArena;
  // A routed expert tensor: the logical expert of each part the loader read into it, in order (a
  // per-expert tensor: its expert, once per EPLB replica; a fused or stacked one: the expert of
  // each slice, from the slice's offset; held whole: every expert). Empty for the rest. What the
  // expert coverage check of a distributed load counts (core/load/expert_coverage.h).
  std::vector<int64_t> experts;
};

struct DerivedBuffer {
  std::string name;
  std::string kind;  // fused-gate-up, transpose, bf16
  std::vector<std::string> sources;
  DeviceBuffer buffer;
  uint32_t arena = ArenaLayout::kNoArena;
};

struct DeferredTensor {
  std::string name, file, reason;
  uint64_t offset = 0, bytes = 0;
};

// What freeMatching gave back: the views dropped and their bytes, and the arenas that held
// nothing else any more, returned to the device whole.
struct Freed {
  uint64_t views = 0, bytes = 0, arenas = 0, arenaBytes = 0;
};

class WeightStore {
 public:
  explicit WeightStore(DeviceBackend& backend) : backend_(backend) {}
  ~WeightStore() { release(); }
  WeightStore(const WeightStore&) = delete;
  WeightStore& operator=(const WeightStore&) = delete;

  const std::vector<ResidentTensor>& tensors() const { return tensors_; }
  const std::vector<DerivedBuffer>& derived() const { return derived_; }
  const std::vector<DeferredTensor>& deferred() const { return deferred_; }
  const ResidentTensor* find(const std::string& name) const;
  uint64_t residentBytes() const;  // tensors and derived buffers still held
  uint64_t arenasHeld() const;     // arena allocations still live
  uint64_t arenaBytesHeld() const;

  // Allocates the arenas of a layout, one by one; returns the view of each slot, in the layout's
  // order. A failed allocation's error names `nameOf(k)` for arena k (its first buffer); the
  // arenas already allocated stay the store's, so release() frees them.
  Result<std::vector<View>> allocate(const ArenaLayout& layout, const std::function<std::string(uint32_t)>& nameOf);
  void add(ResidentTensor t);
  void addDerived(DerivedBuffer d);
  void defer(DeferredTensor d) { deferred_.push_back(std::move(d)); }
  // Drops every tensor (and derived buffer) whose name matches the glob; an arena left with no
  // views goes back to the device.
  Freed freeMatching(const std::string& glob);
  // Frees everything; safe to call twice.
  void release();

 private:
  struct Arena {
    DeviceBuffer buffer;
    uint64_t views = 0;  // live views; 0 after its last is dropped: freed
  };
  void dropView(uint32_t arena, Freed& f);

  DeviceBackend& backend_;
  std::vector<Arena> arenas_;
  std::vector<ResidentTensor> tensors_;
  std::vector<DerivedBuffer> derived_;
  std::vector<DeferredTensor> deferred_;
};

}  // namespace ws::load
