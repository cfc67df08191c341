// What a load put on a device: one allocation per tensor, the derived buffers built from them,
// and the deferred tensors left on disk. It owns every allocation: free_matching() and teardown
// give them back, so live allocations return to zero.
#pragma once

#include <string>
#include <vector>

#include "core/load/device_backend.h"
#include "core/plan/ep_plan.h"

namespace ws::load {

struct ResidentTensor {
  std::string name;
  plan::Category category = plan::Other;
  DeviceBuffer buffer;
};

struct DerivedBuffer {
  std::string name;
  std::string kind;  // fused-gate-up, transpose, bf16
  std::vector<std::string> sources;
  DeviceBuffer buffer;
};

struct DeferredTensor {
  std::string name, file, reason;
  uint64_t offset = 0, bytes = 0;
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

  void add(ResidentTensor t) { tensors_.push_back(std::move(t)); }
  void addDerived(DerivedBuffer d) { derived_.push_back(std::move(d)); }
  void defer(DeferredTensor d) { deferred_.push_back(std::move(d)); }
  // Frees every tensor (and derived buffer) whose name matches the glob: (count, bytes).
  std::pair<uint64_t, uint64_t> freeMatching(const std::string& glob);
  // Frees everything; safe to call twice.
  void release();

 private:
  DeviceBackend& backend_;
  std::vector<ResidentTensor> tensors_;
  std::vector<DerivedBuffer> derived_;
  std::vector<DeferredTensor> deferred_;
};

}  // namespace ws::load
