// SGLang 0.5.23's DeepSeek-V4 KV pools as its DSV4PoolConfigurator sizes them on CUDA with the
// default environment and server arguments (model_type deepseek_v4: page size 256, KV dtype
// fp8_e4m3, swa_full_tokens_ratio 0.1, max_running_requests 256; model_overrides/deepseek_v4.py,
// deepseek_v4_hook.py). Read in sglang/srt/model_executor/pool_configurator.py, mem_cache/
// deepseek_v4_memory_pool.py and kernels/ops/attention/dsv4/kv_layout.py of the 0.5.23 wheel; the
// environment flags that change the layout (SGLANG_DSV4_KV_LAYOUT, SGLANG_DSV4_COMPRESS_STATE_DTYPE,
// SGLANG_OPT_USE_ONLINE_COMPRESS ...) and deepseek_v41 are not modelled.
//
// SGLang has no full-attention cache for V4: one "full" token count sizes the compressed pools
// (ratio-4 keys and their indexer keys, ratio-128 keys), and a sliding-window pool of a tenth as
// many tokens holds every layer's raw keys and the ratio-4 compressor states. So one full token
// costs a fixed fraction of bytes, and the ratio-128 compressor states of max_running_requests + 1
// request slots are charged once, up front.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/model_description.h"
#include "core/util/error.h"

namespace ws::plan {

struct SglangDsv4Pool {
  int layers = 0, ratio4 = 0, ratio128 = 0;
  double bytesPerFullToken = 0;  // what the sizer divides the budget by (its "bytes_per_full_token")
  uint64_t fixedBytes = 0;       // the ratio-128 compressor states, (max_running_requests + 1) request slots
  std::vector<std::string> formulas;
};

// The per-token and fixed charges for a model; a usage error where SGLang's V4 layout cannot hold
// it (its 584-byte token needs head_dim 512 with a 64-wide rope) or a ratio was not read.
Result<SglangDsv4Pool> sglangDsv4Pool(const ModelDescription& m, int maxRunningRequests = 256);

// The pools a budget of `availableBytes` buys (calculate_pool_sizes: Python's float arithmetic).
struct SglangDsv4Sizes {
  int64_t full = 0, swa = 0, c4 = 0, c128 = 0, c4State = 0;
};
SglangDsv4Sizes sglangDsv4Sizes(double bytesPerFullToken, uint64_t fixedBytes, double availableBytes);

}  // namespace ws::plan
