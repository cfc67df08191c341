// Records which pages of a file mapping the code under test reads: the mapping is made
// inaccessible, each first touch of a page faults, the fault handler notes the page and opens it
// again, and the read goes on. Tests assert on the pages actually touched - something the code
// under test does not count itself (issue #26 finding 1).
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace wstest {

class PageWatch {
 public:
  // Watches [begin, begin + bytes); only one watch may be active at a time.
  PageWatch(const uint8_t* begin, uint64_t bytes);
  ~PageWatch();  // opens every page again and puts the previous fault handler back
  PageWatch(const PageWatch&) = delete;
  PageWatch& operator=(const PageWatch&) = delete;

  // Offsets (from begin) of the pages touched so far, page aligned.
  std::vector<uint64_t> touchedPages() const;
  static uint64_t pageSize();
  // Pages touched outside the given byte ranges (offsets from begin, ranges rounded out to pages).
  std::vector<uint64_t> touchedOutside(const std::vector<std::pair<uint64_t, uint64_t>>& ranges) const;
  // Whether every page overlapping the given byte range was touched.
  bool touchedAll(uint64_t offset, uint64_t bytes) const;

 private:
  uint8_t* base_;  // page-aligned start
  uint64_t size_;  // page-aligned length
  uint64_t skew_;  // begin - base_
};

}  // namespace wstest
