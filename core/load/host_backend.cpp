#include <cerrno>
#include <cstdlib>
#include <unistd.h>
#include <cstring>
#include <sys/mman.h>

#include "core/load/device_backend.h"
#include "core/numerics/kernel_threads.h"

namespace ws::load {

namespace {

constexpr uint64_t kAlignment = 256;  // what cudaMalloc guarantees; the host's pages exceed it

uint64_t mappedSize(uint64_t bytes) {
  static const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  return (std::max<uint64_t>(bytes, 1) + page - 1) / page * page;
}

// memcmp(p, p + 1, n - 1) == 0 says every byte equals the first (glibc's memcmp is vectorised).
bool allZero(const uint8_t* p, uint64_t n) { return n == 0 || (p[0] == 0 && std::memcmp(p, p + 1, n - 1) == 0); }

}  // namespace

HostBackend::~HostBackend() {
  for (auto& [id, b] : buffers_) ::munmap(b.ptr, mappedSize(b.bytes));
}

DeviceMemory HostBackend::memory() const {
  std::lock_guard lock(mu_);
  return {capacity_, capacity_ - taken_};
}

Result<DeviceBuffer> HostBackend::allocate(uint64_t bytes, const std::string& tag) {
  std::lock_guard lock(mu_);
  const uint64_t taken = (std::max<uint64_t>(bytes, 1) + rounding_ - 1) / rounding_ * rounding_;
  if (taken > capacity_ - taken_)
    return Error{ErrorCode::Io, "out of device memory allocating " + std::to_string(bytes) + " bytes (" + std::to_string(capacity_ - taken_) + " free)", {}, std::nullopt, tag};
  // Reserved lazily (MAP_NORESERVE): pages exist once written, and read as zero until then.
  void* p = ::mmap(nullptr, mappedSize(bytes), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return Error{ErrorCode::Io, "host allocation of " + std::to_string(bytes) + " bytes failed: " + std::strerror(errno), {}, std::nullopt, tag};
  DeviceBuffer b{next_++, p, bytes, kAlignment};
  buffers_[b.id] = b;
  live_ += bytes;
  taken_ += taken;
  return b;
}

void HostBackend::free(const DeviceBuffer& b) {
  std::lock_guard lock(mu_);
  auto it = buffers_.find(b.id);
  if (it == buffers_.end()) return;
  ::munmap(it->second.ptr, mappedSize(it->second.bytes));
  live_ -= it->second.bytes;
  taken_ -= (std::max<uint64_t>(it->second.bytes, 1) + rounding_ - 1) / rounding_ * rounding_;
  buffers_.erase(it);
}

Result<bool> HostBackend::upload(const DeviceBuffer& b, uint64_t offset, const void* src, uint64_t bytes, int) {
  if (!inBuffer(b, offset, bytes)) return Error{ErrorCode::Io, "upload past the end of a buffer", {}, std::nullopt, {}};
  uint8_t* dst = static_cast<uint8_t*>(b.ptr) + offset;
  // Zeros onto zeros change nothing; reading an unwritten page maps the shared zero page, so a
  // hole in a sparse file costs no memory here.
  if (allZero(static_cast<const uint8_t*>(src), bytes) && allZero(dst, bytes)) return true;
  std::memcpy(dst, src, bytes);
  return true;
}

Result<bool> HostBackend::copy(const DeviceBuffer& dst, uint64_t dstOffset, const DeviceBuffer& src, uint64_t srcOffset, uint64_t bytes) {
  if (!inBuffer(dst, dstOffset, bytes) || !inBuffer(src, srcOffset, bytes)) return Error{ErrorCode::Io, "copy past the end of a buffer", {}, std::nullopt, {}};
  std::memcpy(static_cast<uint8_t*>(dst.ptr) + dstOffset, static_cast<const uint8_t*>(src.ptr) + srcOffset, bytes);
  return true;
}

Result<bool> HostBackend::download(const DeviceBuffer& b, uint64_t offset, void* dst, uint64_t bytes) {
  if (!inBuffer(b, offset, bytes)) return Error{ErrorCode::Io, "download past the end of a buffer", {}, std::nullopt, {}};
  std::memcpy(dst, static_cast<const uint8_t*>(b.ptr) + offset, bytes);
  return true;
}

Result<bool> HostBackend::transpose(const DeviceBuffer& dst, const DeviceBuffer& src, uint64_t mats, uint64_t rows, uint64_t cols, uint32_t elemBytes) {
  const uint64_t bytes = mats * rows * cols * elemBytes;
  if (!inBuffer(dst, 0, bytes) || !inBuffer(src, 0, bytes)) return Error{ErrorCode::Io, "transpose past the end of a buffer", {}, std::nullopt, {}};
  const num::TransposeShape shape{mats, rows, cols};
  if (!num::emulateTranspose(static_cast<const uint8_t*>(src.ptr), static_cast<uint8_t*>(dst.ptr), shape, elemBytes, num::transposeGrid(shape)))
    return Error{ErrorCode::Usage, "transpose of " + std::to_string(elemBytes) + "-byte elements", {}, std::nullopt, {}};
  return true;
}

// The stand-in's memory is host memory: regions there or in the file's mapping read alike.
Result<bool> HostBackend::decodeBf16(const num::DecodeDesc& d, uint64_t firstRow, uint64_t rows, const DeviceBuffer& dst, uint64_t dstOffset, bool) {
  if (firstRow > d.rows || rows > d.rows - firstRow) return Error{ErrorCode::Usage, "row range past the end of the tensor", {}, std::nullopt, {}};
  if (!inBuffer(dst, dstOffset, rows * d.cols * 2)) return Error{ErrorCode::Io, "BF16 decode past the end of a buffer", {}, std::nullopt, {}};
  auto* out = reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(dst.ptr) + dstOffset);
  num::emulateDecode(d, firstRow, rows, out);  // the device's body over the device's grid
  return true;
}

void* HostBackend::allocateStaging(uint64_t bytes) { return std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096); }
void HostBackend::freeStaging(void* p) { std::free(p); }

uint64_t HostBackend::liveAllocations() const {
  std::lock_guard lock(mu_);
  return buffers_.size();
}

uint64_t HostBackend::liveBytes() const {
  std::lock_guard lock(mu_);
  return live_;
}

Result<DeviceBuffer> FaultyBackend::allocate(uint64_t bytes, const std::string& tag) {
  if (++count_ == failAt_) return Error{ErrorCode::Io, "injected allocation failure (allocation " + std::to_string(failAt_) + ")", {}, std::nullopt, tag};
  return inner_.allocate(bytes, tag);
}

}  // namespace ws::load
