#include "core/plan/sglang_dsv4_pool.h"

#include <algorithm>
#include <cmath>

namespace ws::plan {

namespace {

constexpr int64_t kPage = 256;      // the page SGLang forces for V4 (model_overrides/deepseek_v4.py:51-64)
constexpr double kSwaRatio = 0.1;   // swa_full_tokens_ratio (model_overrides/deepseek_v4.py:43-49)
constexpr int64_t kRing4 = 8;       // the ratio-4 compressor's ring without speculation (deepseek_v4_memory_pool.py:60-79)

// The V4 layout's bytes for p tokens in one page: 584 a token (448 FP8 nope values, 64 BF16 rope
// values, 7 UE8M0 scales and a pad), the page rounded up to 576 (kv_layout.py:84-105).
double pageBytes(int64_t tokens) { return double((tokens * 584 + 575) / 576 * 576); }
// A paged pool's bytes a slot, its page holding 256 / ratio slots (pool_configurator.py:1353-1370).
double pagedSlot(int64_t ratio) {
  const int64_t slots = ratio ? kPage / ratio : kPage;
  return pageBytes(slots) / double(slots);
}

}  // namespace

Result<SglangDsv4Pool> sglangDsv4Pool(const ModelDescription& m, int maxRunningRequests) {
  return capture([&]() -> SglangDsv4Pool {
    const AttentionConfig& a = m.attention;
    SglangDsv4Pool p;
    p.layers = int(m.numLayers);
    // deepseek_v4_memory_pool.py:295-317 recomputes the token as 448 + 64 x 2 + 448 / 64 + 1 and
    // asserts 584: the nope part is head_dim - qk_rope_head_dim.
    if (a.headDim != 512 || a.qkRopeHeadDim != 64)
      fail(ErrorCode::Usage, "SGLang 0.5.23's DeepSeek-V4 KV layout asserts 584 bytes a token - head_dim 512 with a 64-wide rope (deepseek_v4_memory_pool.py:313-317); this config has head_dim " +
                                 std::to_string(a.headDim) + ", qk_rope_head_dim " + std::to_string(a.qkRopeHeadDim));
    if (a.indexHeadDim <= 0) fail(ErrorCode::Usage, "SGLang's DeepSeek-V4 indexer pool needs index_head_dim, which the config does not give");
    if (int64_t(a.compressRatios.size()) < m.numLayers) fail(ErrorCode::Usage, "compress_ratios has fewer entries than num_hidden_layers");
    // The first num_hidden_layers ratios; a trailing MTP entry is not counted (pool_configurator.py:1117-1118).
    for (int64_t l = 0; l < m.numLayers; ++l) {
      const int64_t r = a.compressRatios[size_t(l)];
      if (r == 4) ++p.ratio4;
      else if (r == 128) ++p.ratio128;
      else if (r != 0) fail(ErrorCode::Usage, "a compress ratio of " + std::to_string(r) + " (DeepSeek-V4.1's) is not modelled for SGLang");
    }
    const double D = double(a.headDim), Di = double(a.indexHeadDim);
    // pool_configurator.py:1372-1387: every layer's raw keys, and per ratio-4 layer its attention
    // and indexer compressor states (kv and score, overlapped: 2 x 2 x width FP32) in 8 rows a page.
    const double ratio4States = double(kRing4) / double(kPage) * (2 * 2 * D * 4 + 2 * 2 * Di * 4);
    const double bytesPerSwaToken = pagedSlot(0) * p.layers + ratio4States * p.ratio4;
    // :1397-1446: a tenth of that, plus the ratio-4 keys and FP8 indexer keys (index_head_dim + its
    // FP32 scale a 128) at one slot per 4 tokens, the ratio-128 keys at one per 128.
    const double indexerSlot = Di + Di / 128 * 4;
    p.bytesPerFullToken = kSwaRatio * bytesPerSwaToken + p.ratio4 * (pagedSlot(4) / 4 + indexerSlot / 4) + p.ratio128 * (pagedSlot(128) / 128);
    // :1509-1528: the ratio-128 compressor's 128-row ring for each of max_running_requests + 1
    // request slots, plus a page, rounded up to 128 rows, each 2 x head_dim FP32.
    const uint64_t rows = (uint64_t(maxRunningRequests + 1) * 128 + 129 + 127) / 128 * 128;
    p.fixedBytes = uint64_t(p.ratio128) * rows * uint64_t(2 * a.headDim) * 4;
    char line[512];
    std::snprintf(line, sizeof line,
                  "SGLang 0.5.23 DeepSeek-V4 pools (DSV4PoolConfigurator, page 256, fp8): a full token costs %.2f B = 0.1 x (585 B raw keys x %d layers + %g B compressor "
                  "states x %d ratio-4 layers) + %d ratio-4 layers x (585 / 4 + %g / 4 indexer) + %d ratio-128 layers x 864 / 128",
                  p.bytesPerFullToken, p.layers, ratio4States, p.ratio4, p.ratio4, indexerSlot, p.ratio128);
    p.formulas.push_back(line);
    p.formulas.push_back("plus " + std::to_string(p.fixedBytes) + " B once: " + std::to_string(p.ratio128) + " ratio-128 layers' compressor states, " + std::to_string(rows) +
                         " rows (" + std::to_string(maxRunningRequests) + " + 1 request slots x 128, rounded up) x 2 x " + std::to_string(a.headDim) + " FP32");
    return p;
  });
}

SglangDsv4Sizes sglangDsv4Sizes(double bytesPerFullToken, uint64_t fixedBytes, double availableBytes) {
  SglangDsv4Sizes s;
  const double avail = std::max(availableBytes - double(fixedBytes), 0.0);
  if (bytesPerFullToken <= 0) return s;
  s.full = int64_t(avail / bytesPerFullToken) / kPage * kPage;  // :1667-1669
  s.swa = int64_t(double(s.full) * kSwaRatio) / kPage * kPage;    // :1457-1461
  s.c4 = s.full / 4, s.c128 = s.full / 128, s.c4State = s.swa / kPage * kRing4;  // :1489-1501
  return s;
}

}  // namespace ws::plan
