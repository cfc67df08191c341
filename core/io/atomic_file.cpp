#include "core/io/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util/error.h"

namespace ws {

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp-XXXXXX") {
  fd_ = ::mkstemp(tmp_.data());
  if (fd_ < 0) fail(ErrorCode::Io, std::string("cannot create a file here: ") + std::strerror(errno), path_);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void writeAll(int fd, const void* data, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(ErrorCode::Io, std::string("write failed: ") + std::strerror(errno), path);
    }
    p += w;
    n -= size_t(w);
  }
}

void AtomicFile::write(const void* data, size_t n) { writeAll(fd_, data, n, path_); }

void AtomicFile::commit() {
  ::fchmod(fd_, 0644);
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    fd_ = -1;
    ::unlink(tmp_.c_str());
    fail(ErrorCode::Io, std::string("cannot finish writing: ") + std::strerror(errno), path_);
  }
  fd_ = -1;
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp_.c_str());
    fail(ErrorCode::Io, std::string("cannot rename into place: ") + std::strerror(err), path_);
  }
}

}  // namespace ws
