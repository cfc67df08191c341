#include "core/plan/sglang_memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ws::plan {

namespace {

// Python's round(x, 3): the double's exact value rounded to 3 decimals, ties to even - what
// glibc's printf does too.
double roundTo3(double x) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", x);
  return std::strtod(text, nullptr);
}

std::string mib(double v) {
  char text[32];
  std::snprintf(text, sizeof text, v == std::floor(v) ? "%.0f" : "%.1f", v);
  return text;
}

struct Tier {
  double belowMiB;
  int64_t chunkedPrefill, maxBsSmallTp, maxBsLargeTp;  // decode graphs' max_bs below TP 4 and from it
};
// memory_hook.py handle_gpu_memory_settings, "GPU-dependent capacity defaults".
constexpr Tier kTiers[] = {
    {20 * 1024, 2048, 8, 8},        // T4, 4080
    {35 * 1024, 4096, 48, 160},     // A10, 4090, 5090
    {60 * 1024, 4096, 32, 160},     // A100 40GB, L40
    {90 * 1024, 8192, 256, 512},    // H100, A100 80GB
    {160 * 1024, 8192, 256, 512},   // H20, H200
    {INFINITY, 16384, 512, 512},    // B200, MI300
};

}  // namespace

std::string sglangShareText(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", share);
  return text;
}

int64_t sglangPrefillGraphCount(int64_t maxBs) {
  // cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes: steps of 4 to 32, 16 to 256, 32 to
  // 512, 64 to 1024, 256 to 4096, then 512 from 4608.
  struct Run {
    int64_t from, to, step;
  };
  int64_t n = 0;
  for (const Run r : {Run{4, 32, 4}, Run{48, 256, 16}, Run{288, 512, 32}, Run{576, 1024, 64}, Run{1280, 4096, 256}, Run{4608, maxBs, 512}})
    for (int64_t s = r.from; s <= r.to && s <= maxBs; s += r.step) ++n;
  return n;
}

Result<SglangStaticShare> sglangStaticShare(const ModelDescription& m, const SglangLaunch& l) {
  SglangStaticShare s;
  if (l.memFractionStatic > 0) {
    if (l.memFractionStatic >= 1) return Error{ErrorCode::Usage, "--mem-fraction-static must be below 1", {}, std::nullopt, {}};
    s.memFractionStatic = l.memFractionStatic, s.given = true;
    s.formula = "mem_fraction_static " + sglangShareText(l.memFractionStatic) + " (given)";
    return s;
  }
  if (m.visionTower)
    return Error{ErrorCode::Usage,
                 "SGLang 0.5.23 lowers mem_fraction_static for a vision tower (memory_hook.py adjust_mem_fraction_for_vlm) and may drop its prefill graphs, by its multimodal "
                 "architecture list and breakable-graph allowlist (model_config.py), not read here: give --mem-fraction-static",
                 {}, std::nullopt, {}};
  if (!(l.gpuMemMiB > 0)) return Error{ErrorCode::Usage, "SGLang works mem_fraction_static out from the GPU's memory: give --gpu-mem, or --mem-fraction-static", {}, std::nullopt, {}};
  const double gpu = l.gpuMemMiB;
  const Tier& tier = *std::find_if(std::begin(kTiers), std::end(kTiers), [&](const Tier& t) { return gpu < t.belowMiB; });
  s.chunkedPrefillSize = l.chunkedPrefillSize > 0 ? l.chunkedPrefillSize : tier.chunkedPrefill;
  s.decodeMaxBs = l.tpSize < 4 ? tier.maxBsSmallTp : tier.maxBsLargeTp;
  if (l.maxRunningRequests > 0) s.decodeMaxBs = std::min(s.decodeMaxBs, l.maxRunningRequests);  // only a default max_bs is capped
  // model_config.py: MLA by architecture (DeepSeek V2/V3, Kimi, GLM-5 ...); DeepSeek-V4 is MHA there.
  const bool deepseekV4 = !m.attention.compressRatios.empty();
  const bool mla = m.attention.kvLoraRank > 0 && !deepseekV4;
  // cuda_graph_hook.py disable_breakable_cudagraph_if_incompatible: DeepSeek-V4 (without prefill
  // context parallelism) and KDA linear attention lose the default breakable prefill graphs.
  const bool prefillGraphs = !deepseekV4 && !m.attention.kdaAttention;
  std::string prefill = "no prefill graphs (breakable capture off for " + std::string(deepseekV4 ? "DeepSeek-V4" : "KDA attention") + ")";
  double graphs = 2.0 * double(s.decodeMaxBs);
  if (prefillGraphs) {
    s.prefillMaxBs = mla ? std::min<int64_t>(8192, s.chunkedPrefillSize) : s.chunkedPrefillSize;
    if (l.modelPath.find("llama-2") != std::string::npos) s.prefillMaxBs = std::min<int64_t>(s.prefillMaxBs, 4096);
    s.prefillGraphs = sglangPrefillGraphCount(s.prefillMaxBs);
    graphs += mla ? 1.5 * 1024 : double(s.prefillGraphs) * 8;
    prefill = mla ? "1536 (MLA prefill graphs)" : std::to_string(s.prefillGraphs) + " prefill graphs up to " + std::to_string(s.prefillMaxBs) + " tokens x 8";
  }
  if (l.attnDpSize > 1) {  // reserve_for_graph_mb: DP attention pads its graphs
    graphs += double(s.decodeMaxBs) * l.attnDpSize * 3;
    if (s.decodeMaxBs > 300) graphs += double(s.decodeMaxBs) * l.attnDpSize * 1.5;
  }
  const double activation = double(std::max<int64_t>(s.chunkedPrefillSize, 2048)) * 1.5;
  const double parallel = double(l.tpSize) / 8 * 1024;
  double reserved = 512 + activation + parallel + graphs;
  const bool floored = gpu > 60 * 1024 && reserved < 10 * 1024;
  if (gpu > 60 * 1024) reserved = std::max(reserved, 10.0 * 1024);
  s.reservedMiB = reserved;
  s.memFractionStatic = roundTo3((gpu - reserved) / gpu);
  if (!(s.memFractionStatic > 0))
    return Error{ErrorCode::Usage,
                 "SGLang 0.5.23 reserves " + mib(reserved) + " MiB on a GPU of " + mib(gpu) + " MiB (memory_hook.py handle_gpu_memory_settings): its mem_fraction_static would be " +
                     sglangShareText(s.memFractionStatic) + " - give --mem-fraction-static",
                 {}, std::nullopt, {}};
  s.formula = "mem_fraction_static = round((" + mib(gpu) + " - " + mib(reserved) + ") / " + mib(gpu) + ", 3) = " + sglangShareText(s.memFractionStatic) +
              "; reserved MiB = 512 + chunked prefill " + std::to_string(s.chunkedPrefillSize) + " x 1.5 + TP " + std::to_string(l.tpSize) + " / 8 x 1024 + decode graphs " +
              std::to_string(s.decodeMaxBs) + " x 2" + (l.attnDpSize > 1 ? " (+ DP attention " + std::to_string(l.attnDpSize) + " x " + std::to_string(s.decodeMaxBs) + " x 3" +
                                                                                 (s.decodeMaxBs > 300 ? " + x 1.5" : "") + ")"
                                                                           : "") +
              " + " + prefill + (floored ? ", at least 10240 above 60 GiB" : "") + " (SGLang 0.5.23 memory_hook.py handle_gpu_memory_settings)";
  return s;
}

}  // namespace ws::plan
