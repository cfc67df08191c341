// Runs fn(i) for i in [0, n) on all cores. The first exception is rethrown after every worker has
// finished (callers that want every failure catch inside fn).
#pragma once

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ws {

// The cores there are to work on, asked once: std::thread::hardware_concurrency reads sysfs on
// every call, which tests that count a pass's bytes read would see.
inline unsigned workerCount() {
  static const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  return n;
}

template <class F>
void parallelFor(size_t n, F&& fn) {
  const size_t workers = std::min<size_t>(n, workerCount());
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr firstError;
  std::mutex errMutex;
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w)
    threads.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < n;) {
        try {
          fn(i);
        } catch (...) {
          std::lock_guard lock(errMutex);
          if (!firstError) firstError = std::current_exception();
        }
      }
    });
  for (auto& t : threads) t.join();
  if (firstError) std::rethrow_exception(firstError);
}

// parallelFor over [0, n) in `chunk`-sized ranges: fn(begin, end). For cheap per-item work, where
// one atomic increment per item would cost more than the item.
template <class F>
void parallelChunks(size_t n, size_t chunk, F&& fn) {
  parallelFor((n + chunk - 1) / chunk, [&](size_t k) { fn(k * chunk, std::min(n, (k + 1) * chunk)); });
}

}  // namespace ws
