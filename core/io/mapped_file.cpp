#include "core/io/mapped_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/io/open_regular.h"
#include "core/util/error.h"

namespace ws {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
  RegularFile rf = openRegularFile(path);
  int fd = rf.fd;
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->path_ = path;
  f->size_ = rf.size;
  if (f->size_ > 0) {
    void* p = ::mmap(nullptr, f->size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      fail(ErrorCode::Io, std::string("cannot map: ") + std::strerror(err), path);
    }
    f->data_ = static_cast<const uint8_t*>(p);
  }
  f->fd_ = fd;  // kept for readAt
  return f;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

void MappedFile::readAt(uint64_t offset, void* dst, uint64_t n) const {
  uint8_t* p = static_cast<uint8_t*>(dst);
  uint64_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd_, p + done, n - done, off_t(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) fail(ErrorCode::Io, r == 0 ? "file ended early" : std::string("read failed: ") + std::strerror(errno), path_, offset + done);
    done += uint64_t(r);
  }
}

bool MappedFile::cached(uint64_t offset) const {
  static const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t at = offset / page * page;
  unsigned char resident = 0;
  return data_ && offset < size_ && ::mincore(const_cast<uint8_t*>(data_) + at, 1, &resident) == 0 && (resident & 1);
}

void MappedFile::willNeed(uint64_t offset, uint64_t n) const {
  if (fd_ < 0 || offset >= size_ || !n) return;
  n = std::min(n, size_ - offset);
  // Advising pages already in the cache still looks each one up: 5% of a warm validate --values
  // (perf). A range whose first and last pages are cached was read whole, most likely; should
  // its middle be gone, the kernel's own read-ahead still follows the reads.
  if (cached(offset) && cached(offset + n - 1)) return;
  (void)::posix_fadvise(fd_, off_t(offset), off_t(n), POSIX_FADV_WILLNEED);
}

}  // namespace ws
