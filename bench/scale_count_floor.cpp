// The least a pass that counts every 16-bit scale by its code can cost: read the given byte
// ranges with pread, 128 KiB at a time, and count each code in a 65,536-entry table, on every core
// (the ranges split into one contiguous run per core by bytes), with nothing else - no start-up of a
// large program, no open, no statistics, no merge beyond the tables. Every figure `scales` reports
// for a BF16 or F16 scale tensor (counts, extremes, moments, histogram) follows from those counts.
// run_scan_bench.py sets `scales` against it: how far the pass is from its floor, as against the
// pread loop, which reads the same ranges and counts nothing.
//   build/bench/scale_count_floor < RANGES    (lines: FILE OFFSET BYTES)
// Prints the milliseconds from the first read to the merged counts, and the codes counted.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Range {
  int fd;
  uint64_t offset, bytes;
};

// One core's share: its ranges read and their codes counted into `counts`.
void countRanges(const std::vector<Range>& ranges, size_t first, size_t end, std::vector<uint64_t>& counts) {
  std::vector<uint8_t> buf(128 << 10);
  for (size_t r = first; r < end; ++r)
    for (uint64_t at = 0; at < ranges[r].bytes; at += buf.size()) {
      const uint64_t n = std::min<uint64_t>(buf.size(), ranges[r].bytes - at);
      if (pread(ranges[r].fd, buf.data(), n, off_t(ranges[r].offset + at)) != ssize_t(n)) {
        std::perror("pread");
        std::exit(1);
      }
      uint64_t i = 0;
      for (; i + 8 <= n; i += 8) {  // four codes a load, as the tally in scale_stats.cpp
        uint64_t w;
        std::memcpy(&w, buf.data() + i, 8);
        ++counts[w & 0xFFFF], ++counts[w >> 16 & 0xFFFF], ++counts[w >> 32 & 0xFFFF], ++counts[w >> 48];
      }
      for (; i + 2 <= n; i += 2) ++counts[buf[i] | buf[i + 1] << 8];
    }
}

}  // namespace

int main() {
  std::map<std::string, int> fds;
  std::vector<Range> ranges;
  std::string path;
  uint64_t offset, bytes, total = 0;
  while (std::cin >> path >> offset >> bytes) {
    auto [it, fresh] = fds.emplace(path, -1);
    if (fresh && (it->second = open(path.c_str(), O_RDONLY)) < 0) {
      std::perror(path.c_str());
      return 1;
    }
    ranges.push_back({it->second, offset, bytes});
    total += bytes;
  }
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  // Contiguous shares of about total / cores bytes each.
  std::vector<size_t> cut{0};
  uint64_t seen = 0;
  for (size_t r = 0; r < ranges.size(); ++r)
    if ((seen += ranges[r].bytes) * cores >= total * cut.size() && cut.size() < cores) cut.push_back(r + 1);
  while (cut.size() <= cores) cut.push_back(ranges.size());
  std::vector<std::vector<uint64_t>> counts(cores, std::vector<uint64_t>(1 << 16));
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (size_t c = 0; c < cores; ++c) workers.emplace_back(countRanges, std::cref(ranges), cut[c], cut[c + 1], std::ref(counts[c]));
  for (auto& w : workers) w.join();
  for (size_t c = 1; c < cores; ++c)
    for (size_t code = 0; code < counts[0].size(); ++code) counts[0][code] += counts[c][code];
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  uint64_t codes = 0;
  for (uint64_t k : counts[0]) codes += k;
  std::printf("%.3f ms %llu codes\n", ms, static_cast<unsigned long long>(codes));
  for (auto& [p, fd] : fds) close(fd);
  return 0;
}
