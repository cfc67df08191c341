// What a background job shares with the view that started it: how far it is, in which phase, and
// whether it should stop. A view makes a fresh one for every run and the worker keeps its own
// shared_ptr, so a worker of an earlier run can never read or write the state of a later one.
#pragma once

#include <QProgressBar>
#include <algorithm>
#include <atomic>
#include <cstdint>

namespace ws::ui {

struct JobState {
  std::atomic<uint64_t> done{0}, total{0};
  std::atomic<const char*> phase{""};  // a string literal (the core's phase names are)
  std::atomic<bool> cancel{false};

  // Shows done / total on the bar; totals past a bar's int range are scaled down.
  void showOn(QProgressBar* bar) const {
    const uint64_t t = total, d = std::min<uint64_t>(done, t);
    int shift = 0;
    while ((t >> shift) > uint64_t(INT32_MAX)) ++shift;
    bar->setMaximum(int(std::max<uint64_t>(t >> shift, 1)));
    bar->setValue(int(d >> shift));
  }
};

}  // namespace ws::ui
