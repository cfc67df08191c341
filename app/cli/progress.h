// Progress on stderr for long runs: a bar with bytes and ETA on a terminal, plain lines (at most
// one per 10% or 5 s) otherwise, so CI logs stay readable.
#pragma once

#include <chrono>
#include <mutex>
#include <cstdint>
#include <string>

namespace ws::cli {

class Progress {
 public:
  Progress();
  void update(const char* stage, uint64_t done, uint64_t total);
  void finish();

 private:
  std::mutex mu_;  // workers report from several threads
  bool tty_;
  bool drawn_ = false;
  uint64_t last_ = 0;
  std::string stage_;  // a new stage starts counting again
  int lastDecile_ = -1;
  std::chrono::steady_clock::time_point start_, lastLine_, stageStart_;
};

}  // namespace ws::cli
