// GPU budgets: the device table (total memory as the driver reports it, each figure with its
// source) and the usable budget a runtime can allocate from it:
//   usable = total x --gpu-memory-utilization - CUDA context reserve
// the way vLLM budgets it (its utilization is a share of the whole device; the CUDA context and
// other non-torch memory come out of that share). Every line is named and can be overridden.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ws::plan {

struct DeviceSpec {
  std::string_view name;    // what --gpu-mem takes: "H200-141GB"
  uint64_t totalMiB;        // nvidia-smi's memory.total (cudaMemGetInfo's total, in MiB)
  uint64_t nvidiaSmiMiB;    // nvidia-smi's memory.total where it differs or is known apart (0: as totalMiB)
  bool unified;             // memory shared with the CPU (no device total of its own)
  std::string_view source;  // where totalMiB comes from
  // The compute capability as major x 10 + minor (90: SM 9.0), what engines choose kernels by
  // (vLLM's current_platform.get_device_capability); all from NVIDIA's CUDA GPUs table
  // (developer.nvidia.com/cuda-gpus, kCapabilitySource).
  int computeCapability;
};

inline constexpr std::string_view kCapabilitySource = "NVIDIA's CUDA GPUs table, developer.nvidia.com/cuda-gpus";

const std::vector<DeviceSpec>& deviceTable();
const DeviceSpec* findDevice(std::string_view name);

// "SM 9.0" for 90.
std::string capabilityName(int computeCapability);

// The CUDA context and driver reserve taken before any allocation: cudaMemGetInfo's free right
// after context creation is about this much below its total. An estimate until the GPU session
// (issue #19) measures it on the H200; --context-reserve overrides it.
constexpr uint64_t kDefaultContextReserve = uint64_t(512) << 20;

struct GpuBudget {
  uint64_t total = 0;            // bytes
  std::string source;            // "H200-141GB: nvidia-smi reports 143,771 MiB (...)", "given as 141GiB", "cuda:0 ..."
  double utilization = 1.0;      // --gpu-memory-utilization: the share of the device the engine takes
  uint64_t contextReserve = 0;   // CUDA context and driver
  double nvidiaSmiMiB = 0;       // nvidia-smi's memory.total, what SGLang sizes its defaults by (get_device_memory_capacity)
  std::string device;            // the table's name ("A100-80GB"); empty for a size: what vLLM picks its defaults by
  uint64_t usable() const;       // what the weights, the KV cache and the reserves share; 0 if the reserve exceeds the share
};

// --gpu-mem SIZE|DEVICE: a device from the table (with the default context reserve) or a size
// ("141GiB", "80GB": taken as the device total, no context reserve unless one is given).
// contextReserve < 0: the default for what was named. Throws std::invalid_argument naming what is wrong.
GpuBudget budgetFor(const std::string& gpuMem, double utilization, int64_t contextReserve = -1);

// "141GiB", "80GB", "1.5TiB", "123456" -> bytes. Throws std::invalid_argument.
uint64_t parseSize(const std::string& s);

}  // namespace ws::plan
