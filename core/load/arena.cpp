#include "core/load/arena.h"

#include <cstddef>

namespace ws::load {

namespace {
uint64_t roundUp(uint64_t n, uint64_t to) { return to > 1 ? (n + to - 1) / to * to : n; }
}  // namespace

uint64_t ArenaLayout::reserved() const {
  uint64_t n = 0;
  for (uint64_t b : arenaBytes) n += b;
  return n;
}

uint64_t ArenaLayout::footprint(uint64_t granularity) const {
  uint64_t n = 0;
  for (uint64_t b : arenaBytes) n += roundUp(b, granularity);
  return n;
}

ArenaLayout layoutArenas(const std::vector<uint64_t>& sizes, uint64_t alignment, uint64_t arenaBytes) {
  ArenaLayout l;
  l.places.resize(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const uint64_t n = sizes[i];
    l.payload += n;
    if (n == 0) continue;
    uint64_t at = l.arenaBytes.empty() ? 0 : roundUp(l.arenaBytes.back(), alignment);
    if (l.arenaBytes.empty() || (at + n > arenaBytes && at > 0)) {
      l.arenaBytes.push_back(0);
      at = 0;
    }
    l.places[i] = {uint32_t(l.arenaBytes.size() - 1), at, n};
    l.arenaBytes.back() = at + n;
  }
  return l;
}

}  // namespace ws::load
