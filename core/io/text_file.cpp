#include "core/io/text_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/io/open_regular.h"
#include "core/util/error.h"

namespace ws {

std::string readTextFile(const std::string& path, uint64_t maxBytes) {
  RegularFile f = openRegularFile(path);
  if (f.size > maxBytes)
    fail(ErrorCode::Io, "file is " + std::to_string(f.size) + " bytes, over the " + std::to_string(maxBytes) + "-byte limit for a text file", path);
  std::string text(static_cast<size_t>(f.size), '\0');
  uint64_t done = 0;
  while (done < f.size) {
    ssize_t r = ::pread(f.fd, text.data() + done, f.size - done, off_t(done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      ::close(f.fd);
      fail(ErrorCode::Io, std::string("read failed: ") + std::strerror(err), path, done);
    }
    if (r == 0) break;  // shrank while we read: take what is there
    done += uint64_t(r);
  }
  ::close(f.fd);
  text.resize(done);
  return text;
}

}  // namespace ws
