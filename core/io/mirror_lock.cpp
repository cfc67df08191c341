#include "core/io/mirror_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/util/error.h"

namespace ws {

namespace {

int openLockFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) fail(ErrorCode::Io, std::string("cannot open the mirror's lock file: ") + std::strerror(errno), path);
  return fd;
}

}  // namespace

std::unique_ptr<MirrorLock> MirrorLock::acquire(const std::string& path, const std::atomic<bool>* cancel) {
  std::unique_ptr<MirrorLock> lock(new MirrorLock(openLockFile(path)));
  if (::flock(lock->fd_, LOCK_EX | LOCK_NB) == 0) {
    lock->alone_ = true;
    return lock;
  }
  // Someone uses it: share it, once whoever holds it alone (making the mirror) has let go.
  // Polled rather than blocking, so that a cancel is heard.
  while (::flock(lock->fd_, LOCK_SH | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) fail(ErrorCode::Io, std::string("cannot lock the mirror: ") + std::strerror(errno), path);
    if (cancel && *cancel) return nullptr;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return lock;
}

std::unique_ptr<MirrorLock> MirrorLock::tryAlone(const std::string& path) {
  std::unique_ptr<MirrorLock> lock(new MirrorLock(openLockFile(path)));
  if (::flock(lock->fd_, LOCK_EX | LOCK_NB) != 0) return nullptr;
  lock->alone_ = true;
  return lock;
}

MirrorLock::~MirrorLock() { ::close(fd_); }  // closing the last descriptor releases the lock

void MirrorLock::share() {
  if (alone_ && ::flock(fd_, LOCK_SH) == 0) alone_ = false;
}

bool MirrorLock::becomeAlone() {
  if (!alone_ && ::flock(fd_, LOCK_EX | LOCK_NB) == 0) alone_ = true;
  return alone_;
}

}  // namespace ws
