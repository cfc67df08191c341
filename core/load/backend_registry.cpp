// "host", "cuda", "cuda:N" -> a backend. The CUDA backend registers itself from kernels/ (the core
// does not depend on CUDA); without it, or without a device, "cuda" is a clear error.
#include "core/load/backend_registry.h"

#include <unistd.h>

#include <stdexcept>

#include "core/plan/devices.h"

namespace ws::load {

namespace {
CudaFactory& cudaFactory() {
  static CudaFactory f;
  return f;
}
}  // namespace

void registerCudaBackend(CudaFactory f) { cudaFactory() = std::move(f); }

bool cudaBackendBuilt() { return bool(cudaFactory()); }

Result<std::unique_ptr<DeviceBackend>> makeBackend(const std::string& device) {
  if (device == "host") {
    // Capacity: the machine's physical memory, which is what a host load can really use.
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    const uint64_t ram = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : UINT64_MAX / 2;
    return std::unique_ptr<DeviceBackend>(std::make_unique<HostBackend>(ram));
  }
  if (device.rfind("host:", 0) == 0) {
    // A stand-in with a GPU's capacity (the device table's driver figure, or a size), for a dry
    // run of a load planned for that GPU.
    try {
      const plan::GpuBudget b = plan::budgetFor(device.substr(5), 1.0, 0);
      return std::unique_ptr<DeviceBackend>(std::make_unique<HostBackend>(b.total, 4, 256, "host stand-in for " + device.substr(5)));
    } catch (const std::invalid_argument& e) {
      std::string why = e.what();
      if (why.rfind("--gpu-mem ", 0) == 0) why.erase(0, 10);  // budgetFor speaks of the plan flag
      return Error{ErrorCode::Usage, "--device " + device + ": " + why, {}, std::nullopt, {}};
    }
  }
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    if (!cudaFactory()) return Error{ErrorCode::Usage, "this build has no CUDA backend (built without the CUDA toolkit); use --device host", {}, std::nullopt, {}};
    int index = 0;
    if (device.size() > 5) {
      try {
        index = std::stoi(device.substr(5));
      } catch (...) {
        return Error{ErrorCode::Usage, "'" + device + "' is not cuda:N", {}, std::nullopt, {}};
      }
    }
    return cudaFactory()(index);
  }
  return Error{ErrorCode::Usage, "unknown device '" + device + "' (host, host:SIZE|DEVICE, cuda or cuda:N)", {}, std::nullopt, {}};
}

}  // namespace ws::load
