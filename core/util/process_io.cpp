#include "core/util/process_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace ws {

// One read(2) of the whole file: its content shows the count before this read, which then adds
// exactly the bytes it returned.
std::optional<SyscallReadMeter::Reading> SyscallReadMeter::read() {
  char buf[4096];
  const int fd = ::open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0 || size_t(n) == sizeof buf - 1) return std::nullopt;
  buf[n] = '\0';
  const char* at = std::strstr(buf, "rchar:");
  if (!at) return std::nullopt;
  return Reading{std::strtoull(at + 6, nullptr, 10), uint64_t(n)};
}

SyscallReadMeter::SyscallReadMeter() : start_(read()) {}

std::optional<uint64_t> SyscallReadMeter::bytesSinceStart() const {
  const auto now = read();
  if (!start_ || !now || now->rchar < start_->rchar + start_->own) return std::nullopt;
  return now->rchar - start_->rchar - start_->own;
}

}  // namespace ws
