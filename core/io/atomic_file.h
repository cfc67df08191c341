// Writes a report or output file atomically: into a temporary file beside it, then rename, so a
// reader never sees half a file and an interrupted run leaves the old file in place.
#pragma once

#include <string>
#include <string_view>

namespace ws {

// write(2) until all n bytes are written (EINTR retried); throws CoreError(Io) naming `path`.
void writeAll(int fd, const void* data, size_t n, const std::string& path);

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);  // throws CoreError(Io) naming the path
  ~AtomicFile();                          // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  void write(const void* data, size_t n);
  void write(std::string_view s) { write(s.data(), s.size()); }
  void commit();  // fsync, rename over the target

 private:
  std::string path_, tmp_;
  int fd_ = -1;
};

}  // namespace ws
