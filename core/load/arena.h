// Where each buffer of a load lives: a few large allocations (arenas), sub-allocated in order at
// the kernels' alignment, as serving engines do - instead of one allocation per tensor (208k for
// Kimi-K2), each with its own rounding. The same layout is the loader's and the prediction's, so
// the predicted footprint is exactly what the loader asks the allocator for.
#pragma once

#include <cstdint>
#include <vector>

namespace ws::load {

// cudaMalloc's guarantee, and enough for the widest vector load a kernel makes (16 bytes).
inline constexpr uint64_t kArenaAlignment = 256;
// An arena is closed when the next buffer would take it past this size (a larger buffer gets an
// arena of its own): a handful of allocations for a 100 GB rank, none of them one that a
// fragmented device could refuse for want of one enormous free range.
inline constexpr uint64_t kArenaBytes = uint64_t(8) << 30;

struct ArenaLayout {
  static constexpr uint32_t kNoArena = UINT32_MAX;  // a zero-byte buffer needs no arena
  struct Slot {
    uint32_t arena = kNoArena;
    uint64_t offset = 0, bytes = 0;
  };
  std::vector<Slot> places;            // one per buffer, in the order given
  std::vector<uint64_t> arenaBytes;   // each arena's size
  uint64_t payload = 0;               // the buffers' own bytes

  uint64_t reserved() const;                       // what the arenas ask the allocator for
  uint64_t slack() const { return reserved() - payload; }  // alignment padding
  // Device memory the arenas take when the allocator rounds each to `granularity`.
  uint64_t footprint(uint64_t granularity) const;
};

ArenaLayout layoutArenas(const std::vector<uint64_t>& sizes, uint64_t alignment = kArenaAlignment, uint64_t arenaBytes = kArenaBytes);

}  // namespace ws::load
