// weightscope plan PATH --ep N [...]: expert-parallel placement and per-rank memory budgets.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/cli/command.h"
#include "core/formats/hf_config.h"
#include "core/formats/open_checkpoint.h"
#include "core/load/backend_registry.h"
#include "core/plan/devices.h"
#include "core/plan/ep_plan.h"
#include "core/plan/deployment_fit.h"
#include "core/plan/engine_log_check.h"
#include "core/plan/host_offload.h"
#include "core/plan/kv_cache.h"
#include "core/plan/vllm_profile.h"
#include "core/plan/launch_flags.h"
#include "core/report/validate_report.h"
#include "core/util/format_bytes.h"
#include "core/validate/engines/engine_rules.h"

namespace ws::cli {

namespace {

// --gpu-mem SIZE|DEVICE|cuda:N|auto with --gpu-memory-utilization and --context-reserve. A
// present GPU is asked for its total (cudaMemGetInfo) the way a runtime would see it.
std::optional<plan::GpuBudget> budgetOf(const Args& a) {
  if (!a.has("gpu-mem")) return std::nullopt;
  const std::string what = a.get("gpu-mem");
  const double utilization = a.has("gpu-memory-utilization") ? std::stod(a.get("gpu-memory-utilization")) : 1.0;
  const int64_t reserve = a.has("context-reserve") ? int64_t(plan::parseSize(a.get("context-reserve"))) : -1;
  if (what == "auto" || what.rfind("cuda:", 0) == 0) {
    auto backend = load::makeBackend(what == "auto" ? "cuda:0" : what);
    if (!backend) throw std::invalid_argument("--gpu-mem " + what + ": " + backend.error().message);
    if (!(utilization > 0) || utilization > 1) throw std::invalid_argument("--gpu-memory-utilization must be in (0, 1]");
    plan::GpuBudget b;
    b.total = backend.value()->memory().total;
    b.source = backend.value()->name() + ", total as the driver reports it (cudaMemGetInfo)";
    b.utilization = utilization;
    b.contextReserve = reserve < 0 ? plan::kDefaultContextReserve : uint64_t(reserve);
    b.nvidiaSmiMiB = double(b.total) / double(1 << 20);  // nvidia-smi's may be more (616 MiB on the H200 of the GPU proof)
    b.device = backend.value()->name();
    return b;
  }
  return plan::budgetFor(what, utilization, reserve);
}

// --reserve: bytes kept free per rank.
uint64_t reserveOf(const Args& a) { return a.has("reserve") ? plan::parseSize(a.get("reserve")) : 0; }

nlohmann::json budgetJson(const std::optional<plan::GpuBudget>& b, uint64_t reserved) {
  if (!b) return nullptr;
  return {{"device_total", b->total}, {"device_total_mib", b->total >> 20}, {"source", b->source}, {"gpu_memory_utilization", b->utilization},
          {"context_reserve", b->contextReserve}, {"usable", b->usable()}, {"reserve", reserved}};
}

using KvPlan = plan::KvBudget;

nlohmann::json kvJson(const KvPlan& kv, const plan::PlanOptions& opt, const plan::RankPlan& rp) {
  if (!kv.cache) return nullptr;
  const plan::KvCache& c = *kv.cache;
  nlohmann::json j = {{"dtype", c.dtype},
                      {"max_model_len", c.maxModelLen},
                      {"bytes_per_token", c.bytesPerToken},
                      {"layers", {{"full", c.layers.full}, {"mla", c.layers.mla}, {"sliding", c.layers.sliding}, {"linear", c.layers.linear}, {"shared", c.layers.shared}}},
                      {"sliding", {{"layers", c.layers.sliding}, {"window", c.window}, {"bytes_per_token", c.slidingBytesPerToken}, {"bytes_per_seq", c.slidingBytesPerSeq}}},
                      {"state_bytes_per_seq", c.stateBytesPerSeq},
                      {"compressed", {{"layers", c.compressedLayers}, {"bytes_per_token", c.compressedBytesPerToken}, {"bytes_per_seq", c.compressedBytesPerSeq}}},
                      {"indexer_bytes_per_token", c.indexerBytesPerToken},
                      {"pool", c.poolBytesPerToken > 0 ? nlohmann::json{{"bytes_per_full_token", c.poolBytesPerToken}, {"fixed_bytes", c.poolFixedBytes}} : nlohmann::json(nullptr)},
                      {"block_size", c.blockSize},
                      {"formulas", c.formulas}};
  if (opt.capacity) {
    const plan::KvFit f = kv.fit(opt, rp);
    j["free_bytes"] = f.freeBytes;
    j["tokens_fit"] = f.tokensFit;
    j["max_concurrency"] = f.maxConcurrency;
    j["served_concurrency"] = f.servedConcurrency;
    if (f.stateSlots >= 0) j["state_slots"] = f.stateSlots, j["max_running_requests"] = f.maxRunning;  // SGLang's state pool
  } else {
    j["free_bytes"] = j["tokens_fit"] = j["max_concurrency"] = j["served_concurrency"] = nullptr;
  }
  return j;
}

nlohmann::json reservesJson(const KvPlan& kv) {
  nlohmann::json r = nlohmann::json::object();
  for (const auto& x : kv.reserves) {
    r[x.name] = {{"bytes", x.bytes}, {"formula", x.formula}};
    if (x.hostBytes) r[x.name]["host_bytes"] = x.hostBytes;
  }
  return r;
}

nlohmann::json planJson(const Checkpoint& c, const plan::PlanOptions& opt, const plan::PlanResult& res, bool listTensors,
                        const std::optional<plan::GpuBudget>& budget, const KvPlan& kv) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& rp : res.ranks) {
    nlohmann::json bytes = nlohmann::json::object();
    for (int k = 0; k < plan::kCategories; ++k) bytes[plan::categoryName(k)] = rp.bytes[size_t(k)];
    bytes["scales"] = rp.scaleBytes;
    bytes["total"] = rp.resident;
    nlohmann::json r = {{"rank", rp.rank}, {"experts", rp.experts}, {"tensors", rp.held.size()}, {"bytes", bytes},
                        {"fits", rp.fits ? nlohmann::json(*rp.fits) : nlohmann::json(nullptr)},
                        {"derived", rp.derived}, {"transient", rp.transient}, {"peak", rp.peak}, {"host", rp.host},
                        {"headroom", opt.capacity ? nlohmann::json(rp.headroom) : nlohmann::json(nullptr)},
                        {"kv_cache", kvJson(kv, opt, rp)},
                        {"reserves", reservesJson(kv)}};
    if (listTensors) {
      nlohmann::json held = nlohmann::json::array();
      for (const auto& h : rp.held) held.push_back({{"name", c.tensors[h.tensor].name}, {"bytes", h.bytes}});
      r["held"] = std::move(held);
    }
    ranks.push_back(std::move(r));
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& s : plan::notUploaded(res)) {
    const auto& t = c.tensors[s.tensor];
    skipped.push_back({{"name", t.name}, {"reason", s.reason}, {"file", c.files[t.file].path}, {"offset", t.offset}, {"bytes", t.bytes}});
  }
  nlohmann::json expertBytes = nlohmann::json::object();
  for (size_t i = 0; i < res.moeLayers.size(); ++i) expertBytes[std::to_string(res.moeLayers[i])] = res.expertBytes[i];
  nlohmann::json doc = {
      {"schema", "weightscope.plan/2"},
      {"path", c.root},
      {"ep_size", opt.placement.epSize},
      {"placement", opt.placement.source},
      {"remainder", plan::remainderName(opt.placement.remainder)},
      {"runtime", std::string(opt.rules->name)},
      {"physical_experts", opt.placement.physicalExperts()},
      {"tp_size", opt.tp},
      {"n_cpu_moe", opt.nCpuMoe},
      {"cpu_offload_cap", opt.cpuOffloadCap},
      {"kt", opt.kt ? nlohmann::json{{"gpu_experts", opt.kt->gpuExperts}, {"gpu_ratio", opt.kt->gpuRatio >= 0 ? nlohmann::json(opt.kt->gpuRatio) : nlohmann::json(nullptr)},
                                     {"strategy", opt.kt->strategy}, {"method", opt.kt->method}, {"numa_nodes", opt.kt->numaNodes}, {"host_formula", res.hostFormula}}
                    : nlohmann::json(nullptr)},
      {"capacity", opt.capacity ? nlohmann::json(*opt.capacity) : nlohmann::json(nullptr)},
      {"budget", budgetJson(budget, opt.reserved)},
      {"reserved", opt.reserved},
      {"peak_multiplier", res.multiplier},
      {"imbalance", res.imbalance},
      {"ranks", std::move(ranks)},
      {"not_uploaded", std::move(skipped)},
      {"expert_bytes", std::move(expertBytes)},
      {"notes", res.notes},
  };
  if (!kv.cache && !kv.why.empty()) doc["kv_cache_not_estimated"] = kv.why;
  if (!kv.llamaCppLog.empty()) doc["llama_cpp_kv_log"] = kv.llamaCppLog;  // a GGUF: llama.cpp's own size lines
  if (!res.numaBytes.empty()) doc["numa_bytes"] = res.numaBytes;
  if (!c.model.baseModelEpPlan.empty()) doc["base_model_ep_plan"] = nlohmann::json::parse(c.model.baseModelEpPlan, nullptr, false);
  return doc;
}

std::string expertList(const std::vector<int64_t>& e) {
  std::string s;
  for (size_t i = 0; i < e.size();) {
    size_t j = i;
    while (j + 1 < e.size() && e[j + 1] == e[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(e[i]) + (j > i ? "-" + std::to_string(e[j]) : "");
    i = j + 1;
  }
  return s.empty() ? "-" : s;
}

void printKv(const plan::PlanOptions& opt, const plan::PlanResult& res, const KvPlan& kv) {
  if (!kv.cache) {
    if (!kv.why.empty()) std::printf("KV cache not estimated: %s\n", kv.why.c_str());
    return;
  }
  const plan::KvCache& c = *kv.cache;
  std::printf("KV cache (%s, %lld tokens a request): %s per token per rank over ", c.dtype.c_str(), (long long)c.maxModelLen, formatBytes(c.bytesPerToken).c_str());
  if (c.compressedLayers) std::printf("%d compressed layers", c.compressedLayers);  // DeepSeek-V4 has no full or MLA layer
  else std::printf("%d full + %d MLA layers", c.layers.full, c.layers.mla);
  if (c.layers.sliding) {
    std::printf("; %d sliding layers (window %lld)", c.layers.sliding, (long long)c.window);
    if (c.slidingBytesPerSeq) std::printf(": %s per sequence", formatBytes(c.slidingBytesPerSeq).c_str());
  }
  if (c.layers.linear) std::printf("; %d linear-attention layers: %s state per sequence", c.layers.linear, formatBytes(c.stateBytesPerSeq).c_str());
  if (c.poolBytesPerToken > 0 && c.compressedLayers)
    std::printf(" (%.2f B a token as SGLang charges it, 256-token pages) and %s charged once", c.poolBytesPerToken, formatBytes(c.poolFixedBytes).c_str());
  else if (c.poolBytesPerToken > 0)
    std::printf(" (%.2f B a token of SGLang's full pool with its sliding pool's share)", c.poolBytesPerToken);
  else if (c.compressedLayers)
    std::printf("; %d compressed layers: %s per sequence, compressor states %s per sequence", c.compressedLayers, formatBytes(c.compressedBytesPerSeq).c_str(),
                formatBytes(c.stateBytesPerSeq).c_str());
  std::printf("\n");
  for (const auto& f : c.formulas) std::printf("  %s\n", f.c_str());
  for (const auto& r : kv.reserves)
    std::printf("reserve %-16s %11s  %s\n", r.name.c_str(), (r.hostBytes ? formatBytes(r.hostBytes) + " host" : formatBytes(r.bytes)).c_str(), r.formula.c_str());
  if (!kv.llamaCppLog.empty()) {
    std::printf("llama.cpp at -c %lld -np %lld would print:\n", (long long)c.maxModelLen, (long long)std::max<int64_t>(1, kv.options.maxNumSeqs));
    for (const auto& l : kv.llamaCppLog) std::printf("  %s\n", l.c_str());
  }
  if (!opt.capacity) return;
  const bool capped = kv.options.maxNumSeqs > 0;
  std::printf("%-5s %14s %14s %16s%s\n", "rank", "free for KV", "tokens fit", "max concurrency", capped ? "   served (--max-num-seqs)" : "");
  for (const auto& rp : res.ranks) {
    const plan::KvFit f = kv.fit(opt, rp);
    std::printf("%-5d %14s %14s %16.2f", rp.rank, f.freeBytes < 0 ? ("-" + formatBytes(uint64_t(-f.freeBytes))).c_str() : formatBytes(uint64_t(f.freeBytes)).c_str(),
                formatCount(f.tokensFit).c_str(), f.maxConcurrency);
    if (capped) std::printf("   %8.2f", f.servedConcurrency);
    if (f.stateSlots >= 0) std::printf("   (SGLang: %lld state slots, at most %lld running requests)", (long long)f.stateSlots, (long long)f.maxRunning);
    std::printf("\n");
  }
}

void printTable(const Checkpoint& c, const plan::PlanOptions& opt, const plan::PlanResult& res, const std::optional<plan::GpuBudget>& budget) {
  std::printf("EP %d over %lld experts (%s, remainder %s)%s; peak multiplier %.2f; imbalance %.3f\n", opt.placement.epSize,
              (long long)opt.placement.physicalExperts(), opt.placement.source.c_str(), plan::remainderName(opt.placement.remainder),
              opt.tp > 1 ? (", TP " + std::to_string(opt.tp)).c_str() : "", res.multiplier, res.imbalance);
  if (budget)
    std::printf("budget per rank: %s (%s bytes) x utilization %.2f - CUDA context %s = %s usable; reserved %s\n  device: %s\n",
                formatBytes(budget->total).c_str(), formatCount(budget->total).c_str(), budget->utilization, formatBytes(budget->contextReserve).c_str(),
                formatBytes(budget->usable()).c_str(), formatBytes(opt.reserved).c_str(), budget->source.c_str());
  if (!c.model.baseModelEpPlan.empty()) std::printf("config base_model_ep_plan: %s\n", c.model.baseModelEpPlan.c_str());
  std::printf("%-5s %-14s %11s %11s %11s %11s %11s %11s %11s %11s  %s\n", "rank", "experts", "routed", "shared", "attention", "dense", "other",
              "resident", "peak", "headroom", "verdict");
  for (const auto& rp : res.ranks) {
    const uint64_t other = rp.resident - rp.bytes[plan::RoutedExperts] - rp.bytes[plan::SharedExperts] - rp.bytes[plan::Attention] - rp.bytes[plan::DenseMlp];
    std::string verdict = !rp.fits ? "-" : *rp.fits ? "fits" : "short by " + formatBytes(uint64_t(-rp.headroom));
    std::printf("%-5d %-14s %11s %11s %11s %11s %11s %11s %11s %11s  %s\n", rp.rank, expertList(rp.experts).c_str(), formatBytes(rp.bytes[plan::RoutedExperts]).c_str(),
                formatBytes(rp.bytes[plan::SharedExperts]).c_str(), formatBytes(rp.bytes[plan::Attention]).c_str(), formatBytes(rp.bytes[plan::DenseMlp]).c_str(),
                formatBytes(other).c_str(), formatBytes(rp.resident).c_str(), formatBytes(rp.peak).c_str(),
                opt.capacity ? (rp.headroom < 0 ? "-" + formatBytes(uint64_t(-rp.headroom)) : formatBytes(uint64_t(rp.headroom))).c_str() : "-",
                verdict.c_str());
  }
  std::vector<plan::SkippedTensor> skipped, host;
  for (auto& s : plan::notUploaded(res)) (s.reason == "host" ? host : skipped).push_back(std::move(s));
  if (!skipped.empty()) {
    std::printf("not uploaded: %zu tensors\n", skipped.size());
    for (const auto& s : skipped) {
      const auto& t = c.tensors[s.tensor];
      std::printf("  %s  (%s)  %s @ %llu\n", t.name.c_str(), s.reason.c_str(), c.files[t.file].path.c_str(), (unsigned long long)t.offset);
    }
  }
  if (opt.cpuOffloadCap > 0)
    std::printf("host memory (%s --cpu-offload-gb: %s of each rank's decoder-layer weights, the first layers first): rank 0 %s\n",
                opt.cpuOffloadEngine == "sglang" ? "SGLang" : "vLLM", formatBytes(opt.cpuOffloadCap).c_str(), formatBytes(res.ranks.front().host).c_str());
  if (opt.kt) {
    char share[64];
    std::snprintf(share, sizeof share, "%g", opt.kt->gpuRatio);
    const std::string onGpu = opt.kt->gpuRatio < 0 && opt.kt->strategy == "uniform"
                                  ? "the first " + std::to_string(opt.kt->gpuExperts) + " of each MoE layer"
                                  : (opt.kt->strategy == "random" ? "those torch.randperm (seed 42) picks over all MoE layers, random placement of "
                                                                  : "the first ids of each MoE layer, " + opt.kt->strategy + " placement of ") +
                                        (opt.kt->gpuRatio >= 0 ? std::string(share) + " of all their experts" : std::to_string(opt.kt->gpuExperts) + " a layer");
    std::printf("host memory (KTransformers --kt-method %s: every routed expert, %s also on the GPU): %s\n  %s\n", opt.kt->method.c_str(), onGpu.c_str(),
                formatBytes(res.ranks.front().host).c_str(), res.hostFormula.c_str());
    for (size_t n = 0; n < res.numaBytes.size(); ++n) std::printf("  NUMA node %zu: %s\n", n, formatBytes(res.numaBytes[n]).c_str());
  }
  if (opt.nCpuMoe > 0)  // one line, not a line a tensor: every expert tensor of N blocks
    std::printf("host memory (llama.cpp --n-cpu-moe %d: the routed experts of %s): %s in %zu tensors\n", opt.nCpuMoe,
                opt.nCpuMoe == 1 ? "block 0" : ("blocks 0-" + std::to_string(opt.nCpuMoe - 1)).c_str(), formatBytes(res.ranks.front().host).c_str(), host.size());
  for (const auto& n : res.notes) std::printf("note: %s\n", n.c_str());
}

// --runtime vllm|sglang: what the engine refuses at the plan's layout - validate's engine rules
// (core/validate/engines) at layoutForPlan's layout; the GPU is --gpu, else the --gpu-mem device.
std::optional<val::engines::EngineCheck> engineCheckOf(const Args& a, const Checkpoint& c, int ep, int tp) {
  const std::string engine = a.get("runtime");
  if (!val::engines::isServingEngine(engine)) return std::nullopt;
  val::engines::EngineLayout l;
  if (auto bad = val::engines::layoutForPlan(engine, ep, tp, l)) throw std::invalid_argument(*bad);
  l.gpu = a.has("gpu") ? a.get("gpu") : plan::findDevice(a.get("gpu-mem")) ? a.get("gpu-mem") : "";
  if (auto bad = val::engines::resolveGpu(l)) throw std::invalid_argument("--gpu: " + *bad);
  if (auto bad = val::engines::layoutProblem(engine, l, c.model)) throw std::invalid_argument(*bad);
  return val::engines::checkEngine(c, engine, l);
}

void printEngineCheck(const val::engines::EngineCheck& e) {
  std::printf("engine: %s\n", e.verdict.c_str());
  for (const auto& f : e.findings) std::printf("  %-7s %s  %s\n", val::severityName(f.severity), f.code.c_str(), f.message.c_str());
}

// --emit ENGINE: the engine's launch command for this layout (core/plan/launch_flags.h).
std::optional<plan::LaunchCommand> launchOf(const Args& a, const Checkpoint& c, int ep, int tp, int nCpuMoe, double cpuOffloadGb,
                                            const std::optional<plan::KtOptions>& kt) {
  if (!a.has("emit")) return std::nullopt;
  plan::LaunchRequest r;
  r.engine = a.get("emit");
  r.gguf = c.format == "gguf";
  r.modelPath = r.gguf && !c.files.empty() ? c.files.front().path : a.positional()[0];  // llama.cpp takes a file (a split's first)
  r.ep = ep, r.tp = tp;
  r.placement = placementSpecOf(a, residencyRulesOf(a)).kind;
  r.maxModelLen = a.getInt("max-model-len", -1);
  r.kvCacheDtype = a.get("kv-cache-dtype");
  if (a.has("gpu-memory-utilization")) r.gpuMemoryUtilization = std::stod(a.get("gpu-memory-utilization"));
  r.maxNumSeqs = a.getInt("max-num-seqs", -1);
  r.maxNumBatchedTokens = a.getInt("max-num-batched-tokens", -1);
  if (a.has("mem-fraction-static")) r.memFractionStatic = std::stod(a.get("mem-fraction-static"));
  r.nCpuMoe = nCpuMoe;
  r.cpuOffloadGb = cpuOffloadGb;
  r.kt = kt;
  auto cmd = plan::launchCommand(r);
  if (!cmd) throw std::invalid_argument(cmd.error().message);
  return cmd.value();
}

class PlanCommand : public Command {
 public:
  std::string name() const override { return "plan"; }
  std::string summary() const override { return "expert-parallel placement and per-rank GPU memory budgets"; }
  std::string usage() const override {
    std::string devices;
    for (const auto& d : plan::deviceTable()) devices += " " + std::string(d.name);
    return "usage: weightscope plan PATH --ep N [options]\n"
           "       weightscope plan PATH --fit N --gpu-mem DEVICE[,DEVICE...] --max-model-len L [options]\n"
           "  --placement linear|round-robin|MAP.json|trivial:P   (default linear)\n"
           "  --remainder first|last|strict   who takes E mod N experts: vLLM's first ranks, the last\n"
           "                                  rank (older vLLM, the seed runtime), or refuse (SGLang)\n"
           "  --runtime vllm|sglang|seed      whose residency rules (default vllm): the seed holds fused\n"
           "                          expert tensors whole on every rank, shards MTP experts under\n"
           "                          layers.N, gives the remainder to the last rank and loads F16 as BF16.\n"
           "                          Named vllm or sglang: also what that engine refuses at this layout\n"
           "                          on this GPU (validate's engine rules; exit 1 on a refusal)\n"
           "  --gpu DEVICE|sm_XY      the GPU for those rules (default: the --gpu-mem device)\n"
           "  --emit vllm|sglang|llama.cpp|kt   the engine's launch command for this layout (vLLM 0.11.0's,\n"
           "                          SGLang 0.5.23's; kt: SGLang with kt-kernel, --kt-* flags of\n"
           "                          kvcache-ai/sglang 04653fa), with what it cannot say as notes\n"
           "  --gpu-mem SIZE|DEVICE|cuda:N|auto   memory per rank: a size (141GiB, 80GB), a device as its\n"
           "                          driver reports it (" + devices + " ),\n"
           "                          or the GPU present\n"
           "  --gpu-memory-utilization F   the share of it the engine takes (vLLM's flag; default 1.0)\n"
           "  --context-reserve SIZE  CUDA context and driver (default 512MiB for a device, 0 for a size)\n"
           "  --reserve SIZE          bytes kept free per rank (default 0)\n"
           "  --peak-multiplier F     load peak over resident bytes (default 1.3 NVFP4, 1.5 FP8, else 1)\n"
           "  --derive LIST           fused-gate-up,transpose,bf16: derived buffers to predict\n"
           "  --tp N                  split attention and dense MLP weights over N shards\n"
           "  --skip-activation-scales   do not upload activation input scales (--runtime seed: *.input_scale only)\n"
           "  --skip-mtp              do not upload MTP layers (--runtime seed: mtp.* only, as its loader)\n"
           "  --defer GLOB            tensors the model reads later (repeatable via commas)\n"
           "  --defer-ngram           leave n-gram embedding tables (*ngram*, *.embedders.*) on disk\n"
           "  --n-cpu-moe N           GGUF: llama.cpp's flag - the routed experts of blocks 0..N-1 in host memory\n"
           "  --cpu-offload-gb G      vLLM's flag: G GiB of each rank's decoder-layer weights in host memory\n"
           "  --kt-num-gpu-experts N  KTransformers (SGLang + kt-kernel): the first N routed experts of each MoE\n"
           "                          layer on the GPU, every routed expert in host memory, with\n"
           "  --kt-method M           AMXINT4, AMXINT8 (converted), BF16, FP8, RAWINT4, LLAMAFILE (as stored)\n"
           "  --kt-threadpool-count T the NUMA nodes the host experts are split over (default 1)\n"
           "  --kt-gpu-experts-ratio R   instead of N: R of all MoE layers' routed experts on the GPU\n"
           "  --kt-expert-placement-strategy S   uniform (default: the total spread evenly, the first\n"
           "                          layers taking the remainder), front-loading (whole layers\n"
           "                          from the first MoE layer until the total runs out), random\n"
           "                          (the fork's torch.randperm, seed 42, over every MoE layer's experts)\n"
           "                          or frequency (the most active by --init-expert-location's counts)\n"
           "  --init-expert-location FILE   the expert-distribution recorder's .pt (torch.save of its\n"
           "                          logical_count), for the frequency placement\n"
           "  --host-mem SIZE         with --gpu-mem: the smallest --n-cpu-moe (GGUF), --cpu-offload-gb (vLLM) or\n"
           "                          largest --kt-num-gpu-experts (with --kt-method)\n"
           "                          that fits one device (and one request of --max-model-len), and whether\n"
           "                          SIZE of host memory holds what it moves there\n"
           "KV cache (docs/plan.md; with --gpu-mem: tokens that fit and the maximum concurrency per rank):\n"
           "  --max-model-len L       tokens per request (default: max_position_embeddings)\n"
           "  --kv-cache-dtype D      auto (the model's dtype), bf16, fp16, fp32, fp8, fp8_e4m3, fp8_e5m2,\n"
           "                          fp8_ds_mla; GGUF: f16 (default), bf16, f32, q8_0, q4_0\n"
           "  --block-size N          tokens per cache block (default 16)\n"
           "  --max-num-batched-tokens N   the scheduler's token budget a step (default: vLLM's for the\n"
           "                          --gpu-mem device, 8192 at 70 GiB or more unless an A100, else 2048)\n"
           "  --max-num-seqs N        requests an engine runs at once (vLLM's flag; default: no cap on the\n"
           "                          served concurrency --fit counts; the profile run's sampler takes vLLM's\n"
           "                          1024 or 256 as above)\n"
           "  --mem-fraction-static F --runtime sglang: SGLang's share for weights and KV cache (default: worked\n"
           "                          out as SGLang does from the GPU, TP and chunked prefill; the rest is its\n"
           "                          headroom, a reserve line). --max-num-batched-tokens is its\n"
           "                          --chunked-prefill-size, --max-num-seqs its --max-running-requests\n"
           "  --attention tp|dp       KV heads split over --tp, or whole on every rank (default tp)\n"
           "  --speculative N         N draft (MTP) layers run per token\n"
           "  --reserve-cuda-graphs SIZE   what the engine's CUDA graphs take (default 0)\n"
           "  --fit N                 instead of --ep: the fewest GPUs (EP, then TP within it) on which N\n"
           "                          requests of --max-model-len fit with --gpu-mem each (exit 1: none);\n"
           "                          --gpu-mem A,B,... and / or --runtime vllm,sglang answer for each pair\n"
           "                          side by side, with the engine's verdict on its layout\n"
           "  --engine-log FILE       instead of the table: a vLLM, SGLang or llama.cpp start-up log held to the\n"
           "                          prediction at its own settings, figure by figure (exit 1: a KV\n"
           "                          figure differs). PATH may be a folder with config.json alone\n"
           "  --json [--list-tensors] the weightscope.plan/2 document (docs/plan.md, JSON)\n";
  }
  int run(const std::vector<std::string>& argv) override {
    Args a(argv, {"ep", "placement", "remainder", "runtime", "gpu-mem", "gpu-memory-utilization", "context-reserve", "reserve", "peak-multiplier", "derive", "tp", "defer",
                   "max-model-len", "kv-cache-dtype", "block-size", "max-num-batched-tokens", "max-num-seqs", "mem-fraction-static", "attention", "speculative", "reserve-cuda-graphs",
                   "fit", "gpu", "emit", "engine-log", "n-cpu-moe", "host-mem", "cpu-offload-gb", "kt-num-gpu-experts", "kt-gpu-experts-ratio", "kt-expert-placement-strategy", "kt-method",
                   "kt-threadpool-count", "init-expert-location"},
           {"json", "list-tensors", "skip-activation-scales", "skip-mtp", "defer-ngram"});
    if (a.positional().size() == 1 && a.has("engine-log")) return runEngineLog(a);
    if (a.positional().size() != 1 || (!a.has("ep") && !a.has("fit"))) {
      std::cerr << usage();
      return kExitCannotRun;
    }
    auto opened = openOrReport(a.positional()[0]);
    if (!opened) return kExitCannotRun;
    const Checkpoint& c = *opened;
    if (a.has("fit")) return runFit(a, c);
    const std::optional<plan::GpuBudget> budget = budgetOf(a);
    std::optional<HostFit> hostFit;
    if (a.has("host-mem")) {
      hostFit = hostFitOf(a, c, budget);
      if (!hostFit) return kExitCannotRun;
    }
    auto planned = planFor(a, c, int(a.getInt("ep", 1)), int(a.getInt("tp", 1)), budget, hostFit ? std::optional<HostOffload>(hostFit->offload) : std::nullopt);
    if (!planned) return kExitCannotRun;
    auto& [opt, res] = *planned;
    // The KV cache: asked for by any of its flags (then a config that cannot say is an error), or
    // estimated alongside a budget (then the reason it cannot be is printed instead).
    const bool kvAsked = a.has("max-model-len") || a.has("kv-cache-dtype") || a.has("speculative");
    KvPlan kv;
    if (kvAsked || opt.capacity) {
      auto k = kvPlanOf(a, c, opt.tp);
      if (!k.cache && kvAsked) {
        std::cerr << "weightscope plan: KV cache: " << k.why << "\n";
        return kExitCannotRun;
      }
      kv = std::move(k);
    }
    const auto engine = engineCheckOf(a, c, int(a.getInt("ep", 1)), opt.tp);
    const auto launch = launchOf(a, c, int(a.getInt("ep", 1)), opt.tp, opt.nCpuMoe, hostFit ? hostFit->offload.cpuOffloadGb : cpuOffloadGbOf(a), opt.kt);
    if (a.has("json")) {
      auto doc = planJson(c, opt, res, a.has("list-tensors"), budget, kv);
      if (engine) {
        nlohmann::json findings = nlohmann::json::array();
        for (const auto& f : engine->findings) findings.push_back(findingJson(f));
        doc["engine"] = {{"verdict", engine->verdict}, {"findings", std::move(findings)}};
      }
      if (launch) doc["launch"] = {{"engine", a.get("emit")}, {"argv", launch->argv}, {"command", launch->shell()}, {"notes", launch->notes}};
      if (hostFit) {
        doc["host_fit"] = {{"host_mem", hostFit->hostMem}, {"fits", hostFit->fits}, {"verdict", hostFit->verdict}};
        if (hostFit->offload.ktGpuExperts >= 0) doc["host_fit"]["kt_num_gpu_experts"] = hostFit->offload.ktGpuExperts;
        else if (c.format == "gguf") doc["host_fit"]["n_cpu_moe"] = hostFit->offload.nCpuMoe;
        else doc["host_fit"]["cpu_offload_gb"] = hostFit->offload.cpuOffloadGb;
      }
      std::cout << doc.dump(1) << "\n";
    } else {
      if (engine) printEngineCheck(*engine);
      printTable(c, opt, res, budget);
      printKv(opt, res, kv);
      if (hostFit) std::printf("%s\n", hostFit->verdict.c_str());
      if (launch) {
        std::printf("launch: %s\n", launch->shell().c_str());
        for (const auto& n : launch->notes) std::printf("  note: %s\n", n.c_str());
      }
    }
    // Exit 1 when a budget was given and some rank does not fit, or the engine refuses the
    // layout: usable as a CI gate.
    if (engine && engine->refuses()) return kExitFindings;
    if (hostFit && !hostFit->fits) return kExitFindings;
    for (const auto& rp : res.ranks)
      if (rp.fits && !*rp.fits) return kExitFindings;
    return kExitOk;
  }

 private:
  // What an engine keeps in host memory: llama.cpp's --n-cpu-moe, vLLM's --cpu-offload-gb,
  // KTransformers' --kt-num-gpu-experts (-1: not KTransformers).
  struct HostOffload {
    int nCpuMoe = 0;
    double cpuOffloadGb = 0;
    int ktGpuExperts = -1;
  };

  // --kt-num-gpu-experts N with --kt-method and --kt-threadpool-count (kt_offload.h); `gpuExperts`
  // instead of the flag when given.
  static std::optional<plan::KtOptions> ktOptionsOf(const Args& a, int gpuExperts = -1) {
    const bool ratio = a.has("kt-gpu-experts-ratio");
    if (gpuExperts < 0 && !a.has("kt-num-gpu-experts") && !ratio) {
      if (a.has("kt-method") || a.has("kt-threadpool-count") || a.has("kt-expert-placement-strategy") || a.has("init-expert-location"))
        throw std::invalid_argument("--kt-method, --kt-threadpool-count, --kt-expert-placement-strategy and --init-expert-location go with --kt-num-gpu-experts or --kt-gpu-experts-ratio");
      return std::nullopt;
    }
    plan::KtOptions k;
    if (ratio && (gpuExperts >= 0 || a.has("kt-num-gpu-experts")))
      throw std::invalid_argument("--kt-gpu-experts-ratio and --kt-num-gpu-experts (or the --host-mem search) each set the GPU experts: give one");
    if (ratio) {
      k.gpuRatio = std::stod(a.get("kt-gpu-experts-ratio"));
      if (!(k.gpuRatio >= 0 && k.gpuRatio <= 1)) throw std::invalid_argument("--kt-gpu-experts-ratio takes a share of the routed experts, 0 to 1");
    }
    k.strategy = a.has("kt-expert-placement-strategy") ? a.get("kt-expert-placement-strategy") : "uniform";
    k.initExpertLocation = a.get("init-expert-location", "");
    k.gpuExperts = gpuExperts >= 0 ? gpuExperts : int(a.getInt("kt-num-gpu-experts", 0));
    if (k.gpuExperts < 0) throw std::invalid_argument("--kt-num-gpu-experts takes the GPU experts of each MoE layer, 0 or more");
    if (!a.has("kt-method")) throw std::invalid_argument("--kt-num-gpu-experts needs --kt-method (AMXINT4, AMXINT8, BF16, FP8, RAWINT4, LLAMAFILE): it decides the host bytes");
    k.method = a.get("kt-method");
    k.numaNodes = int(a.getInt("kt-threadpool-count", 1));
    return k;
  }

  static double cpuOffloadGbOf(const Args& a) {
    if (!a.has("cpu-offload-gb")) return 0;
    const double g = std::stod(a.get("cpu-offload-gb"));
    if (!std::isfinite(g) || g < 0) throw std::invalid_argument("--cpu-offload-gb takes GiB per GPU, 0 or more");
    return g;
  }

  // The plan for EP `ep` and TP `tp` with the options of the command line (the host offload
  // `offload` instead of its flags when given); prints the error and returns nothing when it
  // cannot be made.
  static std::optional<std::pair<plan::PlanOptions, plan::PlanResult>> planFor(const Args& a, const Checkpoint& c, int ep, int tp,
                                                                               const std::optional<plan::GpuBudget>& budget,
                                                                               std::optional<HostOffload> offload = std::nullopt) {
    auto pl = placementSpecOf(a, residencyRulesOf(a)).build(ep, c.model.numExperts);
    if (!pl) {
      std::cerr << "weightscope plan: " << pl.error().describe() << "\n";
      return std::nullopt;
    }
    plan::PlanOptions opt;
    opt.placement = pl.value();
    opt.rules = &residencyRulesOf(a);
    opt.tp = tp;
    opt.skipActivationScales = a.has("skip-activation-scales");
    opt.skipMtp = a.has("skip-mtp");
    opt.deferNgramTables = a.has("defer-ngram");
    opt.nCpuMoe = offload ? offload->nCpuMoe : int(a.getInt("n-cpu-moe", 0));
    const double gb = offload ? offload->cpuOffloadGb : cpuOffloadGbOf(a);
    const std::string engine(opt.rules->name);
    if (gb > 0 && engine != "vllm" && engine != "sglang") throw std::invalid_argument("--cpu-offload-gb is vLLM's and SGLang's flag: it plans with --runtime vllm or sglang");
    if (gb > 0 && engine == "sglang" && gb != std::floor(gb))
      throw std::invalid_argument("SGLang's --cpu-offload-gb is a whole number of GB (cpu_offload_gb: int, arg_groups/fields/exec_.py in SGLang 0.5.23)");
    opt.kt = ktOptionsOf(a, offload ? offload->ktGpuExperts : -1);
    opt.cpuOffloadCap = plan::cpuOffloadCap(gb);
    opt.cpuOffloadEngine = engine;
    if (a.has("defer")) {
      std::string d = a.get("defer");
      for (size_t p = 0; p <= d.size();) {
        size_t comma = d.find(',', p);
        if (comma == std::string::npos) comma = d.size();
        if (comma > p) opt.defer.push_back(d.substr(p, comma - p));
        p = comma + 1;
      }
    }
    if (budget) opt.capacity = budget->usable();
    opt.reserved = reserveOf(a);
    opt.peakMultiplier = peakMultiplierOf(a);
    const std::string derive = a.get("derive");
    opt.deriveFusedGateUp = derive.find("fused-gate-up") != std::string::npos;
    opt.deriveTranspose = derive.find("transpose") != std::string::npos;
    opt.deriveBf16 = derive.find("bf16") != std::string::npos;
    auto res = plan::planCheckpoint(c, opt);
    if (!res) {
      std::cerr << "weightscope plan: " << res.error().describe() << "\n";
      return std::nullopt;
    }
    return std::make_pair(std::move(opt), std::move(res.value()));
  }

  // --host-mem SIZE: the least host offload that lets the rest fit the --gpu-mem budget (the
  // weights' peak, and with --max-model-len one request's KV cache and the reserves), and whether
  // the host holds what it moves: with --kt-method, KTransformers' most GPU experts a layer;
  // llama.cpp's --n-cpu-moe in blocks for a GGUF; vLLM's --cpu-offload-gb in whole GiB otherwise.
  // Offloading more never puts more on the device, so a binary search over the amount finds the
  // least that fits.
  struct HostFit {
    uint64_t hostMem = 0;
    HostOffload offload;
    bool fits = false;
    std::string verdict;
  };
  static std::optional<HostFit> hostFitOf(const Args& a, const Checkpoint& c, const std::optional<plan::GpuBudget>& budget) {
    const bool kt = a.has("kt-method"), gguf = !kt && c.format == "gguf";
    if (!budget) throw std::invalid_argument("--host-mem needs --gpu-mem: the device the rest must fit");
    if (a.has("n-cpu-moe") || a.has("cpu-offload-gb") || a.has("kt-num-gpu-experts"))
      throw std::invalid_argument("--host-mem searches the offload: give --host-mem or --n-cpu-moe / --cpu-offload-gb / --kt-num-gpu-experts, not both");
    const std::string engine(residencyRulesOf(a).name);
    if (!kt && !gguf && engine != "vllm" && engine != "sglang")
      throw std::invalid_argument("--host-mem plans KTransformers (--kt-method), llama.cpp's --n-cpu-moe (a GGUF file) or vLLM's / SGLang's --cpu-offload-gb (--runtime vllm or sglang)");
    HostFit h;
    h.hostMem = plan::parseSize(a.get("host-mem"));
    // The most there is to move: every block (llama.cpp), every decoder-layer byte in GiB (vLLM).
    int most = 0;
    uint64_t layerBytes = 0;
    for (const auto& t : c.tensors) {
      most = std::max(most, int(t.layer) + 1);
      if (plan::offloadableByCpuOffload(t, engine)) layerBytes += t.bytes;
    }
    const int experts = int(std::max<int64_t>(0, c.model.numExperts));
    if (kt) most = experts;  // experts a layer moved off the GPU
    else if (!gguf) most = int((layerBytes + (uint64_t(1) << 30) - 1) >> 30);
    const auto offloadOf = [&](int n) { return kt ? HostOffload{0, 0, experts - n} : gguf ? HostOffload{n, 0, -1} : HostOffload{0, double(n), -1}; };
    const auto shown = [&](int n) { return kt ? experts - n : n; };  // the flag's value
    const std::string flag = kt ? "--kt-num-gpu-experts" : gguf ? "--n-cpu-moe" : "--cpu-offload-gb";
    const bool wantKv = a.has("max-model-len");
    const KvPlan kv = wantKv ? kvPlanOf(a, c, 1) : KvPlan{};
    if (wantKv && !kv.cache) throw std::invalid_argument("KV cache: " + kv.why);
    const auto fitsAt = [&](int n) {
      auto planned = planFor(a, c, 1, 1, budget, offloadOf(n));
      if (!planned) throw std::runtime_error("the plan could not be made");
      const plan::RankPlan& rp = planned->second.ranks.front();
      const uint64_t tokens = wantKv ? kv.fit(planned->first, rp).tokensFit : 0;
      return std::make_pair(rp.fits.value_or(false) && (!wantKv || tokens >= uint64_t(kv.options.maxModelLen)), rp);
    };
    const std::string device = plan::findDevice(a.get("gpu-mem")) ? a.get("gpu-mem") : formatBytes(budget->total) + " GPU";
    if (!fitsAt(most).first) {
      h.offload = offloadOf(most);
      h.verdict = "host offload: does not fit even with " + flag + " " + std::to_string(shown(most)) +
                  (kt ? " (every routed expert on the CPU)" : gguf ? " (every block's routed experts in host memory)" : " (every decoder layer in host memory)") + ": what stays on the device" +
                  (wantKv ? ", with the KV cache of " + std::to_string(kv.options.maxModelLen) + " tokens," : "") + " is more than the budget";
      return h;
    }
    int lo = 0, hi = most;  // hi fits; find the least n that does
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (fitsAt(mid).first) hi = mid;
      else lo = mid + 1;
    }
    const plan::RankPlan rp = fitsAt(lo).second;
    h.offload = offloadOf(lo);
    h.fits = rp.host <= h.hostMem;
    const std::string what = "1 x " + device + " + " + formatBytes(h.hostMem) + " host";
    h.verdict = "host offload: " + what + (h.fits ? " fits" : " does not fit") + " with " + flag + " " + std::to_string(shown(lo)) + " (" + formatBytes(rp.host) +
                (kt ? " of routed experts, every one," : gguf ? " of experts" : " of layer weights") + " in host memory" + (h.fits ? "" : ", more than the host's " + formatBytes(h.hostMem)) + "; " +
                formatBytes(rp.peak) + " of weights on the device" + (wantKv ? " and the KV cache of " + std::to_string(kv.options.maxModelLen) + " tokens" : "") + ")";
    return h;
  }

  // The KV cache and reserves for attention TP `tp`; `cache` empty with `why` when the config
  // cannot say.
  static KvPlan kvPlanOf(const Args& a, const Checkpoint& c, int tp) {
    KvPlan kv;
    kv.options = kvOptionsOf(a, c.format, tp);
    return plan::kvBudgetFor(c.model, kv.options, a.has("reserve-cuda-graphs") ? plan::parseSize(a.get("reserve-cuda-graphs")) : 0);
  }

  // --runtime sglang: the launch SGLang works its static share out from - the plan's layout as its
  // flags (--tp-size N --attn-dp-size N/t), the device's memory, and the flags it shares with vLLM's
  // names (--max-num-batched-tokens is its --chunked-prefill-size, --max-num-seqs its
  // --max-running-requests).
  static plan::SglangLaunch sglangLaunchOf(const Args& a, int tp, const std::optional<plan::GpuBudget>& budget) {
    if (a.has("gpu-memory-utilization"))
      throw std::invalid_argument("--gpu-memory-utilization is vLLM's share of the device; SGLang's is --mem-fraction-static (weights and KV cache)");
    plan::SglangLaunch l;
    const int world = std::max(int(a.getInt("ep", 1)), tp);
    l.tpSize = world, l.attnDpSize = world / std::max(1, tp);
    l.chunkedPrefillSize = a.getInt("max-num-batched-tokens", -1);
    l.maxRunningRequests = a.getInt("max-num-seqs", -1);
    if (a.has("mem-fraction-static")) {
      l.memFractionStatic = std::stod(a.get("mem-fraction-static"));
      if (!(l.memFractionStatic > 0) || l.memFractionStatic >= 1) throw std::invalid_argument("--mem-fraction-static must be in (0, 1)");
    }
    l.modelPath = a.positional().empty() ? std::string() : a.positional()[0];
    if (budget) l.gpuMemMiB = budget->nvidiaSmiMiB, l.preLoadFreeBytes = budget->usable();
    return l;
  }

  static plan::KvOptions kvOptionsOf(const Args& a, const std::string& format, int tp) {
    plan::KvOptions o;
    o.maxModelLen = a.getInt("max-model-len", -1);
    o.dtype = a.get("kv-cache-dtype", "auto");
    // SGLang's page: 1 on CUDA (arg_groups/overrides.py _page_size_default) unless its attention
    // backend forces another (FA4 128, FlashMLA and TRT-LLM backends theirs: not modelled); vLLM's block 16.
    o.blockSize = a.getInt("block-size", a.get("runtime") == "sglang" ? 1 : 16);
    // vLLM's own defaults for the device (vllm_profile.h): without --gpu-mem, a GPU of 70 GiB or more.
    const auto budget = budgetOf(a);
    const plan::VllmServeDefaults d = budget ? plan::vllmServeDefaults(budget->total, budget->device) : plan::VllmServeDefaults{};
    o.maxNumBatchedTokens = a.getInt("max-num-batched-tokens", d.maxNumBatchedTokens);
    o.maxNumSeqs = a.getInt("max-num-seqs", -1);
    o.defaultMaxNumSeqs = std::min(d.maxNumSeqs, o.maxNumBatchedTokens);
    if (a.has("max-num-seqs") && o.maxNumSeqs < 1) throw std::invalid_argument("--max-num-seqs must be at least 1");
    o.tp = tp;
    const std::string attention = a.get("attention", "tp");
    if (attention != "tp" && attention != "dp") throw std::invalid_argument("--attention must be tp or dp");
    o.attentionDp = attention == "dp";
    o.speculative = int(a.getInt("speculative", 0));
    o.llamaCpp = format == "gguf";
    o.sglang = a.get("runtime") == "sglang";
    if (o.sglang) o.sglangLaunch = sglangLaunchOf(a, tp, budget);
    if (o.blockSize < 1 || o.maxNumBatchedTokens < 1 || o.speculative < 0)
      throw std::invalid_argument("--block-size and --max-num-batched-tokens must be positive, --speculative not negative");
    return o;
  }

  // --engine-log FILE: the log's figures against the prediction at the log's settings (its
  // TP, max model len, block size, KV dtype; the command line's where it states none). PATH may
  // be a folder holding config.json alone: then the KV figures only, no weights.
  static int runEngineLog(const Args& a) {
    auto log = plan::readEngineLog(a.get("engine-log"));
    if (!log) {
      std::cerr << "weightscope plan: --engine-log: " << log.error().describe() << "\n";
      return kExitCannotRun;
    }
    const plan::EngineLog& L = log.value();
    const std::string path = a.positional()[0];
    std::shared_ptr<const Checkpoint> opened;
    ModelDescription model;
    if (auto c = openCheckpoint(path)) {
      opened = c.value();
      model = opened->model;
    } else if (c.error().code != ErrorCode::NotACheckpoint || !readHfConfig(path, model)) {
      std::cerr << "weightscope plan: " << c.error().describe() << "\n";
      return kExitCannotRun;
    }
    plan::LogCheckRequest req;
    req.fallback = kvOptionsOf(a, opened ? opened->format : "config", int(a.getInt("tp", 1)));
    req.gguf = opened && opened->format == "gguf";
    if (req.gguf)  // llama.cpp's n_vocab: the token list (vocab.n_tokens())
      if (const MetaEntry* tokens = opened->findMeta("tokenizer.ggml.tokens")) req.nVocab = int64_t(tokens->length);
    if (opened) {
      auto planned = planFor(a, *opened, int(a.getInt("ep", 1)), plan::kvOptionsOfLog(L, req.fallback).tp, std::nullopt);
      if (!planned) return kExitCannotRun;
      req.weightsPerRank = planned->second.ranks.front().resident;
    }
    if (const auto b = budgetOf(a)) {
      req.deviceTotal = b->total;
      if (a.has("gpu-memory-utilization")) req.utilization = b->utilization;
    }
    req.cudaGraphs = a.has("reserve-cuda-graphs") ? plan::parseSize(a.get("reserve-cuda-graphs")) : 0;
    const plan::LogCheckInputs in = plan::logCheckInputs(model, L, req);
    auto rows = plan::checkEngineLog(model, L, in);
    if (!rows) {
      std::cerr << "weightscope plan: " << rows.error().describe() << "\n";
      return kExitCannotRun;
    }
    bool differs = false;
    for (const auto& r : rows.value()) differs |= r.verdict == plan::LogVerdict::Differs;
    const std::string engine = L.engine == "vllm" ? "vLLM" : L.engine == "sglang" ? "SGLang" : "llama.cpp";
    const std::string settings = L.engine == "llama.cpp" ? "n_ctx " + std::to_string(L.maxModelLen) + ", n_seq_max " + std::to_string(L.nSeqMax) +
                                                               (L.kvUnified == 1 ? ", unified" : "") + (L.swaFull ? ", full-size SWA" : "") + ", K " + L.typeK
                                                         : "TP " + std::to_string(in.kv.tp) + ", max model len " +
                                 (in.kv.maxModelLen > 0 ? std::to_string(in.kv.maxModelLen) : std::string("the config's")) + ", block " +
                                 std::to_string(in.kv.blockSize) + ", KV " + in.kv.dtype;
    if (a.has("json")) {
      nlohmann::json jr = nlohmann::json::array();
      for (const auto& r : rows.value())
        jr.push_back({{"quantity", r.quantity}, {"worker", r.worker}, {"predicted", r.predicted}, {"logged", r.logged}, {"difference", r.difference},
                      {"verdict", plan::logVerdictName(r.verdict)}, {"explanation", r.explanation}});
      std::cout << nlohmann::json{{"schema", "weightscope.plan-log/1"}, {"path", path}, {"log", L.path}, {"engine", L.engine}, {"version", L.version},
                                  {"settings", settings}, {"rows", jr}, {"differs", differs}}
                       .dump(1)
                << "\n";
    } else {
      std::printf("%s log %s%s at %s\n", engine.c_str(), L.path.c_str(), L.version.empty() ? "" : (" (" + L.version + ")").c_str(), settings.c_str());
      std::printf("%-36s %-18s %16s %16s %12s  %s\n", "figure", "worker", "predicted", "logged", "difference", "verdict");
      for (const auto& r : rows.value()) {
        const bool lines = r.predicted.size() > 16 || r.logged.size() > 16;  // llama.cpp's whole lines: one below the other
        std::printf("%-36s %-18s %16s %16s %12s  %s\n", r.quantity.c_str(), r.worker.empty() ? "-" : r.worker.c_str(),
                    lines ? "(below)" : r.predicted.empty() ? "-" : r.predicted.c_str(), lines ? "(below)" : r.logged.c_str(),
                    r.difference.empty() ? "-" : r.difference.c_str(), plan::logVerdictName(r.verdict));
        if (lines) std::printf("    predicted: %s\n    logged:    %s\n", r.predicted.c_str(), r.logged.c_str());
        std::printf("    %s\n", r.explanation.c_str());
      }
    }
    return differs ? kExitFindings : kExitOk;
  }

  // --fit N: the fewest GPUs (EP size, then attention TP within it, as vLLM's EP = TP x DP) whose
  // every rank holds its weights and N concurrent requests of --max-model-len tokens; the smaller
  // layouts that fall short are listed with how far. --gpu-mem A,B,...: the same for each device,
  // side by side - which GPU, and how many of it.
  struct FitOutcome {
    plan::GpuBudget budget;
    plan::FitResult fit;
  };
  // The search's error goes to stderr, or into *why where the caller reports it (a matrix cell).
  static std::optional<FitOutcome> fitOf(const Args& a, const Checkpoint& c, double target, std::string* why = nullptr) {
    const std::optional<plan::GpuBudget> budget = budgetOf(a);
    if (!budget || !a.has("max-model-len")) throw std::invalid_argument("--fit N needs --gpu-mem and --max-model-len");
    auto planned = planFor(a, c, 1, 1, budget);  // the base options; the search replaces placement and TP
    if (!planned) return std::nullopt;
    const KvPlan base = kvPlanOf(a, c, 1);
    const uint64_t graphs = a.has("reserve-cuda-graphs") ? plan::parseSize(a.get("reserve-cuda-graphs")) : 0;
    auto fit = plan::fitDeployment(c, planned->first, placementSpecOf(a, residencyRulesOf(a)), base.options, graphs, target);
    if (!fit) {
      if (why) *why = fit.error().describe();
      else std::cerr << "weightscope plan: " << fit.error().describe() << "\n";
      return std::nullopt;
    }
    return FitOutcome{*budget, fit.value()};
  }

  // The largest EP the search tried (1 when it tried none): "nothing up to EP N fits".
  static int lastEpTried(const plan::FitResult& fit) { return fit.tried.empty() ? 1 : fit.tried.back().ep; }

  static nlohmann::json fitRowJson(const plan::FitRow& r) {
    return nlohmann::json{{"ep", r.ep}, {"tp", r.tp}, {"weights_fit", r.weightsFit}, {"min_rank_concurrency", r.minRankConcurrency},
                          {"concurrency", r.concurrency}, {"fits", r.fits}};
  }

  // "A,B,C" -> its entries; an empty one is a usage error naming the flag.
  static std::vector<std::string> listOf(const std::string& flag, const std::string& s) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= s.size()) {
      const size_t comma = std::min(s.find(',', at), s.size());
      if (comma == at) throw std::invalid_argument("--" + flag + " '" + s + "': an empty entry in the list");
      out.push_back(s.substr(at, comma - at));
      at = comma + 1;
    }
    return out;
  }

  static int runFit(const Args& a, const Checkpoint& c) {
    const double target = std::stod(a.get("fit"));
    if (!(target > 0)) throw std::invalid_argument("--fit takes the number of concurrent requests, more than 0");
    if (a.get("gpu-mem").find(',') != std::string::npos || a.get("runtime").find(',') != std::string::npos) return runFitMatrix(a, c, target);
    const auto outcome = fitOf(a, c, target);
    if (!outcome) return kExitCannotRun;
    const plan::FitResult& fit = outcome->fit;
    nlohmann::json tried = nlohmann::json::array(), answer = nullptr;
    for (const auto& r : fit.tried) tried.push_back(fitRowJson(r));
    if (fit.answer) answer = fitRowJson(*fit.answer);
    const int lastEp = lastEpTried(fit);
    if (a.has("json")) {
      std::cout << nlohmann::json{{"schema", "weightscope.plan-fit/1"}, {"path", c.root}, {"target_concurrency", target},
                                  {"max_model_len", a.getInt("max-model-len", -1)}, {"budget", budgetJson(outcome->budget, reserveOf(a))},
                                  {"answer", answer}, {"tried", tried}}
                       .dump(1)
                << "\n";
    } else {
      std::printf("fit %g requests of %lld tokens, %s usable per GPU (%s)\n", target, (long long)a.getInt("max-model-len", -1),
                  formatBytes(outcome->budget.usable()).c_str(), outcome->budget.source.c_str());
      for (const auto& r : tried)
        std::printf("  EP %-3d TP %-2d  %-18s  %10.2f concurrent requests (worst rank %.2f x %d groups)%s\n", r["ep"].get<int>(), r["tp"].get<int>(),
                    r["weights_fit"].get<bool>() ? "weights fit" : "weights do not fit", r["concurrency"].get<double>(), r["min_rank_concurrency"].get<double>(),
                    r["ep"].get<int>() / r["tp"].get<int>(), r["fits"].get<bool>() ? "  <- the fewest GPUs that fit" : "");
      if (answer.is_null()) std::printf("nothing up to EP %d fits\n", lastEp);
    }
    return answer.is_null() ? kExitFindings : kExitOk;
  }

  // --fit N over several devices and / or runtimes (--gpu-mem A,B --runtime vllm,sglang): each
  // pair's fewest GPUs as --fit N with that device and runtime alone finds them (its budget,
  // residency rules, vLLM's defaults or SGLang's share), with what the engine says of that
  // layout (validate's engine rules); the pair needing the fewest GPUs that its engine does not
  // refuse is named. Exit 0 when one fits, 1 when none does.
  static int runFitMatrix(const Args& a, const Checkpoint& c, double target) {
    struct Cell {
      std::string device, runtime;
      FitOutcome outcome;
      std::string error;  // the search could not be made for this pair (an engine that cannot budget this GPU), said why
      std::optional<val::engines::EngineCheck> engine;
      std::string engineProblem;  // the layout the engine cannot be asked about, said why
      bool refused() const { return (engine && engine->refuses()) || !engineProblem.empty(); }
    };
    std::vector<Cell> cells;
    for (const std::string& d : listOf("gpu-mem", a.get("gpu-mem")))
      for (const std::string& rt : listOf("runtime", a.get("runtime", "vllm"))) {
        const Args one = a.with("gpu-mem", d).with("runtime", rt);
        Cell cell{d, rt, {}, "", std::nullopt, ""};
        auto outcome = fitOf(one, c, target, &cell.error);
        if (!outcome && cell.error.empty()) return kExitCannotRun;  // the placement itself: no pair can be planned
        if (outcome) cell.outcome = std::move(*outcome);
        if (const auto& ans = cell.outcome.fit.answer) {
          try {
            cell.engine = engineCheckOf(one, c, ans->ep, ans->tp);
          } catch (const std::invalid_argument& e) {
            cell.engineProblem = e.what();
          }
        }
        cells.push_back(std::move(cell));
      }
    // The fewest GPUs its engine takes; between equals, the first listed.
    const Cell* best = nullptr;
    for (const auto& cell : cells)
      if (cell.outcome.fit.answer && !cell.refused() && (!best || cell.outcome.fit.answer->ep < best->outcome.fit.answer->ep)) best = &cell;
    auto engineText = [](const Cell& cell) {
      return !cell.engineProblem.empty() ? cell.engineProblem : cell.engine ? cell.engine->verdict : std::string();
    };
    if (a.has("json")) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& cell : cells) {
        if (!cell.error.empty()) {
          out.push_back({{"gpu_mem", cell.device}, {"runtime", cell.runtime}, {"error", cell.error}, {"answer", nullptr}, {"engine", nullptr}});
          continue;
        }
        nlohmann::json tried = nlohmann::json::array(), findings = nlohmann::json::array();
        for (const auto& r : cell.outcome.fit.tried) tried.push_back(fitRowJson(r));
        if (cell.engine)
          for (const auto& f : cell.engine->findings) findings.push_back({{"code", f.code}, {"severity", val::severityName(f.severity)}, {"message", f.message}});
        out.push_back({{"gpu_mem", cell.device}, {"runtime", cell.runtime}, {"budget", budgetJson(cell.outcome.budget, reserveOf(a))},
                       {"answer", cell.outcome.fit.answer ? fitRowJson(*cell.outcome.fit.answer) : nlohmann::json(nullptr)}, {"tried", tried},
                       {"engine", cell.outcome.fit.answer ? nlohmann::json{{"verdict", engineText(cell)}, {"refuses", cell.refused()}, {"findings", findings}}
                                                          : nlohmann::json(nullptr)}});
      }
      std::cout << nlohmann::json{{"schema", "weightscope.plan-fit-matrix/1"}, {"path", c.root}, {"target_concurrency", target},
                                  {"max_model_len", a.getInt("max-model-len", -1)}, {"cells", out},
                                  {"fewest", best ? nlohmann::json{{"gpu_mem", best->device}, {"runtime", best->runtime}} : nlohmann::json(nullptr)}}
                       .dump(1)
                << "\n";
    } else {
      std::printf("fit %g requests of %lld tokens, the fewest GPUs of each device and runtime\n", target, (long long)a.getInt("max-model-len", -1));
      std::printf("  %-18s %-8s %12s  %-12s %5s  %-20s %s\n", "device", "runtime", "usable/GPU", "layout", "GPUs", "concurrent requests", "engine");
      for (const auto& cell : cells) {
        const auto& ans = cell.outcome.fit.answer;
        const std::string usable = formatBytes(cell.outcome.budget.usable());
        if (!cell.error.empty()) {
          std::printf("  %-18s %-8s %12s  %s\n", cell.device.c_str(), cell.runtime.c_str(), "-", cell.error.c_str());
          continue;
        }
        if (!ans) {
          std::printf("  %-18s %-8s %12s  %-12s %5s  nothing up to EP %d fits\n", cell.device.c_str(), cell.runtime.c_str(), usable.c_str(), "-", "-",
                      lastEpTried(cell.outcome.fit));
          continue;
        }
        const std::string layout = "EP " + std::to_string(ans->ep) + " TP " + std::to_string(ans->tp);
        std::printf("  %-18s %-8s %12s  %-12s %5d  %-20.2f %s%s\n", cell.device.c_str(), cell.runtime.c_str(), usable.c_str(), layout.c_str(), ans->ep, ans->concurrency,
                    engineText(cell).empty() ? "-" : engineText(cell).c_str(), &cell == best ? "  <- the fewest GPUs" : "");
      }
      if (!best) std::printf("none fits that its engine takes\n");
    }
    return best ? kExitOk : kExitFindings;
  }
};

}  // namespace

void registerPlan(CommandRegistry& r) { r.add(std::make_unique<PlanCommand>()); }

}  // namespace ws::cli
