#include "core/io/open_regular.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util/error.h"

namespace ws {

RegularFile openRegularFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail(ErrorCode::Io, std::string("cannot open: ") + std::strerror(errno), path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail(ErrorCode::Io, std::string("cannot stat: ") + std::strerror(err), path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(ErrorCode::Io, S_ISDIR(st.st_mode) ? "is a folder, not a file" : "not a regular file (a pipe, socket or device)", path);
  }
  // Regular files ignore O_NONBLOCK for reads, but clear it so nothing downstream is surprised.
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return RegularFile{fd, static_cast<uint64_t>(st.st_size)};
}

}  // namespace ws
