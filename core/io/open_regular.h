// Opening a checkpoint file for reading without ever blocking: open(2) of a FIFO with O_RDONLY
// waits for a writer forever, so files are opened O_NONBLOCK and refused unless regular.
#pragma once

#include <cstdint>
#include <string>

namespace ws {

struct RegularFile {
  int fd = -1;        // the caller closes it
  uint64_t size = 0;
};

// Throws CoreError(Io) naming the path when it cannot be opened or is not a regular file.
RegularFile openRegularFile(const std::string& path);

}  // namespace ws
