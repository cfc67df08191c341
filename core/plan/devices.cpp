#include "core/plan/devices.h"

#include <cmath>
#include <map>
#include <stdexcept>

namespace ws::plan {

const std::vector<DeviceSpec>& deviceTable() {
  // Totals as the CUDA runtime reports them (cudaMemGetInfo's total, MiB), which is what vLLM
  // budgets --gpu-memory-utilization from (vllm/utils/mem_utils.py, MemorySnapshot.measure:
  // torch.cuda.mem_get_info). Where no such reading is published, nvidia-smi's memory.total: on the
  // H200 of the GPU proof that was 616 MiB above cudaMemGetInfo's (143,771 against 143,155), so
  // those rows may overstate by as much - by how much on each device is unknown. The marketing names
  // are decimal GB and 5-9 GB away from what a runtime can allocate.
  static const std::vector<DeviceSpec> t = {
      {"H100-80GB", 81'559, 0, false, "nvidia-smi on H100 80GB HBM3 (modal-labs/modal-client PR #2797)", 90},
      {"H200-141GB", 143'155, 143'771, false, "cudaMemGetInfo on an H200, driver 580.159.04 (weightscope GPU proof, docs/gpu-proof/2026-12-04; nvidia-smi shows 143,771)", 90},
      {"B200-180GB", 183'359, 0, false, "nvidia-smi on B200 (NVIDIA/TensorRT-LLM issue #10278)", 100},
      // 79.25 GiB: torch's "total capacity" of an A100 80GB (levihsu/OOTDiffusion#235), which two vLLM
      // logs of one A100 80GB at utilizations 0.5 and 0.25 pin to 79.28 +- 0.04 GiB (their available
      // memory differs by 0.25 x the total: tests/data/engine_logs/vllm-Qwen2-7B-Instruct-1/-2.log).
      {"A100-80GB", 81'152, 81'920, false, "torch's total capacity 79.25 GiB on an A100 80GB (levihsu/OOTDiffusion#235; nvidia-smi shows 81,920, modal-labs/modal-client PR #2797)", 80},
      {"A100-40GB", 40'960, 0, false, "nvidia-smi on A100-SXM4-40GB (modal-labs/modal-client PR #2797)", 80},
      {"L40S-48GB", 45'486, 46'068, false, "cudaMemGetInfo's total 44.42 GiB as vLLM 0.10.2 printed it on an L40S (\"Free memory on device (43.93/44.42 GiB)\", tests/data/engine_logs/vllm-Qwen3-235B-A22B-Instruct-2507-FP8-1.log; nvidia-smi shows 46,068, modal-labs/modal-client PR #2797)", 89},
      // Unified LPDDR5x: nvidia-smi reports no device total; the nominal 128 GB (= 122,070 MiB) is
      // shared with the CPU, so give --gpu-mem a size for what the OS leaves the GPU.
      {"GB10", 122'070, 0, true, "nominal 128 GB of unified memory (DGX Spark); the driver reports no device total", 121},
  };
  return t;
}

const DeviceSpec* findDevice(std::string_view name) {
  for (const auto& d : deviceTable())
    if (d.name == name) return &d;
  return nullptr;
}

std::string capabilityName(int cc) { return "SM " + std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

uint64_t GpuBudget::usable() const {
  const double share = std::floor(double(total) * utilization);
  return share > double(contextReserve) ? uint64_t(share) - contextReserve : 0;
}

uint64_t parseSize(const std::string& s) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (...) {
    throw std::invalid_argument("'" + s + "' is not a size (e.g. 141GiB, 80GB)");
  }
  const std::string unit = s.substr(used);
  static const std::map<std::string, double> units = {{"", 1},          {"B", 1},           {"KB", 1e3},        {"MB", 1e6},
                                                      {"GB", 1e9},      {"TB", 1e12},       {"KiB", 1024.0},    {"MiB", 1048576.0},
                                                      {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  auto it = units.find(unit);
  if (it == units.end() || v < 0 || !std::isfinite(v)) throw std::invalid_argument("'" + s + "': unknown unit '" + unit + "'");
  return uint64_t(std::llround(v * it->second));
}

GpuBudget budgetFor(const std::string& gpuMem, double utilization, int64_t contextReserve) {
  if (!(utilization > 0) || utilization > 1)
    throw std::invalid_argument("--gpu-memory-utilization must be in (0, 1], got " + std::to_string(utilization));
  GpuBudget b;
  b.utilization = utilization;
  if (const DeviceSpec* d = findDevice(gpuMem)) {
    b.total = d->totalMiB << 20;
    b.device = std::string(d->name);
    b.source = std::string(d->name) + ": " + std::to_string(d->totalMiB) + " MiB, " + std::string(d->source);
    b.contextReserve = contextReserve >= 0 ? uint64_t(contextReserve) : kDefaultContextReserve;
    // GB10: nvidia-smi reports no total, and SGLang falls back to torch.cuda.mem_get_info's.
    b.nvidiaSmiMiB = double(d->nvidiaSmiMiB ? d->nvidiaSmiMiB : d->totalMiB);
  } else {
    std::string names;
    for (const auto& dev : deviceTable()) names += (names.empty() ? "" : ", ") + std::string(dev.name);
    try {
      b.total = parseSize(gpuMem);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("--gpu-mem '" + gpuMem + "' is neither a size (141GiB, 80GB) nor a known device (" + names + ")");
    }
    b.source = "given as " + gpuMem;
    b.nvidiaSmiMiB = double(b.total) / double(1 << 20);
    b.contextReserve = contextReserve >= 0 ? uint64_t(contextReserve) : 0;
  }
  return b;
}

}  // namespace ws::plan
