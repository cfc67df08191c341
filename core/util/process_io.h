// The kernel's own count of the bytes the calling thread has read with read(2), pread(2) and the
// like (rchar of /proc/thread-self/io): a measure of what a pass read that does not come from the
// pass's own bookkeeping. Per thread, so what other threads read meanwhile (Open MPI's progress
// threads read their wake-up pipes) is not in it; reads through a memory mapping are not either.
#pragma once

#include <cstdint>
#include <optional>

namespace ws {

class SyscallReadMeter {
 public:
  SyscallReadMeter();  // starts counting the calling thread's reads
  // The bytes the thread that started it has read since, not counting the meter's own reads;
  // nullopt where /proc/thread-self/io cannot be read. Call it on that thread.
  std::optional<uint64_t> bytesSinceStart() const;

 private:
  struct Reading {
    uint64_t rchar = 0;  // the count the file showed, before this read
    uint64_t own = 0;    // the bytes this read of the file returned (rchar grows by them)
  };
  static std::optional<Reading> read();
  std::optional<Reading> start_;
};

}  // namespace ws
