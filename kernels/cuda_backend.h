// The CUDA device backend and the GPU dequantization / statistics entry points. Built only when
// CMake finds a CUDA toolkit; every function reports "no CUDA device" cleanly on a machine
// without one (the driver's own message included).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/load/device_backend.h"
#include "core/model/checkpoint.h"
#include "core/numerics/decode_desc.h"
#include "core/numerics/stats.h"

namespace ws::kernels {

// True when device `index` exists and can be used; `why` says why not.
bool deviceAvailable(int index, std::string* why = nullptr);
// The device's compute capability as major x 10 + minor (cudaDevAttrComputeCapabilityMajor/Minor):
// what tst_gpu holds core/plan/devices' capability column to.
Result<int> computeCapability(int index);

Result<std::unique_ptr<load::DeviceBackend>> makeCudaBackend(int index);

// Registers makeCudaBackend with the core's backend registry ("cuda", "cuda:N").
void registerCuda();

// Rows [firstRow, firstRow + rows) of a logical tensor, dequantized to F32 on the GPU with the
// same formulas as the CPU reference (core/numerics/decode_element.h).
Result<std::vector<float>> dequantizeOnDevice(const Checkpoint& c, uint32_t logical, uint64_t firstRow, uint64_t rows, int device = 0);

// The same rows as BF16 (round to nearest even of the F32 value), converted on the device.
Result<std::vector<uint16_t>> dequantizeOnDeviceBf16(const Checkpoint& c, uint32_t logical, uint64_t firstRow, uint64_t rows, int device = 0);

// The load's derived buffers, built on the device by the kernel bodies of
// core/numerics/kernel_threads.h (the host backend runs the same bodies over the same grid):
// rows [firstRow, firstRow + rows) of a description as BF16 into device memory `out` (the rows'
// source bytes staged to the device first, unless onDevice: its regions are device memory
// already), and a batch of matrices transposed device to device.
Result<bool> decodeBf16Into(num::DecodeDesc d, uint64_t firstRow, uint64_t rows, uint16_t* out, bool onDevice = false);
Result<bool> transposeOnDevice(const uint8_t* src, uint8_t* dst, uint64_t mats, uint64_t rows, uint64_t cols, uint32_t elemBytes);

// Statistics and the quarter-octave log2 histogram of the whole logical tensor, on the GPU:
// counts equal the CPU's exactly; min, max and absmax exactly; mean and standard deviation from
// double sums (within 1e-9 relative of the CPU's Welford values for any tensor that fits).
struct DeviceStats {
  num::Stats stats;  // counts, min, max, absmax; mean/std filled from the device sums
  num::Histogram histogram = num::Histogram::log2Fine();
  double sum = 0, sumSquares = 0;
};
Result<DeviceStats> statsOnDevice(const Checkpoint& c, uint32_t logical, int device = 0);

// The same statistics of a logical tensor's scales, by kind ("scale", "global_scale" for scale
// tensors; "d", "dmin", "sub_scale", "sub_min" for the fields inside GGUF blocks), computed on
// the device from the same formulas as num::scaleStatistics.
Result<std::map<std::string, DeviceStats>> scaleStatsOnDevice(const Checkpoint& c, uint32_t logical, int device = 0);

// Benchmarks (bench/gpu_dequant_bench.cpp): the whole logical tensor dequantized to BF16 with its
// inputs already on the device, best of `repeat` runs timed with CUDA events; and a device-to-
// device copy of `bytes` for comparison.
// The timed output's first, middle and last rows are read back (sampleRows, row-major BF16), so the
// benchmark can compare what it timed with the CPU decoder instead of trusting the kernel.
struct KernelTiming {
  double seconds = 0;
  uint64_t bytesIn = 0, bytesOut = 0;
  uint64_t sampleRowIndex[3] = {0, 0, 0};
  std::vector<uint16_t> sampleRows;
};
Result<KernelTiming> timeDequantBf16(const Checkpoint& c, uint32_t logical, int repeat, int device = 0);
Result<double> timeDeviceCopy(uint64_t bytes, int repeat, int device = 0);

// The deepest per-thread local memory of the decode kernels, reserved on `device` up front
// (cudaLimitStackSize). The driver otherwise grows every resident thread's local memory at the
// first launch that needs more than the default 1 KiB - on an H200 by tens of MiB taken in the
// middle of a load, which its residency check would count as the load's. Returns the bytes per
// thread the kernels need.
Result<uint64_t> reserveKernelLocalMemory(int device);

}  // namespace ws::kernels
