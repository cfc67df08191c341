// The GPU dequantizer, as the core sees it: kernels/ registers, at start-up, a probe that registers
// one the first time it is asked for, when a device is present (kernels::registerCuda); the core - diff, for one - uses it when asked,
// and falls back to the CPU reference otherwise. The core never links CUDA.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/util/error.h"

namespace ws::num {

// Rows [firstRow, firstRow + rows) of logical tensor `logical`, F32, bit-identical to the CPU
// reference (the kernels evaluate the decoders' own DecodeDesc).
using DeviceDequantFn = std::function<Result<std::vector<float>>(const Checkpoint&, uint32_t logical, uint64_t firstRow, uint64_t rows)>;

void registerDeviceDequant(DeviceDequantFn fn, std::string deviceName);
// A probe run once, at the first deviceDequant() call, that may register a dequantizer: asking
// the driver for devices initialises CUDA (a fraction of a second on a GPU machine), which a
// command that never dequantizes on a device should not pay. An explicit registration before
// that call wins, and the probe then never runs.
void setDeviceDequantProbe(std::function<void()> probe);
void unregisterDeviceDequant();
// The registered dequantizer and its device name ("cuda:0"), or {nullptr, ""} when there is none.
// Shared, so unregistering cannot pull it from under a caller still using it.
std::pair<std::shared_ptr<const DeviceDequantFn>, std::string> deviceDequant();

}  // namespace ws::num
