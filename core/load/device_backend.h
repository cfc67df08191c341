// Where a load puts tensors: allocate, upload (asynchronously, per stream), free, memory info, and
// the kernels that build derived buffers on the device. The CUDA backend lives in kernels/; the
// host backend stands in for a device in host memory (its own bookkeeping, the same kernel bodies
// run over the same launch grid) so the whole loader runs and is tested without a GPU;
// FaultyBackend injects failures.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/numerics/decode_desc.h"
#include "core/util/error.h"

namespace ws::load {

struct DeviceMemory {
  uint64_t total = 0, free = 0;
};

struct DeviceBuffer {
  uint64_t id = 0;
  void* ptr = nullptr;
  uint64_t bytes = 0;
  uint64_t alignment = 0;
};

// Whether [offset, offset + bytes) lies inside the buffer (checked without overflowing): every
// backend's upload and copy refuse anything else.
inline bool inBuffer(const DeviceBuffer& b, uint64_t offset, uint64_t bytes) { return offset <= b.bytes && bytes <= b.bytes - offset; }

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual std::string name() const = 0;  // "host", "cuda:0 NVIDIA H200"
  virtual bool isHost() const = 0;
  // Free and total memory as the device reports it (CUDA: cudaMemGetInfo; the host stand-in: its
  // own bookkeeping, which is not a measurement and is never called one).
  virtual DeviceMemory memory() const = 0;
  // Every allocation takes a multiple of this many bytes of device memory: what the footprint
  // prediction rounds each arena to.
  virtual uint64_t granularity() const = 0;
  // How far the free memory may move during a load beyond the allocations themselves (driver
  // state, lazily loaded kernel modules) before a difference from the prediction is a mismatch.
  virtual uint64_t residencyTolerance() const = 0;
  virtual int streams() const = 0;
  virtual Result<DeviceBuffer> allocate(uint64_t bytes, const std::string& tag) = 0;
  virtual void free(const DeviceBuffer& b) = 0;
  // Copies `bytes` host bytes into b at offset on `stream`; the source must stay valid until
  // synchronize(stream) returns.
  virtual Result<bool> upload(const DeviceBuffer& b, uint64_t offset, const void* src, uint64_t bytes, int stream) = 0;
  virtual Result<bool> copy(const DeviceBuffer& dst, uint64_t dstOffset, const DeviceBuffer& src, uint64_t srcOffset, uint64_t bytes) = 0;
  // Copies `bytes` of b at offset back to host memory, synchronously (what --verify reads back).
  virtual Result<bool> download(const DeviceBuffer& b, uint64_t offset, void* dst, uint64_t bytes) = 0;
  virtual Result<bool> synchronize(int stream) = 0;
  // Derived buffers, built on the device by the kernel bodies of core/numerics/kernel_threads.h:
  // `mats` row-major [rows, cols] matrices of src transposed into dst; rows [firstRow, firstRow +
  // rows) of a tensor's description as BF16 into dst at dstOffset - its regions in this backend's
  // memory already (onDevice: the load's uploaded copies, load::onUploadedBytes), or in host
  // memory, staged as the kernels need them. Both synchronous, bounds-checked like upload and copy.
  virtual Result<bool> transpose(const DeviceBuffer& dst, const DeviceBuffer& src, uint64_t mats, uint64_t rows, uint64_t cols, uint32_t elemBytes) = 0;
  virtual Result<bool> decodeBf16(const num::DecodeDesc& d, uint64_t firstRow, uint64_t rows, const DeviceBuffer& dst, uint64_t dstOffset, bool onDevice) = 0;
  // Host memory to stage reads in (pinned on CUDA).
  virtual void* allocateStaging(uint64_t bytes) = 0;
  virtual void freeStaging(void* p) = 0;
  virtual uint64_t liveAllocations() const = 0;
  virtual uint64_t liveBytes() const = 0;
};

// Host memory standing in for a device: same bookkeeping (each allocation takes `rounding` bytes
// of the stand-in's capacity per started multiple), optional capacity to test budgets or to stand
// in for a named GPU. Allocations are fresh anonymous mappings, zero until written, and an upload
// of zeros onto zeros writes nothing: a checkpoint written sparse (holes) loads on the stand-in
// without the memory its size would take, byte-exact all the same.
class HostBackend : public DeviceBackend {
 public:
  explicit HostBackend(uint64_t capacity = UINT64_MAX / 2, int streams = 4, uint64_t rounding = 256, std::string name = "host")
      : capacity_(capacity), streams_(streams), rounding_(rounding), name_(std::move(name)) {}
  ~HostBackend() override;
  std::string name() const override { return name_; }
  bool isHost() const override { return true; }
  DeviceMemory memory() const override;
  uint64_t granularity() const override { return rounding_; }
  uint64_t residencyTolerance() const override { return 0; }  // nothing else moves its bookkeeping
  int streams() const override { return streams_; }
  Result<DeviceBuffer> allocate(uint64_t bytes, const std::string& tag) override;
  void free(const DeviceBuffer& b) override;
  Result<bool> upload(const DeviceBuffer& b, uint64_t offset, const void* src, uint64_t bytes, int stream) override;
  Result<bool> copy(const DeviceBuffer& dst, uint64_t dstOffset, const DeviceBuffer& src, uint64_t srcOffset, uint64_t bytes) override;
  Result<bool> download(const DeviceBuffer& b, uint64_t offset, void* dst, uint64_t bytes) override;
  Result<bool> synchronize(int) override { return true; }
  Result<bool> transpose(const DeviceBuffer& dst, const DeviceBuffer& src, uint64_t mats, uint64_t rows, uint64_t cols, uint32_t elemBytes) override;
  Result<bool> decodeBf16(const num::DecodeDesc& d, uint64_t firstRow, uint64_t rows, const DeviceBuffer& dst, uint64_t dstOffset, bool onDevice) override;
  void* allocateStaging(uint64_t bytes) override;
  void freeStaging(void* p) override;
  uint64_t liveAllocations() const override;
  uint64_t liveBytes() const override;

 private:
  mutable std::mutex mu_;
  uint64_t capacity_;
  int streams_;
  uint64_t rounding_;
  std::string name_;
  uint64_t next_ = 1, live_ = 0, taken_ = 0;  // taken_: capacity used, allocations rounded up
  std::map<uint64_t, DeviceBuffer> buffers_;
};

// Passes every call to another backend: the base of the wrappers that change one behaviour of a
// real backend (FaultyBackend here; the GPU test's allocator that takes more than it is asked for).
class ForwardingBackend : public DeviceBackend {
 public:
  explicit ForwardingBackend(DeviceBackend& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  bool isHost() const override { return inner_.isHost(); }
  DeviceMemory memory() const override { return inner_.memory(); }
  uint64_t granularity() const override { return inner_.granularity(); }
  uint64_t residencyTolerance() const override { return inner_.residencyTolerance(); }
  int streams() const override { return inner_.streams(); }
  Result<DeviceBuffer> allocate(uint64_t bytes, const std::string& tag) override { return inner_.allocate(bytes, tag); }
  void free(const DeviceBuffer& b) override { inner_.free(b); }
  Result<bool> upload(const DeviceBuffer& b, uint64_t o, const void* s, uint64_t n, int st) override { return inner_.upload(b, o, s, n, st); }
  Result<bool> copy(const DeviceBuffer& d, uint64_t a, const DeviceBuffer& s, uint64_t b, uint64_t n) override { return inner_.copy(d, a, s, b, n); }
  Result<bool> download(const DeviceBuffer& b, uint64_t o, void* d, uint64_t n) override { return inner_.download(b, o, d, n); }
  Result<bool> synchronize(int s) override { return inner_.synchronize(s); }
  Result<bool> transpose(const DeviceBuffer& d, const DeviceBuffer& s, uint64_t m, uint64_t r, uint64_t c, uint32_t e) override { return inner_.transpose(d, s, m, r, c, e); }
  Result<bool> decodeBf16(const num::DecodeDesc& d, uint64_t f, uint64_t r, const DeviceBuffer& b, uint64_t o, bool dev) override { return inner_.decodeBf16(d, f, r, b, o, dev); }
  void* allocateStaging(uint64_t n) override { return inner_.allocateStaging(n); }
  void freeStaging(void* p) override { inner_.freeStaging(p); }
  uint64_t liveAllocations() const override { return inner_.liveAllocations(); }
  uint64_t liveBytes() const override { return inner_.liveBytes(); }

 protected:
  DeviceBackend& inner_;
};

// Wraps a backend and fails the k-th allocation (1-based), or every allocation from then on.
class FaultyBackend : public ForwardingBackend {
 public:
  FaultyBackend(DeviceBackend& inner, uint64_t failAllocation) : ForwardingBackend(inner), failAt_(failAllocation) {}
  Result<DeviceBuffer> allocate(uint64_t bytes, const std::string& tag) override;

 private:
  uint64_t failAt_;
  std::atomic<uint64_t> count_{0};
};

// The backend for "host" (the machine's memory), "host:SIZE" or "host:DEVICE" (a stand-in with a
// GPU's capacity: "host:H200-141GB", "host:80GiB"), "cuda" or "cuda:N" (CUDA only when built with
// it and a device exists).
Result<std::unique_ptr<DeviceBackend>> makeBackend(const std::string& device);

}  // namespace ws::load
