// Runs fn(i) for i in [0, n) on all cores. The first exception is rethrown after every worker has
// finished (callers that want every failure catch inside fn).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
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

// Runs make(i) for i in [0, n) on all cores and hands each result to take(i, result) in order of
// i, one call at a time (on whichever worker finds the next result ready): for a pass whose
// output must not depend on the number of threads, where keeping every result until the end
// would cost too much memory. At most `window` results are made and not yet taken. Unlike
// windows joined one after another, no worker waits for the slowest item of a window.
// When make(i) or take(i, ...) throws, no index past i is started and the results before it are
// still taken; the exception of the lowest such index is rethrown after every worker has
// finished, so the error is the same for any number of threads.
template <class Make, class Take>
void orderedParallelFor(size_t n, size_t window, Make&& make, Take&& take) {
  using Made = std::invoke_result_t<Make&, size_t>;
  const size_t workers = std::min<size_t>(n, workerCount());
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) take(i, make(i));
    return;
  }
  window = std::max(window, workers);
  std::mutex m;
  std::condition_variable room;                // a result taken, or the pass stopped
  std::vector<std::optional<Made>> ready(window);  // result i waits in ready[i % window]
  size_t next = 0, taken = 0, stop = n;        // stop: the lowest index that threw, or n
  std::exception_ptr error;
  auto failAt = [&](size_t i, std::exception_ptr e) {  // with m held
    if (i < stop) stop = i, error = std::move(e);
    room.notify_all();
  };
  auto work = [&] {
    std::unique_lock lock(m);
    // Runs fn with the lock let go; returns what it threw, if anything.
    auto unlocked = [&lock](auto&& fn) {
      std::exception_ptr e;
      lock.unlock();
      try {
        fn();
      } catch (...) {
        e = std::current_exception();
      }
      lock.lock();
      return e;
    };
    for (;;) {
      room.wait(lock, [&] { return next >= stop || next < taken + window; });
      if (next >= stop) return;
      const size_t i = next++;
      std::optional<Made> made;
      if (auto e = unlocked([&] { made.emplace(make(i)); })) {
        failAt(i, std::move(e));
        continue;
      }
      ready[i % window] = std::move(made);
      // Takes the results ready, in order. One worker at a time gets here with the next one: it
      // leaves its slot before the lock is let go, and `taken` moves past it only after take.
      while (taken < stop && ready[taken % window]) {
        const size_t t = taken;
        Made r = std::move(*ready[t % window]);
        ready[t % window].reset();
        if (auto e = unlocked([&] { take(t, std::move(r)); })) {
          failAt(t, std::move(e));
          break;
        }
        ++taken;
        room.notify_all();
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace ws
