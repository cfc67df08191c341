#include "core/dist/communicator.h"

namespace ws::dist {

std::pair<size_t, size_t> shareByBytes(const std::vector<uint64_t>& bytes, int rank, int size) {
  unsigned __int128 total = 0;
  for (uint64_t b : bytes) total += b;
  // Rank of item i: floor((bytes before it + half of its own) * size / total), monotone in i.
  auto owner = [&](unsigned __int128 before, uint64_t b) -> int {
    if (total == 0) return 0;
    const unsigned __int128 middle = 2 * before + b;  // twice the midpoint, to stay in integers
    const int r = int(middle * unsigned(size) / (2 * total));
    return r < size ? r : size - 1;
  };
  size_t begin = bytes.size(), end = bytes.size();
  unsigned __int128 before = 0;
  bool started = false;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const int r = total == 0 ? int(i * size_t(size) / bytes.size()) : owner(before, bytes[i]);  // no bytes at all: by count
    if (r == rank && !started) begin = i, started = true;
    if (r > rank) {
      end = i;
      break;
    }
    before += bytes[i];
  }
  if (!started) return {end, end};
  return {begin, end};
}

}  // namespace ws::dist
