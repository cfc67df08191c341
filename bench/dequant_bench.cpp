// Single-core CPU dequantization throughput: decodes whole tensors with the reference decoders
// and prints, per tensor, the best of N runs as JSON lines. Driven by run_dequant_bench.py, which
// measures the Python peers on the same bytes in the same run.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/formats/open_checkpoint.h"
#include "core/numerics/dequant.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: dequant_bench CHECKPOINT TENSOR... [--repeat N]\n");
    return 2;
  }
  int repeat = 5;
  std::vector<std::string> names;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) repeat = std::stoi(argv[++i]);
    else names.push_back(a);
  }
  auto opened = ws::openCheckpoint(argv[1]);
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.error().describe().c_str());
    return 2;
  }
  const ws::Checkpoint& c = *opened.value();
  for (const auto& name : names) {
    auto li = ws::num::findLogical(c, name);
    if (!li) {
      std::fprintf(stderr, "%s\n", li.error().describe().c_str());
      return 2;
    }
    auto dec = ws::num::makeDecoder(c, li.value());
    if (!dec) {
      std::fprintf(stderr, "%s\n", dec.error().describe().c_str());
      return 2;
    }
    const auto& d = *dec.value();
    std::vector<float> out(d.rows() * d.cols());
    double best = 1e30;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      d.decode(0, d.rows(), out.data());
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::min(best, s);
    }
    double checksum = 0;
    for (size_t i = 0; i < out.size(); i += 4096)
      if (std::isfinite(out[i])) checksum += out[i];  // keeps the work observable
    std::printf("{\"tensor\": \"%s\", \"scheme\": \"%s\", \"elements\": %llu, \"seconds\": %.6f, \"checksum\": %.6g}\n", name.c_str(),
                c.logical[li.value()].schemeName.c_str(), static_cast<unsigned long long>(out.size()), best, checksum);
  }
  return 0;
}
