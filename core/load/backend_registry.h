// Backend selection by name, with the CUDA backend registered at start-up when it is built.
#pragma once

#include <functional>
#include <memory>

#include "core/load/device_backend.h"

namespace ws::load {

using CudaFactory = std::function<Result<std::unique_ptr<DeviceBackend>>(int index)>;
void registerCudaBackend(CudaFactory f);
bool cudaBackendBuilt();

}  // namespace ws::load
