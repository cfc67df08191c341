// How SGLang 0.5.23 keeps sliding-window layers' KV cache (read in the wheel):
//   - an architecture on its hybrid-SWA list (srt/configs/model_config.py is_hybrid_swa_model:
//     gpt-oss and the other SWA_SINK_ARCHS, Llama 4, Gemma 4, MiMo-V2, Step-3.5, Laguna with a
//     sliding window ...; or a config that says is_hybrid_swa) gets two pools
//     (srt/model_executor/pool_configurator.py HybridSWAPoolConfigurator): a full pool of N tokens
//     and a sliding one of swa_full_tokens_ratio x N (0.8, fields/schedule.py's fallback), N =
//     int(budget // (full layers' bytes a token + ratio x sliding layers' bytes a token)), in pages;
//   - any other model keeps every layer's cache in the one default pool (DefaultPoolConfigurator):
//     its sliding layers cost what a full layer costs, a token.
// Not modelled: --swa-full-tokens-ratio, the request-capped sliding pool (SWARequestCapPoolConfigurator:
// only with --max-running-requests and the radix cache disabled), unified memory, MLA sliding
// layers (swa_kv_lora_rank), draft layers.
#pragma once

#include <string_view>
#include <vector>

#include "core/model/model_description.h"

namespace ws::plan {

// SGLang 0.5.23's hybrid-SWA architectures (model_config.py:2655-2679, SWA_SINK_ARCHS :88-96,
// MIMO_V2_MODEL_ARCHS :74-77).
const std::vector<std::string_view>& sglangHybridSwaArchitectures();

// Does SGLang give this model a pool of its own for its sliding layers?
bool sglangHybridSwa(const ModelDescription& m);

// swa_full_tokens_ratio's fallback (fields/schedule.py); DeepSeek-V4 sets its own (sglang_dsv4_pool).
inline constexpr double kSglangSwaFullTokensRatio = 0.8;

}  // namespace ws::plan
