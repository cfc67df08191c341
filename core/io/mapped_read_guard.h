// Reading a file through its memory map raises SIGBUS where the file was cut short after it was
// mapped, or where the disk fails beneath a page: the process would die mid-scan. While a thread
// holds a MappedReadGuard, such a fault is survived instead: the page reads as zeros, and
// check() then fails the read, naming the file and the offset, and maps the file back over the
// page (so a later, unguarded read faults as it should, rather than read those zeros).
//
// What the handler did is the faulting thread's to check. Another thread reading the same page
// before that check sees zeros without a fault: where the file was cut, its own check finds the
// file too short; a disk error on a page two threads read at once is not caught for the second.
#pragma once

#include <cstdint>
#include <string>

namespace ws {

class MappedFile;

class MappedReadGuard {
 public:
  MappedReadGuard();
  ~MappedReadGuard();
  MappedReadGuard(const MappedReadGuard&) = delete;
  MappedReadGuard& operator=(const MappedReadGuard&) = delete;

  // Throws CoreError(Io) naming the file, offset and `tensor` when bytes [offset, offset + n) of
  // `file`, read through its mapping on this thread, may not be the file's: a page of them
  // faulted, or the file now ends before offset + n. Call it after the reads, before trusting
  // what they gave.
  void check(const MappedFile& file, uint64_t offset, uint64_t n, const std::string& tensor = {}) const;
};

}  // namespace ws
