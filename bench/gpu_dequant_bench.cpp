// GPU dequantization throughput (issue "GPU proof"): each named tensor dequantized to BF16 with its
// inputs resident on the device, best of N, beside a device-to-device copy of the same bytes
// (input + output) measured in the same run. JSON lines; driven by bench/run_gpu_bench.py.
#include <cstdio>
#include <string>
#include <vector>

#include "core/formats/open_checkpoint.h"
#include "core/numerics/dequant.h"
#include "kernels/cuda_backend.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gpu_dequant_bench CHECKPOINT TENSOR... [--repeat N]\n");
    return 2;
  }
  int repeat = 10;
  std::vector<std::string> names;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) repeat = std::stoi(argv[++i]);
    else names.push_back(a);
  }
  auto c = ws::openCheckpoint(argv[1]);
  if (!c) {
    std::fprintf(stderr, "%s\n", c.error().describe().c_str());
    return 2;
  }
  for (const auto& n : names) {
    auto li = ws::num::findLogical(*c.value(), n);
    if (!li) {
      std::fprintf(stderr, "%s\n", li.error().describe().c_str());
      return 2;
    }
    auto t = ws::kernels::timeDequantBf16(*c.value(), li.value(), repeat);
    if (!t) {
      std::fprintf(stderr, "%s\n", t.error().describe().c_str());
      return 2;
    }
    const uint64_t moved = t.value().bytesIn + t.value().bytesOut;
    auto copy = ws::kernels::timeDeviceCopy(moved / 2, repeat);  // a copy moves its bytes twice (read + write)
    std::printf("{\"tensor\": \"%s\", \"scheme\": \"%s\", \"bytes_in\": %llu, \"bytes_out\": %llu, \"seconds\": %.6f, \"copy_seconds\": %.6f}\n", n.c_str(),
                c.value()->logical[li.value()].schemeName.c_str(), (unsigned long long)t.value().bytesIn, (unsigned long long)t.value().bytesOut, t.value().seconds,
                copy ? copy.value() : -1.0);
    std::fflush(stdout);
  }
  return 0;
}
