#include "page_watch.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

namespace wstest {
namespace {

// The state the fault handler reads: plain globals, set before the handler is installed.
uint8_t* gBase = nullptr;
uint64_t gSize = 0;
std::vector<std::atomic<uint8_t>>* gTouched = nullptr;
struct sigaction gPrevious {};

void onFault(int sig, siginfo_t* info, void* context) {
  uint8_t* addr = static_cast<uint8_t*>(info->si_addr);
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  if (gBase && addr >= gBase && addr < gBase + gSize) {
    const uint64_t index = uint64_t(addr - gBase) / page;
    (*gTouched)[index].store(1, std::memory_order_relaxed);
    if (::mprotect(gBase + index * page, page, PROT_READ) == 0) return;  // the read is retried
  }
  // Not ours: a real crash, handled as it would have been.
  if (gPrevious.sa_flags & SA_SIGINFO && gPrevious.sa_sigaction) {
    gPrevious.sa_sigaction(sig, info, context);
    return;
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

uint64_t PageWatch::pageSize() { return uint64_t(::sysconf(_SC_PAGESIZE)); }

PageWatch::PageWatch(const uint8_t* begin, uint64_t bytes) {
  const uint64_t page = pageSize();
  base_ = reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(begin) / page * page);
  skew_ = uint64_t(begin - base_);
  size_ = (skew_ + bytes + page - 1) / page * page;
  if (gBase) std::abort();  // one watch at a time
  gTouched = new std::vector<std::atomic<uint8_t>>(size_ / page);
  gBase = base_;
  gSize = size_;
  struct sigaction sa {};
  sa.sa_sigaction = onFault;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGSEGV, &sa, &gPrevious);
  if (::mprotect(base_, size_, PROT_NONE) != 0) std::abort();
}

PageWatch::~PageWatch() {
  ::mprotect(base_, size_, PROT_READ);
  ::sigaction(SIGSEGV, &gPrevious, nullptr);
  gBase = nullptr;
  gSize = 0;
  delete gTouched;
  gTouched = nullptr;
}

std::vector<uint64_t> PageWatch::touchedPages() const {
  std::vector<uint64_t> out;
  const uint64_t page = pageSize();
  for (uint64_t i = 0; i < gTouched->size(); ++i)
    if ((*gTouched)[i].load()) out.push_back(i * page);
  return out;
}

std::vector<uint64_t> PageWatch::touchedOutside(const std::vector<std::pair<uint64_t, uint64_t>>& ranges) const {
  const uint64_t page = pageSize();
  std::vector<uint64_t> out;
  for (uint64_t p : touchedPages()) {
    bool inside = false;
    for (const auto& [offset, bytes] : ranges) {
      const uint64_t first = (skew_ + offset) / page * page, end = skew_ + offset + bytes;
      if (bytes && p >= first && p < end) inside = true;
    }
    if (!inside) out.push_back(p);
  }
  return out;
}

bool PageWatch::touchedAll(uint64_t offset, uint64_t bytes) const {
  const uint64_t page = pageSize();
  for (uint64_t p = (skew_ + offset) / page; p * page < skew_ + offset + bytes; ++p)
    if (!(*gTouched)[p].load()) return false;
  return true;
}

}  // namespace wstest
