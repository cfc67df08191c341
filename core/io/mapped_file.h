// A read-only memory map of a whole file. Checkpoints are never written: the file is opened
// O_RDONLY and mapped PROT_READ, so a bug here cannot corrupt a user's weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace ws {

class MappedFile {
 public:
  // Throws CoreError(Io) naming the path when the file cannot be opened or mapped.
  static std::shared_ptr<const MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, static_cast<size_t>(size_)}; }
  // Reads n bytes at offset with pread: for a few scattered bytes (weight_shape tensors) this
  // avoids the page faults - and the readahead each brings - that touching the mapping costs.
  // Throws CoreError(Io) naming the file and offset.
  void readAt(uint64_t offset, void* dst, uint64_t n) const;
  // Asks the kernel to start reading [offset, offset + n) into the page cache now, without
  // waiting for it (POSIX_FADV_WILLNEED): a scan advises what it reads next, so the disk works
  // while it decodes what it has. A hint: failures are ignored. Nothing when the range's first
  // and last pages are already cached.
  void willNeed(uint64_t offset, uint64_t n) const;
  // True when the page holding byte `offset` is in the page cache (mincore on the mapping).
  bool cached(uint64_t offset) const;

 private:
  friend class MappedReadGuard;  // maps the file back over a page it faulted on
  MappedFile() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  int fd_ = -1;
};

}  // namespace ws
