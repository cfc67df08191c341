#include "app/cli/progress.h"

#include <cstdio>
#include <unistd.h>

#include "core/util/format_bytes.h"

namespace ws::cli {

Progress::Progress() : tty_(::isatty(2)), start_(std::chrono::steady_clock::now()), lastLine_(start_), stageStart_(start_) {}

void Progress::update(const char* stage, uint64_t done, uint64_t total) {
  std::lock_guard lock(mu_);
  if (stage_ != stage) {
    stage_ = stage;
    last_ = 0;
    lastDecile_ = -1;
    stageStart_ = std::chrono::steady_clock::now();
  }
  if (!total || done < last_) return;  // out-of-order reports from other threads
  last_ = done;
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0) return;  // short runs need no progress
  const double frac = double(done) / double(total);
  const double inStage = std::chrono::duration<double>(now - stageStart_).count();
  const double eta = frac > 0 ? inStage * (1 - frac) / frac : 0;
  if (tty_) {
    const int width = 30, fill = int(frac * width);
    std::fprintf(stderr, "\r%-8s [%s%s] %3d%%  %s / %s  ETA %.0fs   ", stage, std::string(size_t(fill), '#').c_str(), std::string(size_t(width - fill), ' ').c_str(),
                 int(frac * 100), formatBytes(done).c_str(), formatBytes(total).c_str(), eta);
    drawn_ = true;
    return;
  }
  const int decile = int(frac * 10);
  if (decile != lastDecile_ || std::chrono::duration<double>(now - lastLine_).count() > 5) {
    std::fprintf(stderr, "%s: %d%% (%s of %s), ETA %.0fs\n", stage, int(frac * 100), formatBytes(done).c_str(), formatBytes(total).c_str(), eta);
    lastDecile_ = decile;
    lastLine_ = now;
  }
}

void Progress::finish() {
  std::lock_guard lock(mu_);
  if (drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace ws::cli
