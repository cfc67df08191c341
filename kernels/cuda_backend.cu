#include "kernels/cuda_backend.h"

#include <cuda_runtime.h>

#include <map>
#include <mutex>

#include "core/load/backend_registry.h"
#include "core/numerics/device_dequant.h"

namespace ws::kernels {

namespace {

Error cudaError(cudaError_t e, const std::string& what, const std::string& tensor = {}) {
  return Error{ErrorCode::Io, what + ": " + cudaGetErrorString(e), {}, std::nullopt, tensor};
}

class CudaBackend : public load::DeviceBackend {
 public:
  CudaBackend(int index, int streams) : index_(index) {
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, index);
    name_ = "cuda:" + std::to_string(index) + " " + prop.name;
    cudaSetDevice(index);
    streams_.resize(size_t(streams));
    for (auto& s : streams_) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  }
  ~CudaBackend() override {
    cudaSetDevice(index_);
    for (auto& [id, b] : buffers_) cudaFree(b.ptr);
    for (auto& s : streams_) cudaStreamDestroy(s);
  }
  std::string name() const override { return name_; }
  bool isHost() const override { return false; }
  load::DeviceMemory memory() const override {
    cudaSetDevice(index_);
    size_t freeB = 0, total = 0;
    cudaMemGetInfo(&freeB, &total);
    return {uint64_t(total), uint64_t(freeB)};
  }
  // cudaMalloc hands out device memory in 2 MiB pages (large allocations are rounded up to them).
  uint64_t granularity() const override { return uint64_t(2) << 20; }
  // Lazy module loading of the derive kernels and the driver's own bookkeeping take a few MiB of
  // the free memory during a load; 64 MiB bounds it until the GPU proof records the measured figure.
  uint64_t residencyTolerance() const override { return uint64_t(64) << 20; }
  int streams() const override { return int(streams_.size()); }
  Result<load::DeviceBuffer> allocate(uint64_t bytes, const std::string& tag) override {
    cudaSetDevice(index_);
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, std::max<uint64_t>(bytes, 1));
    if (e != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free error state of a failed allocation
      return cudaError(e, "cudaMalloc of " + std::to_string(bytes) + " bytes failed", tag);
    }
    std::lock_guard lock(mu_);
    load::DeviceBuffer b{next_++, p, bytes, 256};
    buffers_[b.id] = b;
    live_ += bytes;
    return b;
  }
  void free(const load::DeviceBuffer& b) override {
    std::lock_guard lock(mu_);
    auto it = buffers_.find(b.id);
    if (it == buffers_.end()) return;
    cudaSetDevice(index_);
    cudaFree(it->second.ptr);
    live_ -= it->second.bytes;
    buffers_.erase(it);
  }
  Result<bool> upload(const load::DeviceBuffer& b, uint64_t offset, const void* src, uint64_t bytes, int stream) override {
    if (!load::inBuffer(b, offset, bytes)) return Error{ErrorCode::Io, "upload past the end of a buffer", {}, std::nullopt, {}};
    cudaSetDevice(index_);
    cudaError_t e = cudaMemcpyAsync(static_cast<uint8_t*>(b.ptr) + offset, src, bytes, cudaMemcpyHostToDevice, streams_[size_t(stream) % streams_.size()]);
    if (e != cudaSuccess) return cudaError(e, "cudaMemcpyAsync failed");
    return true;
  }
  Result<bool> copy(const load::DeviceBuffer& d, uint64_t dOff, const load::DeviceBuffer& s, uint64_t sOff, uint64_t bytes) override {
    if (!load::inBuffer(d, dOff, bytes) || !load::inBuffer(s, sOff, bytes)) return Error{ErrorCode::Io, "copy past the end of a buffer", {}, std::nullopt, {}};
    cudaSetDevice(index_);
    cudaError_t e = cudaMemcpy(static_cast<uint8_t*>(d.ptr) + dOff, static_cast<const uint8_t*>(s.ptr) + sOff, bytes, cudaMemcpyDeviceToDevice);
    if (e != cudaSuccess) return cudaError(e, "device copy failed");
    return true;
  }
  Result<bool> download(const load::DeviceBuffer& b, uint64_t offset, void* dst, uint64_t bytes) override {
    if (!load::inBuffer(b, offset, bytes)) return Error{ErrorCode::Io, "download past the end of a buffer", {}, std::nullopt, {}};
    cudaSetDevice(index_);
    cudaError_t e = cudaMemcpy(dst, static_cast<const uint8_t*>(b.ptr) + offset, bytes, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return cudaError(e, "device-to-host copy failed");
    return true;
  }
  Result<bool> synchronize(int stream) override {
    cudaSetDevice(index_);  // reader threads start on device 0 otherwise
    cudaError_t e = cudaStreamSynchronize(streams_[size_t(stream) % streams_.size()]);
    if (e != cudaSuccess) return cudaError(e, "stream synchronize failed");
    return true;
  }
  Result<bool> transpose(const load::DeviceBuffer& dst, const load::DeviceBuffer& src, uint64_t mats, uint64_t rows, uint64_t cols, uint32_t elemBytes) override {
    const uint64_t bytes = mats * rows * cols * elemBytes;
    if (!load::inBuffer(dst, 0, bytes) || !load::inBuffer(src, 0, bytes)) return Error{ErrorCode::Io, "transpose past the end of a buffer", {}, std::nullopt, {}};
    cudaSetDevice(index_);
    return transposeOnDevice(static_cast<const uint8_t*>(src.ptr), static_cast<uint8_t*>(dst.ptr), mats, rows, cols, elemBytes);
  }
  Result<bool> decodeBf16(const num::DecodeDesc& d, uint64_t firstRow, uint64_t rows, const load::DeviceBuffer& dst, uint64_t dstOffset, bool onDevice) override {
    if (!load::inBuffer(dst, dstOffset, rows * d.cols * 2)) return Error{ErrorCode::Io, "BF16 decode past the end of a buffer", {}, std::nullopt, {}};
    cudaSetDevice(index_);
    return decodeBf16Into(d, firstRow, rows, reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(dst.ptr) + dstOffset), onDevice);
  }
  void* allocateStaging(uint64_t bytes) override {
    cudaSetDevice(index_);  // the reader threads' first call: their context on this device, not 0
    void* p = nullptr;
    if (cudaMallocHost(&p, bytes) != cudaSuccess) return nullptr;
    return p;
  }
  void freeStaging(void* p) override { cudaFreeHost(p); }
  uint64_t liveAllocations() const override {
    std::lock_guard lock(mu_);
    return buffers_.size();
  }
  uint64_t liveBytes() const override {
    std::lock_guard lock(mu_);
    return live_;
  }

 private:
  int index_;
  std::string name_;
  std::vector<cudaStream_t> streams_;
  mutable std::mutex mu_;
  uint64_t next_ = 1, live_ = 0;
  std::map<uint64_t, load::DeviceBuffer> buffers_;
};

}  // namespace

bool deviceAvailable(int index, std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string("no CUDA device: ") + cudaGetErrorString(e);
    cudaGetLastError();
    return false;
  }
  if (index < 0 || index >= n) {
    if (why) *why = "no CUDA device " + std::to_string(index) + " (" + std::to_string(n) + " present)";
    return false;
  }
  return true;
}

Result<int> computeCapability(int index) {
  int major = 0, minor = 0;
  if (cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, index); e != cudaSuccess) return cudaError(e, "cudaDeviceGetAttribute");
  if (cudaError_t e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, index); e != cudaSuccess) return cudaError(e, "cudaDeviceGetAttribute");
  return major * 10 + minor;
}

Result<std::unique_ptr<load::DeviceBackend>> makeCudaBackend(int index) {
  std::string why;
  if (!deviceAvailable(index, &why)) return Error{ErrorCode::Usage, why, {}, std::nullopt, {}};
  // Before any load measures the free memory: the kernels' local memory is the context's, not a load's.
  if (auto r = reserveKernelLocalMemory(index); !r) return r.error();
  return std::unique_ptr<load::DeviceBackend>(std::make_unique<CudaBackend>(index, 4));
}

void registerCuda() {
  load::registerCudaBackend([](int index) { return makeCudaBackend(index); });
  // Asking for devices initialises CUDA: only when a device dequantizer is first wanted.
  num::setDeviceDequantProbe([] {
    if (deviceAvailable(0))
      num::registerDeviceDequant([](const Checkpoint& c, uint32_t logical, uint64_t firstRow, uint64_t rows) {
        return dequantizeOnDevice(c, logical, firstRow, rows, 0);
      }, "cuda:0");
  });
}

}  // namespace ws::kernels
