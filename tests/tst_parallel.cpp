// orderedParallelFor (core/util/parallel.h): results taken in order, one at a time, at most a
// window of them waiting, and the error of the lowest failing index whatever the timing. Items
// take uneven, random times so that workers finish out of order.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/util/parallel.h"

using namespace ws;

namespace {

// Up to ~50 us of work, different for each index.
void unevenWork(size_t i) {
  std::mt19937 rng(uint32_t(i) * 2654435761u);
  std::this_thread::sleep_for(std::chrono::microseconds(rng() % 50));
}

// Watches the calls to take: their order, their overlap, and how many results waited at most.
struct Watch {
  std::vector<size_t> order;
  std::atomic<bool> inTake{false};
  std::atomic<int> waiting{0}, mostWaiting{0};
  bool overlapped = false;

  void made() {
    const int w = ++waiting;
    for (int m = mostWaiting; w > m && !mostWaiting.compare_exchange_weak(m, w);) {}
  }
  void taking(size_t i) {
    if (inTake.exchange(true)) overlapped = true;
    --waiting;
    order.push_back(i);
    unevenWork(i + 1);
    inTake = false;
  }
};

std::vector<size_t> upTo(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace

class TstParallel : public QObject {
  Q_OBJECT
 private slots:
  void takesEveryResultInOrderWithinTheWindow() {
    for (size_t window : {1, 3, 16}) {
      Watch w;
      std::vector<size_t> values;
      orderedParallelFor(
          500, window,
          [&](size_t i) {
            unevenWork(i);
            w.made();
            return i * i;
          },
          [&](size_t i, size_t v) {
            w.taking(i);
            values.push_back(v);
          });
      QCOMPARE(w.order, upTo(500));
      for (size_t i = 0; i < values.size(); ++i) QCOMPARE(values[i], i * i);
      QVERIFY(!w.overlapped);
      // A window narrower than the workers is widened to them, or they would wait on each other.
      QVERIFY2(size_t(w.mostWaiting) <= std::max<size_t>(window, workerCount()), std::to_string(w.mostWaiting).c_str());
    }
  }

  // Index 120 fails slowly and 123 at once, so first: 120's error is the one rethrown, everything
  // before it is taken, and nothing is started past the window after it.
  void rethrowsTheLowestFailingIndex() {
    const size_t window = 8;
    Watch w;
    std::atomic<size_t> mostStarted{0};
    try {
      orderedParallelFor(
          1000, window,
          [&](size_t i) {
            for (size_t m = mostStarted; i > m && !mostStarted.compare_exchange_weak(m, i);) {}
            if (i == 120) {
              std::this_thread::sleep_for(std::chrono::milliseconds(20));
              throw std::runtime_error("item 120");
            }
            if (i == 123) throw std::runtime_error("item 123");
            unevenWork(i);
            w.made();
            return i;
          },
          [&](size_t i, size_t) { w.taking(i); });
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      QCOMPARE(std::string(e.what()), std::string("item 120"));
    }
    QCOMPARE(w.order, upTo(120));
    QVERIFY2(mostStarted < 120 + window, std::to_string(mostStarted).c_str());
  }

  void aFailingTakeStopsThePass() {
    Watch w;
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, orderedParallelFor(
                                                     200, 4,
                                                     [&](size_t i) {
                                                       unevenWork(i);
                                                       return i;
                                                     },
                                                     [&](size_t i, size_t) {
                                                       if (i == 57) throw std::runtime_error("take 57");
                                                       w.taking(i);
                                                     }));
    QCOMPARE(w.order, upTo(57));
  }

  void noItemsNoCalls() {
    int calls = 0;
    orderedParallelFor(0, 4, [&](size_t) { return ++calls; }, [&](size_t, int) { ++calls; });
    QCOMPARE(calls, 0);
  }
};

QTEST_GUILESS_MAIN(TstParallel)
#include "tst_parallel.moc"
