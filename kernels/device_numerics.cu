// GPU dequantization and statistics: the element and block formulas of
// core/numerics/decode_element.h (the same source the CPU tests run), one thread per element or
// per GGUF block, over device copies of exactly the bytes the selected rows need.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>

#include "core/numerics/decode_element.h"
#include "core/numerics/dequant.h"
#include "kernels/cuda_backend.h"

namespace ws::kernels {

namespace {

__global__ void elementsKernel(num::DecodeDesc d, uint64_t firstRow, uint64_t rows, float* out) {
  const uint64_t n = rows * d.cols;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    out[i] = num::decodeElement(d, firstRow + i / d.cols, i % d.cols);
}

__global__ void blocksKernel(num::DecodeDesc d, uint64_t firstBlock, uint64_t nblocks, float* out) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < nblocks; i += uint64_t(gridDim.x) * blockDim.x)
    num::decodeGgufBlock(d, firstBlock + i, out + i * d.blockElems);
}

constexpr int kBins = 284 * 4;  // num::Histogram::log2Fine()

struct Accum {
  unsigned long long nan, inf, zero, subnormal, negative, finite;
  unsigned int minBits, maxBits;  // ordered-int encodings of the float min / max
  double sum, sumSquares;
  unsigned long long below, above;
  unsigned long long bins[kBins];
};

// Floats as unsigned ints that order like the floats (for atomicMin / atomicMax).
__device__ __forceinline__ unsigned int orderedBits(float f) {
  const unsigned int u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__global__ void statsKernel(const float* v, uint64_t n, Accum* a) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    const float x = v[i];
    if (isnan(x)) { atomicAdd(&a->nan, 1ull); continue; }
    if (isinf(x)) { atomicAdd(&a->inf, 1ull); atomicAdd(&a->above, 1ull); continue; }
    if (x < 0.0f) atomicAdd(&a->negative, 1ull);
    if (x == 0.0f) { atomicAdd(&a->zero, 1ull); atomicAdd(&a->below, 1ull); }
    else {
      if (fabsf(x) < 1.17549435e-38f) atomicAdd(&a->subnormal, 1ull);
      atomicAdd(&a->bins[num::hdQuarterOctave(x) + 152 * 4], 1ull);
    }
    atomicAdd(&a->finite, 1ull);
    atomicMin(&a->minBits, orderedBits(x));
    atomicMax(&a->maxBits, orderedBits(x));
    atomicAdd(&a->sum, double(x));
    atomicAdd(&a->sumSquares, double(x) * double(x));
  }
}

__global__ void deviationKernel(const float* v, uint64_t n, double mean, double* out) {
  double local = 0;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    const float x = v[i];
    if (isfinite(x)) local += (double(x) - mean) * (double(x) - mean);
  }
  atomicAdd(out, local);
}

float fromOrdered(unsigned int o) {
  const unsigned int u = (o & 0x80000000u) ? (o & 0x7FFFFFFFu) : ~o;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Device copies of the regions a row range needs; frees them on destruction.
class DeviceRegions {
 public:
  ~DeviceRegions() {
    for (void* p : allocs_) cudaFree(p);
  }
  // Copies [from, from + bytes) of r to the device; returns the rebased pointer for r's indexing.
  Result<bool> copy(num::Region& r, uint64_t from, uint64_t bytes) {
    if (!r.data || !r.bytes) return true;
    void* p = nullptr;
    if (cudaError_t e = cudaMalloc(&p, std::max<uint64_t>(bytes, 1)); e != cudaSuccess)
      return Error{ErrorCode::Io, std::string("cudaMalloc failed: ") + cudaGetErrorString(e), {}, std::nullopt, {}};
    allocs_.push_back(p);
    if (cudaError_t e = cudaMemcpy(p, r.data + from, bytes, cudaMemcpyHostToDevice); e != cudaSuccess)
      return Error{ErrorCode::Io, std::string("cudaMemcpy failed: ") + cudaGetErrorString(e), {}, std::nullopt, {}};
    r.data = static_cast<const uint8_t*>(p) - from;
    return true;
  }
  Result<bool> whole(num::Region& r) { return copy(r, 0, r.bytes); }

 private:
  std::vector<void*> allocs_;
};

Result<bool> prepare(num::DecodeDesc& d, uint64_t firstRow, uint64_t rows, DeviceRegions& regions) {
  if (d.kind == num::DescKind::Kt && d.parts > uint32_t(num::kMaxNuma))
    return Error{ErrorCode::Usage, "more than " + std::to_string(num::kMaxNuma) + " NUMA parts", {}, std::nullopt, {}};
  // The weight: only the selected rows (every layout here is row-major in whole rows).
  if (d.kind != num::DescKind::Kt) {
    const uint64_t rowBytes = d.rows ? d.w.bytes / d.rows : 0;
    if (auto r = regions.copy(d.w, firstRow * rowBytes, rows * rowBytes); !r) return r;
  }
  for (num::Region* r : {&d.s, &d.g, &d.zp, &d.gidx})
    if (auto x = regions.whole(*r); !x) return x;
  for (uint32_t k = 0; k < d.parts && k < uint32_t(num::kMaxNuma); ++k) {
    if (auto x = regions.whole(d.ktW[k]); !x) return x;
    if (auto x = regions.whole(d.ktS[k]); !x) return x;
  }
  return true;
}

Result<bool> launch(const num::DecodeDesc& d, uint64_t firstRow, uint64_t rows, float* out) {
  if (d.kind == num::DescKind::GgufBlocks) {
    const uint64_t perRow = d.cols / d.blockElems;
    const uint64_t n = rows * perRow;
    blocksKernel<<<unsigned(std::min<uint64_t>((n + 255) / 256, 65535)), 256>>>(d, firstRow * perRow, n, out);
  } else {
    const uint64_t n = rows * d.cols;
    elementsKernel<<<unsigned(std::min<uint64_t>((n + 255) / 256, 65535)), 256>>>(d, firstRow, rows, out);
  }
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
    return Error{ErrorCode::Io, std::string("kernel failed: ") + cudaGetErrorString(e), {}, std::nullopt, {}};
  return true;
}

}  // namespace

Result<std::vector<float>> dequantizeOnDevice(const Checkpoint& c, uint32_t logical, uint64_t firstRow, uint64_t rows, int device) {
  std::string why;
  if (!deviceAvailable(device, &why)) return Error{ErrorCode::Usage, why, {}, std::nullopt, {}};
  cudaSetDevice(device);
  auto dec = num::makeDecoder(c, logical);
  if (!dec) return dec.error();
  num::DecodeDesc d = dec.value()->describe();
  if (firstRow + rows > d.rows) return Error{ErrorCode::Usage, "row range past the end of the tensor", {}, std::nullopt, c.logical[logical].name};
  DeviceRegions regions;
  if (auto r = prepare(d, firstRow, rows, regions); !r) return r.error();
  float* out = nullptr;
  if (cudaError_t e = cudaMalloc(&out, std::max<uint64_t>(rows * d.cols * 4, 4)); e != cudaSuccess)
    return Error{ErrorCode::Io, std::string("cudaMalloc failed: ") + cudaGetErrorString(e), {}, std::nullopt, c.logical[logical].name};
  std::vector<float> host(rows * d.cols);
  auto r = launch(d, firstRow, rows, out);
  if (r) cudaMemcpy(host.data(), out, host.size() * 4, cudaMemcpyDeviceToHost);
  cudaFree(out);
  if (!r) return r.error();
  return host;
}

Result<DeviceStats> statsOnDevice(const Checkpoint& c, uint32_t logical, int device) {
  std::string why;
  if (!deviceAvailable(device, &why)) return Error{ErrorCode::Usage, why, {}, std::nullopt, {}};
  cudaSetDevice(device);
  auto dec = num::makeDecoder(c, logical);
  if (!dec) return dec.error();
  num::DecodeDesc d = dec.value()->describe();
  DeviceRegions regions;
  if (auto r = prepare(d, 0, d.rows, regions); !r) return r.error();
  float* vals = nullptr;
  Accum* acc = nullptr;
  cudaMalloc(&vals, std::max<uint64_t>(d.rows * d.cols * 4, 4));
  cudaMalloc(&acc, sizeof(Accum));
  Accum init{};
  init.minBits = 0xFFFFFFFFu;
  init.maxBits = 0;
  cudaMemcpy(acc, &init, sizeof(Accum), cudaMemcpyHostToDevice);
  auto r = launch(d, 0, d.rows, vals);
  Accum a{};
  double m2 = 0;
  const uint64_t n = d.rows * d.cols;
  if (r) {
    statsKernel<<<unsigned(std::min<uint64_t>((n + 255) / 256, 65535)), 256>>>(vals, n, acc);
    cudaDeviceSynchronize();
    cudaMemcpy(&a, acc, sizeof(Accum), cudaMemcpyDeviceToHost);
    if (a.finite) {  // second pass: sum of squared deviations from the mean, in double
      double* dev = nullptr;
      cudaMalloc(&dev, sizeof(double));
      cudaMemset(dev, 0, sizeof(double));
      deviationKernel<<<unsigned(std::min<uint64_t>((n + 255) / 256, 65535)), 256>>>(vals, n, a.sum / double(a.finite), dev);
      cudaMemcpy(&m2, dev, sizeof(double), cudaMemcpyDeviceToHost);
      cudaFree(dev);
    }
  }
  cudaFree(vals);
  cudaFree(acc);
  if (!r) return r.error();
  DeviceStats out;
  out.stats.count = d.rows * d.cols;
  out.stats.nan = a.nan, out.stats.inf = a.inf, out.stats.zero = a.zero, out.stats.subnormal = a.subnormal, out.stats.negative = a.negative;
  out.sum = a.sum, out.sumSquares = a.sumSquares;
  out.histogram.below = a.below, out.histogram.above = a.above;
  for (int i = 0; i < kBins; ++i) out.histogram.counts[size_t(i)] = a.bins[i];
  if (a.finite) {
    // min/max/absmax from the ordered encodings; mean/std from the double sums
    const float mn = fromOrdered(a.minBits), mx = fromOrdered(a.maxBits);
    const double mean = a.sum / double(a.finite);
    out.stats = num::Stats::fromMoments(out.stats, a.finite, mn, mx, std::max(std::fabs(double(mn)), std::fabs(double(mx))), mean,
                                        m2);
  }
  return out;
}

}  // namespace ws::kernels
