// GPU dequantization throughput (issue "GPU proof"): each named tensor dequantized to BF16 with its
// inputs resident on the device, best of N, beside a device-to-device copy of the same bytes
// (input + output) measured in the same run. JSON lines; driven by bench/run_gpu_bench.py.
#include <cstdio>
#include <string>
#include <vector>

#include "core/formats/open_checkpoint.h"
#include "core/numerics/dequant.h"
#include "core/numerics/float_formats.h"
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
    // What was timed must be right: its first, middle and last rows against the CPU decoder.
    auto dec = ws::num::makeDecoder(*c.value(), li.value());
    if (!dec) {
      std::fprintf(stderr, "%s\n", dec.error().describe().c_str());
      return 2;
    }
    const uint64_t cols = dec.value()->cols();
    std::vector<float> row(cols);
    uint64_t differing = 0;
    for (int k = 0; k < 3; ++k) {
      dec.value()->decode(t.value().sampleRowIndex[k], 1, row.data());
      for (uint64_t j = 0; j < cols; ++j) differing += t.value().sampleRows[k * cols + j] != ws::num::toBf16Rne(row[j]);
    }
    if (differing) {
      std::fprintf(stderr, "%s: %llu of %llu sampled BF16 values differ from the CPU decoder\n", n.c_str(), (unsigned long long)differing,
                   (unsigned long long)(3 * cols));
      return 3;
    }
    const uint64_t moved = t.value().bytesIn + t.value().bytesOut;
    auto copy = ws::kernels::timeDeviceCopy(moved / 2, repeat);  // a copy moves its bytes twice (read + write)
    if (!copy) {
      std::fprintf(stderr, "%s\n", copy.error().describe().c_str());
      return 2;
    }
    std::printf("{\"tensor\": \"%s\", \"scheme\": \"%s\", \"bytes_in\": %llu, \"bytes_out\": %llu, \"seconds\": %.6f, \"copy_seconds\": %.6f}\n", n.c_str(),
                c.value()->logical[li.value()].schemeName.c_str(), (unsigned long long)t.value().bytesIn, (unsigned long long)t.value().bytesOut, t.value().seconds,
                copy.value());
    std::fflush(stdout);
  }
  return 0;
}
