// The flags, by engine:
//   vLLM 0.11.0: vllm/engine/arg_utils.py EngineArgs.add_cli_args (--tensor-parallel-size,
//     --data-parallel-size, --enable-expert-parallel, --expert-placement-strategy linear|round_robin,
//     --max-model-len, --kv-cache-dtype, --gpu-memory-utilization, --max-num-seqs,
//     --max-num-batched-tokens, --cpu-offload-gb).
//   SGLang 0.5.23: srt/arg_groups/fields (parallel.py tp_size, ep_size, attn_dp_size; model.py
//     context_length, kv_cache_dtype; schedule.py max_running_requests, chunked_prefill_size,
//     mem_fraction_static), each
//     field's flag its name with dashes (arg_utils.py _field_to_cli_name); `python -m
//     sglang.launch_server`.
//   llama.cpp: llama-server's -m, -c, -ngl, -ctk/-ctv, -np, --n-cpu-moe (common/arg.cpp).
//   KTransformers: SGLang with kt-kernel (ktransformers 95009ea README.md "Launch", flags of the
//     kvcache-ai/sglang fork at 04653fa, server_args.py): --kt-method, --kt-weight-path,
//     --kt-threadpool-count, --kt-num-gpu-experts, --disable-shared-experts-fusion; AMX methods
//     read weights converted by scripts/convert_cpu_weights.py.
#include "core/plan/launch_flags.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string_view>

namespace ws::plan {

namespace {

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

}  // namespace

std::string LaunchCommand::shell() const {
  std::string out;
  for (const auto& a : argv) {
    bool plain = !a.empty();
    for (char c : a) plain &= std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./=:,+@").find(c) != std::string_view::npos;
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + (plain ? a : quoted + "'");
  }
  return out;
}

Result<LaunchCommand> launchCommand(const LaunchRequest& r) {
  LaunchCommand c;
  auto add = [&](std::initializer_list<std::string> words) { c.argv.insert(c.argv.end(), words); };
  const bool kvDtype = !r.kvCacheDtype.empty() && r.kvCacheDtype != "auto";
  if (r.engine == "vllm") {
    if (r.ep > 1 && r.ep % r.tp) return Error{ErrorCode::Usage, "--ep " + std::to_string(r.ep) + " is not TP x DP for --tp " + std::to_string(r.tp), {}, std::nullopt, {}};
    add({"vllm", "serve", r.modelPath, "--tensor-parallel-size", std::to_string(r.tp)});
    if (r.ep > 1) {
      if (r.ep / r.tp > 1) add({"--data-parallel-size", std::to_string(r.ep / r.tp)});
      add({"--enable-expert-parallel"});
      if (r.placement == PlacementKind::RoundRobin) {
        add({"--expert-placement-strategy", "round_robin"});
        c.notes.push_back("vLLM 0.11.0 places round_robin only for models with expert groups (num_expert_group > 1) and without EPLB; otherwise it warns and places linearly (FusedMoE.__init__)");
      }
      if (r.placement == PlacementKind::Map)
        c.notes.push_back("vLLM 0.11.0 takes no expert map file: the planned map is not what it loads (its placements are linear and round_robin)");
    }
    if (r.maxModelLen > 0) add({"--max-model-len", std::to_string(r.maxModelLen)});
    if (kvDtype) add({"--kv-cache-dtype", r.kvCacheDtype});
    if (r.gpuMemoryUtilization > 0) add({"--gpu-memory-utilization", number(r.gpuMemoryUtilization)});
    if (r.maxNumSeqs > 0) add({"--max-num-seqs", std::to_string(r.maxNumSeqs)});
    if (r.maxNumBatchedTokens > 0) add({"--max-num-batched-tokens", std::to_string(r.maxNumBatchedTokens)});
    if (r.cpuOffloadGb > 0) add({"--cpu-offload-gb", number(r.cpuOffloadGb)});
  } else if (r.engine == "sglang") {
    const int world = std::max(r.ep, r.tp);
    add({"python", "-m", "sglang.launch_server", "--model-path", r.modelPath, "--tp-size", std::to_string(world)});
    if (r.ep > 1) add({"--ep-size", std::to_string(r.ep)});
    if (world / r.tp > 1) add({"--attn-dp-size", std::to_string(world / r.tp)});
    if (r.placement != PlacementKind::Linear) c.notes.push_back("SGLang places experts by --init-expert-location (default trivial); the planned placement is not passed");
    if (r.maxModelLen > 0) add({"--context-length", std::to_string(r.maxModelLen)});
    if (kvDtype) add({"--kv-cache-dtype", r.kvCacheDtype});
    if (r.maxNumSeqs > 0) add({"--max-running-requests", std::to_string(r.maxNumSeqs)});
    if (r.maxNumBatchedTokens > 0) add({"--chunked-prefill-size", std::to_string(r.maxNumBatchedTokens)});
    if (r.memFractionStatic > 0) add({"--mem-fraction-static", number(r.memFractionStatic)});
    if (r.cpuOffloadGb > 0) add({"--cpu-offload-gb", std::to_string(int64_t(r.cpuOffloadGb))});  // an int in SGLang (host_offload.h)
    if (r.gpuMemoryUtilization > 0)
      c.notes.push_back("--gpu-memory-utilization is vLLM's share of the whole device; SGLang's --mem-fraction-static (weights and KV cache) is another quantity, which SGLang works out itself (memory_hook.py handle_gpu_memory_settings; plan --runtime sglang shows it): not emitted");
  } else if (r.engine == "llama.cpp") {
    if (!r.gguf) return Error{ErrorCode::Usage, "llama.cpp reads GGUF: convert the checkpoint first (convert_hf_to_gguf.py)", {}, std::nullopt, {}};
    add({"llama-server", "-m", r.modelPath, "-ngl", "999"});
    if (r.maxModelLen > 0) add({"-c", std::to_string(r.maxModelLen)});
    if (kvDtype) add({"-ctk", r.kvCacheDtype, "-ctv", r.kvCacheDtype});
    if (r.maxNumSeqs > 0) add({"-np", std::to_string(r.maxNumSeqs)});
    if (r.nCpuMoe > 0) add({"--n-cpu-moe", std::to_string(r.nCpuMoe)});
    if (r.cpuOffloadGb > 0) c.notes.push_back("--cpu-offload-gb is vLLM's: llama.cpp keeps tensors in host memory by --n-cpu-moe / -ot, not by a byte count");
    if (r.ep > 1 || r.tp > 1)
      c.notes.push_back("llama.cpp splits layers over the GPUs it sees (--split-mode layer), not experts or heads: the plan's EP / TP ranks are not its layout");
  } else if (r.engine == "kt") {
    if (!r.kt) return Error{ErrorCode::Usage, "--emit kt needs the split: --kt-num-gpu-experts N or --kt-gpu-experts-ratio R, with --kt-method M (or --host-mem with --kt-method)", {}, std::nullopt, {}};
    const bool amx = r.kt->method.starts_with("AMX");
    std::string method = r.kt->method;
    for (char& ch : method) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    const std::string weights = amx ? r.modelPath + "-" + method : r.modelPath;  // native methods read the checkpoint itself
    add({"python", "-m", "sglang.launch_server", "--model-path", r.modelPath, "--tp-size", std::to_string(r.tp), "--kt-method", r.kt->method, "--kt-weight-path", weights,
         "--kt-threadpool-count", std::to_string(r.kt->numaNodes)});
    if (r.kt->gpuRatio >= 0) add({"--kt-gpu-experts-ratio", number(r.kt->gpuRatio)});
    else add({"--kt-num-gpu-experts", std::to_string(r.kt->gpuExperts)});
    if (r.kt->strategy != "uniform") add({"--kt-expert-placement-strategy", r.kt->strategy});
    if (!r.kt->initExpertLocation.empty()) add({"--init-expert-location", r.kt->initExpertLocation});
    add({"--disable-shared-experts-fusion"});
    if (r.maxModelLen > 0) add({"--context-length", std::to_string(r.maxModelLen)});
    if (kvDtype) add({"--kv-cache-dtype", r.kvCacheDtype});
    if (amx)
      c.notes.push_back("convert the experts first: python scripts/convert_cpu_weights.py --input-path " + r.modelPath + " --input-type fp8|bf16 --output " + weights +
                        " --quant-method " + method.substr(3) + " --threadpool-count " + std::to_string(r.kt->numaNodes) + " (ktransformers README)");
    c.notes.push_back("add --kt-cpuinfer with the host's physical cores (not known here)");
    if (r.ep > 1) c.notes.push_back("KTransformers places the first N experts of each layer on the GPU (uniform): the plan's EP ranks are not its layout");
  } else {
    return Error{ErrorCode::Usage, "--emit takes vllm, sglang, llama.cpp or kt, not '" + r.engine + "'", {}, std::nullopt, {}};
  }
  return c;
}

}  // namespace ws::plan
