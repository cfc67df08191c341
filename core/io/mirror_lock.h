// Who is using a cached remote mirror. Every process that opens the same location shares its
// mirror (two CI jobs, a GUI and a command line), so a lock file beside the mirror says who uses
// it: users hold it shared; only a process that holds it alone may replace the mirror, drop it,
// or give its fetched bytes back (punch them out). Unlocked, one process's exit punched out bytes
// another was still reading, and it saw zeros (remote_http's shared-mirror check).
#pragma once

#include <atomic>
#include <memory>
#include <string>

namespace ws {

class MirrorLock {
 public:
  // Opens (creating) the lock file and takes it: exclusively when no other process holds it,
  // else shared, waiting while another process holds it exclusively (it is making the mirror).
  // Stops waiting, returning nullptr, when *cancel turns true. Throws CoreError(Io) naming the
  // file when it cannot be opened.
  static std::unique_ptr<MirrorLock> acquire(const std::string& path, const std::atomic<bool>* cancel);
  // Takes it exclusively only if nobody holds it now (for dropping a mirror); else nullptr.
  static std::unique_ptr<MirrorLock> tryAlone(const std::string& path);
  ~MirrorLock();  // releases it
  MirrorLock(const MirrorLock&) = delete;
  MirrorLock& operator=(const MirrorLock&) = delete;

  bool alone() const { return alone_; }
  // Alone -> shared, once the mirror is ready for others too.
  void share();
  // Shared -> alone when no other process holds it now. On false the lock may have been let go
  // (flock converts by releasing first), so call it only when done with the mirror.
  bool becomeAlone();

 private:
  explicit MirrorLock(int fd) : fd_(fd) {}
  int fd_;
  bool alone_ = false;
};

}  // namespace ws
