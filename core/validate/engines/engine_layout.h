// The deployment a checkpoint is validated for (validate / plan --runtime vllm|sglang --tp --ep
// --dp --gpu): the engine, its parallel layout and the GPU.
#pragma once

#include <optional>
#include <string>

#include "core/model/model_description.h"

namespace ws::val::engines {

struct EngineLayout {
  int tp = 1;            // --tp: tensor parallel size (vLLM --tensor-parallel-size, SGLang --tp-size)
  int dp = 1;            // --dp: vLLM --data-parallel-size; SGLang --attn-dp-size (DP attention inside the TP group)
  int ep = 1;            // --ep: ranks the routed experts are split over (1: no expert parallelism)
  std::string gpu;       // --gpu: a device of core/plan/devices.h or "sm_90"; empty: not given
  int capability = 0;    // the GPU's compute capability (major x 10 + minor); 0: not given

  // "TP 8 x DP 2, EP 16 on H200-141GB (SM 9.0)"
  std::string describe() const;
};

// Checks a layout against the model and the engine's own launch rules; the reason when it is not
// one the engine can be started with (a usage error, exit 2): --tp 0, a TP larger than the
// attention heads, an EP the engine cannot form from TP and DP (vLLM: EP is TP x DP when expert
// parallelism is on, vllm/model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make at
// 0.11.0; SGLang: EP divides TP, srt/runtime_context.py derive_parallel_widths at 0.5.23).
std::optional<std::string> layoutProblem(const std::string& engine, const EngineLayout& l, const ModelDescription& m);

// The engine layout of a plan of EP `ep` ranks with attention TP `tp` (plan --ep --tp, the EP
// Ranks tab): vLLM's TP tp x DP ep/tp with expert parallelism, SGLang's TP group of max(ep, tp)
// with --ep-size ep and attention DP max(ep, tp)/tp. The reason when the engine cannot form it.
std::optional<std::string> layoutForPlan(const std::string& engine, int ep, int tp, EngineLayout& out);

// --gpu NAME: a device of the table or "sm_XY" / "X.Y"; the reason when neither.
std::optional<std::string> resolveGpu(EngineLayout& l);

}  // namespace ws::val::engines
