#include "core/io/mapped_read_guard.h"

#include <algorithm>
#include <csignal>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/io/mapped_file.h"
#include "core/util/error.h"

namespace ws {
namespace {

uintptr_t g_pageSize = 4096;
struct sigaction g_previous;

// What the handler did for this thread's guards: the address ranges it mapped zeros over, a
// sequential read's pages joined into one. Plain thread-local data: the handler runs on the
// thread that faulted, and may neither allocate nor lock.
struct Patched {
  static constexpr int kRanges = 64;
  uintptr_t begin[kRanges], end[kRanges];
  int count = 0;
  bool overflowed = false;  // more ranges than kept: every check fails until the last guard ends
  int guards = 0;           // guards this thread holds
};
thread_local Patched t_patched;

void onSigbus(int sig, siginfo_t* info, void* context) {
  Patched& p = t_patched;
  if (p.guards > 0 && info->si_addr) {
    const uintptr_t page = uintptr_t(info->si_addr) & ~(g_pageSize - 1);
    // Zeros over the page, so the faulting load completes; mmap is a plain system call here.
    if (::mmap(reinterpret_cast<void*>(page), g_pageSize, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
      if (p.count && p.end[p.count - 1] == page) p.end[p.count - 1] = page + g_pageSize;
      else if (p.count < Patched::kRanges) p.begin[p.count] = page, p.end[p.count] = page + g_pageSize, ++p.count;
      else p.overflowed = true;
      return;
    }
  }
  // Not a guarded read: as if this handler were not installed.
  if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) return g_previous.sa_sigaction(sig, info, context);
  if (!(g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) return g_previous.sa_handler(sig);
  ::signal(SIGBUS, SIG_DFL);  // returning retries the load, which now ends the process as it would have
}

void installOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_pageSize = uintptr_t(::sysconf(_SC_PAGESIZE));
    struct sigaction sa {};
    sa.sa_sigaction = onSigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous);
  });
}

}  // namespace

MappedReadGuard::MappedReadGuard() {
  installOnce();
  ++t_patched.guards;
}

MappedReadGuard::~MappedReadGuard() {
  Patched& p = t_patched;
  if (--p.guards == 0) p.overflowed = false;
}

void MappedReadGuard::check(const MappedFile& file, uint64_t offset, uint64_t n, const std::string& tensor) const {
  if (!n || !file.data_) return;
  Patched& p = t_patched;
  const uintptr_t base = uintptr_t(file.data_), lo = base + offset, hi = lo + n;
  uint64_t bad = p.overflowed ? offset : UINT64_MAX;  // the first offset whose bytes may not be the file's
  // The pages holding the range: of the ranges the handler patched, what lies among them was
  // zeros, not the file. It is mapped back (page-aligned, as the mapping is), so a later read
  // faults as it should, and forgotten; the rest of a range waits for the check that covers it.
  const uintptr_t first = lo & ~(g_pageSize - 1), last = (hi + g_pageSize - 1) & ~(g_pageSize - 1);
  for (int k = 0; k < p.count; ++k) {
    const uintptr_t x = std::max(p.begin[k], first), y = std::min(p.end[k], last);
    if (x >= y) continue;
    bad = std::min<uint64_t>(bad, std::max(x, lo) - base);
    ::mmap(reinterpret_cast<void*>(x), y - x, PROT_READ, MAP_SHARED | MAP_FIXED, file.fd_, off_t(x - base));
    const uintptr_t rightBegin = y, rightEnd = p.end[k];
    p.end[k] = x;  // the part before, if any
    if (rightBegin < rightEnd) {
      if (p.count < Patched::kRanges) p.begin[p.count] = rightBegin, p.end[p.count] = rightEnd, ++p.count;
      else p.overflowed = true;
    }
    if (p.begin[k] == p.end[k]) p.begin[k] = p.begin[p.count - 1], p.end[k] = p.end[p.count - 1], --p.count, --k;
  }
  struct stat st {};
  std::string why = "a page could not be read through the file's mapping (the disk failed, or the file changed)";
  if (::fstat(file.fd_, &st) == 0 && uint64_t(st.st_size) < offset + n) {
    bad = std::min<uint64_t>(bad, std::max<uint64_t>(offset, uint64_t(st.st_size)));
    why = "file ended early: it is now " + std::to_string(st.st_size) + " bytes";
  }
  if (bad != UINT64_MAX) fail(ErrorCode::Io, why, file.path(), bad, tensor);
}

}  // namespace ws
