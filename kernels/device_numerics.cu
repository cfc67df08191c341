// GPU dequantization and statistics: the element and block formulas of
// core/numerics/decode_element.h (the same source the CPU tests run), one thread per element or
// per GGUF block, over device copies of exactly the bytes the selected rows need.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>

#include "core/numerics/decode_element.h"
#include "core/numerics/grid_stats.h"
#include "core/numerics/kernel_threads.h"
#include "core/numerics/stats_threads.h"
#include "core/numerics/gguf_scale_formulas.h"
#include "core/model/quant_scheme.h"
#include "core/numerics/dequant.h"
#include "core/numerics/element_reader.h"
#include "core/numerics/row_footprint.h"
#include "kernels/cuda_backend.h"

namespace ws::kernels {

namespace {

// This thread's place in the grid, for the bodies in core/numerics/kernel_threads.h.
__device__ __forceinline__ num::ThreadIndex here() { return {blockIdx.x, threadIdx.x, gridDim.x, blockDim.x}; }

// Statistics: each block folds its share into registers and a shared-memory histogram
// (core/numerics/stats_threads.h), writes one partial, and adds each occupied bin to the grid's
// with one atomic; the host merges the partials in block order (core/numerics/grid_stats.cpp).
__global__ void statsKernel(const float* v, uint64_t n, num::StatsPartial* blockPartials, unsigned long long* bins) {
  __shared__ unsigned int shared[num::kStatsBins];
  __shared__ num::StatsPartial parts[256];
  for (int i = threadIdx.x; i < num::kStatsBins; i += blockDim.x) shared[i] = 0;
  __syncthreads();
  num::StatsPartial p = num::emptyStatsPartial();
  num::statsThread(v, n, p, [&](int bin) { atomicAdd(&shared[bin], 1u); }, here());
  parts[threadIdx.x] = p;
  __syncthreads();
  if (threadIdx.x == 0) {  // the block's reduction, in thread order as the emulation does it
    num::StatsPartial b = num::emptyStatsPartial();
    for (unsigned t = 0; t < blockDim.x; ++t) num::statsMerge(b, parts[t]);
    blockPartials[blockIdx.x] = b;
  }
  for (int i = threadIdx.x; i < num::kStatsBins; i += blockDim.x)
    if (shared[i]) atomicAdd(&bins[i], (unsigned long long)shared[i]);
}

__global__ void deviationKernel(const float* v, uint64_t n, double mean, double* blockSums) {
  __shared__ double parts[256];
  parts[threadIdx.x] = num::deviationThread(v, n, mean, here());
  __syncthreads();
  if (threadIdx.x == 0) {
    double b = 0;
    for (unsigned t = 0; t < blockDim.x; ++t) b += parts[t];
    blockSums[blockIdx.x] = b;
  }
}

// Every dequantization kernel: body B (core/numerics/kernel_threads.h) to F32 or BF16.
template <num::Body B, class Out>
__global__ void decodeKernel(num::DecodeDesc d, uint64_t firstRow, uint64_t rows, Out* out) { num::decodeThread<B>(d, firstRow, rows, out, here()); }

// Launches the body num::bodyFor picks over its grid (or `blocks` blocks of 256, for the benchmark).
template <class Out>
void launchDecode(const num::DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, uint32_t blocks = 0) {
  const num::Body b = num::bodyFor(d);
  num::LaunchGrid g = num::launchGrid(num::workItems(b, d, rows));
  if (!g.blocks) return;  // nothing to decode launches nothing: an empty grid is an invalid launch
  if (blocks) g.blocks = blocks;
  switch (b) {
    case num::Body::Elements: decodeKernel<num::Body::Elements><<<g.blocks, g.threads>>>(d, firstRow, rows, out); break;
    case num::Body::Blocks: decodeKernel<num::Body::Blocks><<<g.blocks, g.threads>>>(d, firstRow, rows, out); break;
    case num::Body::Fp8Runs: decodeKernel<num::Body::Fp8Runs><<<g.blocks, g.threads>>>(d, firstRow, rows, out); break;
    case num::Body::Fp4Runs: decodeKernel<num::Body::Fp4Runs><<<g.blocks, g.threads>>>(d, firstRow, rows, out); break;
    case num::Body::IntRuns: decodeKernel<num::Body::IntRuns><<<g.blocks, g.threads>>>(d, firstRow, rows, out); break;
    case num::Body::Q4kRuns: decodeKernel<num::Body::Q4kRuns><<<g.blocks, g.threads>>>(d, firstRow, rows, out); break;
    case num::Body::GgufRuns: decodeKernel<num::Body::GgufRuns><<<g.blocks, g.threads>>>(d, firstRow, rows, out); break;
  }
}
// The tiled transpose (core/numerics/kernel_threads.h): each block moves a tile through shared
// memory, load phase and store phase either side of a barrier, then strides to its next tile.
template <class T>
__global__ void transposeKernel(const T* src, T* dst, num::TransposeShape s) {
  __shared__ T tile[num::kTransposeTile][num::kTransposeTile + 1];
  for (uint64_t index = blockIdx.x; index < s.tiles(); index += gridDim.x) {  // the same count for every thread of the block
    num::transposeTilePhase(src, dst, tile, s, index, threadIdx.x, false);
    __syncthreads();
    num::transposeTilePhase(src, dst, tile, s, index, threadIdx.x, true);
    __syncthreads();  // the tile is free for the next one
  }
}

__global__ void toBf16Kernel(const float* v, uint64_t n, uint16_t* out) { num::toBf16Thread(v, n, out, here()); }

__global__ void ggufScalesKernel(const uint8_t* w, uint32_t blockBytes, int id, uint64_t n, int subs, int mins, float* d, float* dmin, float* sub, float* subMin) {
  num::ggufScalesThread(w, blockBytes, id, n, subs, mins, d, dmin, sub, subMin, here());
}


// A CUDA call's result as an Error naming what failed (the sticky error of a failed allocation
// cleared, so the next call does not inherit it).
Result<bool> checked(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return true;
  cudaGetLastError();
  return Error{ErrorCode::Io, what + ": " + cudaGetErrorString(e), {}, std::nullopt, {}};
}

// n elements of T on the device, freed on scope exit.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(p_); }
  Result<bool> allocate(uint64_t n) { return checked(cudaMalloc(&p_, std::max<uint64_t>(n * sizeof(T), sizeof(T))), "cudaMalloc of " + std::to_string(n * sizeof(T)) + " bytes"); }
  T* get() const { return p_; }
  Result<bool> download(T* host, uint64_t n) const { return checked(cudaMemcpy(host, p_, n * sizeof(T), cudaMemcpyDeviceToHost), "device-to-host copy"); }

 private:
  T* p_ = nullptr;
};

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
  // Of each region, only the bytes the rows read (the row footprint remote previews fetch by:
  // the rows' slice of the weight and of row-wise scales, whole groups of interleaved rows), each
  // span taken from the description as the CPU describes it, before any region is rebased.
  const num::DecodeDesc described = d;
  auto stage = [&](num::Region& r, const num::Region& as) {
    const num::ByteSpan span = num::regionRowSpan(described, as, firstRow, rows);
    return regions.copy(r, span.from, span.bytes);
  };
  if (d.kind != num::DescKind::Kt)  // a KTransformers weight lives in its NUMA parts
    if (auto r = stage(d.w, described.w); !r) return r;
  if (auto r = stage(d.s, described.s); !r) return r;
  if (auto r = stage(d.g, described.g); !r) return r;
  if (auto r = stage(d.zp, described.zp); !r) return r;
  if (auto r = stage(d.gidx, described.gidx); !r) return r;
  if (auto r = stage(d.nestedMap, described.nestedMap); !r) return r;
  for (uint32_t k = 0; k < d.parts && k < uint32_t(num::kMaxNuma); ++k) {
    if (auto x = regions.whole(d.ktW[k]); !x) return x;
    if (auto x = regions.whole(d.ktS[k]); !x) return x;
  }
  return true;
}

Result<bool> launch(const num::DecodeDesc& d, uint64_t firstRow, uint64_t rows, float* out) {
  launchDecode(d, firstRow, rows, out);
  // A launch error (bad configuration, too many resources) is reported by cudaGetLastError only.
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    return Error{ErrorCode::Io, std::string("kernel launch failed: ") + cudaGetErrorString(e), {}, std::nullopt, {}};
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
    return Error{ErrorCode::Io, std::string("kernel failed: ") + cudaGetErrorString(e), {}, std::nullopt, {}};
  return true;
}

// A launch's configuration error, then its execution error.
Result<bool> finished(const char* what) {
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return Error{ErrorCode::Io, std::string(what) + " launch failed: " + cudaGetErrorString(e), {}, std::nullopt, {}};
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return Error{ErrorCode::Io, std::string(what) + " failed: " + cudaGetErrorString(e), {}, std::nullopt, {}};
  return true;
}

// The common start of every entry point: the device, the tensor's description, and device
// copies of the bytes rows [firstRow, firstRow + rows) need (rows == UINT64_MAX: all of them).
Result<num::DecodeDesc> describeOnDevice(const Checkpoint& c, uint32_t logical, int device, uint64_t firstRow, uint64_t& rows, DeviceRegions& regions) {
  std::string why;
  if (!deviceAvailable(device, &why)) return Error{ErrorCode::Usage, why, {}, std::nullopt, {}};
  cudaSetDevice(device);
  auto dec = num::makeDecoder(c, logical);
  if (!dec) return dec.error();
  num::DecodeDesc d = dec.value()->describe();
  if (rows == UINT64_MAX) rows = d.rows;
  if (firstRow + rows > d.rows) return Error{ErrorCode::Usage, "row range past the end of the tensor", {}, std::nullopt, c.logical[logical].name};
  if (auto r = prepare(d, firstRow, rows, regions); !r) return r.error();
  return d;
}

}  // namespace

Result<std::vector<float>> dequantizeOnDevice(const Checkpoint& c, uint32_t logical, uint64_t firstRow, uint64_t rows, int device) {
  DeviceRegions regions;
  auto described = describeOnDevice(c, logical, device, firstRow, rows, regions);
  if (!described) return described.error();
  const num::DecodeDesc& d = described.value();
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

// Statistics of n floats already on the device: the two kernels over statsGrid(n), finished on the
// host exactly as the CPU emulation finishes them. A failed allocation, launch or copy is an error,
// never zero statistics.
Result<DeviceStats> statsOfDeviceValues(const float* vals, uint64_t n) {
  const num::LaunchGrid g = num::statsGrid(n);
  std::vector<num::StatsPartial> blocks(g.blocks);
  std::vector<uint64_t> bins(num::kStatsBins, 0);
  double m2 = 0;
  if (g.blocks) {
    DeviceArray<num::StatsPartial> dBlocks;
    DeviceArray<unsigned long long> dBins;
    DeviceArray<double> dSums;
    static_assert(sizeof(unsigned long long) == sizeof(uint64_t));
    for (auto r : {dBlocks.allocate(g.blocks), dBins.allocate(num::kStatsBins), dSums.allocate(g.blocks),
                   checked(cudaMemset(dBins.get(), 0, num::kStatsBins * sizeof(unsigned long long)), "cudaMemset")})
      if (!r) return r.error();
    statsKernel<<<g.blocks, g.threads>>>(vals, n, dBlocks.get(), dBins.get());
    if (auto r = finished("statistics"); !r) return r.error();
    if (auto r = dBlocks.download(blocks.data(), g.blocks); !r) return r.error();
    if (auto r = dBins.download(reinterpret_cast<unsigned long long*>(bins.data()), num::kStatsBins); !r) return r.error();
    const num::StatsPartial total = num::mergeBlocks(blocks);
    if (total.finite) {
      std::vector<double> sums(g.blocks);
      deviationKernel<<<g.blocks, g.threads>>>(vals, n, total.sum / double(total.finite), dSums.get());
      if (auto r = finished("deviation"); !r) return r.error();
      if (auto r = dSums.download(sums.data(), g.blocks); !r) return r.error();
      for (double b : sums) m2 += b;
    }
  }
  const num::GridStats gs = num::finishGridStats(blocks, bins, m2, n);
  DeviceStats out;
  out.stats = gs.stats;
  out.histogram = gs.histogram;
  out.sum = gs.sum, out.sumSquares = gs.sumSquares;
  return out;
}

Result<DeviceStats> statsOnDevice(const Checkpoint& c, uint32_t logical, int device) {
  DeviceRegions regions;
  uint64_t rows = UINT64_MAX;
  auto described = describeOnDevice(c, logical, device, 0, rows, regions);
  if (!described) return described.error();
  const num::DecodeDesc& d = described.value();
  const uint64_t n = d.rows * d.cols;
  DeviceArray<float> vals;
  if (auto r = vals.allocate(n); !r) return r.error();
  if (auto r = launch(d, 0, d.rows, vals.get()); !r) return r.error();
  return statsOfDeviceValues(vals.get(), n);
}

Result<std::vector<uint16_t>> dequantizeOnDeviceBf16(const Checkpoint& c, uint32_t logical, uint64_t firstRow, uint64_t rows, int device) {
  auto f = dequantizeOnDevice(c, logical, firstRow, rows, device);
  if (!f) return f.error();
  const uint64_t n = f.value().size();
  DeviceArray<float> v;
  DeviceArray<uint16_t> o;
  for (auto r : {v.allocate(n), o.allocate(n), checked(cudaMemcpy(v.get(), f.value().data(), n * 4, cudaMemcpyHostToDevice), "host-to-device copy")})
    if (!r) return r.error();
  if (const num::LaunchGrid g = num::launchGrid(n); g.blocks) toBf16Kernel<<<g.blocks, g.threads>>>(v.get(), n, o.get());
  if (auto r = finished("BF16 conversion"); !r) return r.error();
  std::vector<uint16_t> out(n);
  if (auto r = o.download(out.data(), n); !r) return r.error();
  return out;
}

Result<std::map<std::string, DeviceStats>> scaleStatsOnDevice(const Checkpoint& c, uint32_t logical, int device) {
  std::string why;
  if (!deviceAvailable(device, &why)) return Error{ErrorCode::Usage, why, {}, std::nullopt, {}};
  cudaSetDevice(device);
  std::map<std::string, DeviceStats> out;
  const LogicalTensor& l = c.logical[logical];
  if (l.weight < 0) return out;
  const TensorRecord& w = c.tensors[uint32_t(l.weight)];
  if (w.dtype->isBlockQuant()) {
    const uint64_t n = w.bytes / w.dtype->blockBytes;
    const uint8_t* host = c.files[w.file].map->bytes().data() + w.offset;
    const num::GgufBlockScales probe = num::ggufBlockScales(w.dtype->ggmlId, host);  // every block of a type has the same fields
    DeviceArray<uint8_t> dw;
    if (auto r = dw.allocate(w.bytes); !r) return r.error();
    if (auto r = checked(cudaMemcpy(dw.get(), host, w.bytes, cudaMemcpyHostToDevice), "host-to-device copy"); !r) return r.error();
    // Each field the block type has: its name, values a block, and the device array the kernel fills.
    struct Field {
      const char* name;
      uint64_t perBlock;
      DeviceArray<float> values;
    } fields[] = {{"d", probe.hasD ? 1u : 0u, {}}, {"dmin", probe.hasDmin ? 1u : 0u, {}}, {"sub_scale", uint64_t(probe.nSub), {}}, {"sub_min", uint64_t(probe.nSubMin), {}}};
    for (Field& f : fields)
      if (f.perBlock)
        if (auto r = f.values.allocate(n * f.perBlock); !r) return r.error();
    if (const num::LaunchGrid g = num::launchGrid(n); g.blocks)
      ggufScalesKernel<<<g.blocks, g.threads>>>(dw.get(), w.dtype->blockBytes, w.dtype->ggmlId, n, probe.nSub, probe.nSubMin, fields[0].values.get(),
                                                fields[1].values.get(), fields[2].values.get(), fields[3].values.get());
    if (auto r = finished("GGUF block scales"); !r) return r.error();
    for (Field& f : fields) {
      if (!f.perBlock) continue;
      auto st = statsOfDeviceValues(f.values.get(), n * f.perBlock);
      if (!st) return st.error();
      out[f.name] = st.value();
    }
    return out;
  }
  for (uint32_t mi : l.members) {
    const TensorRecord& s = c.tensors[mi];
    if (s.component != Component::Scale && s.component != Component::GlobalScale) continue;
    // The scale tensor as a plain tensor (read as the scheme table says), decoded on the device.
    num::DecodeDesc d;
    d.kind = num::DescKind::Plain;
    d.rows = 1, d.cols = s.elements();
    const DType* dt = scaleReadDtype(l.scheme, s.dtype);
    num::ElementReader r;
    if (!r.init(dt)) continue;
    d.w = num::Region{c.files[s.file].map->bytes().data() + s.offset, s.bytes, s.elements(), r.kind()};
    DeviceRegions regions;
    if (auto x = prepare(d, 0, 1, regions); !x) return x.error();
    DeviceArray<float> vals;
    if (auto x = vals.allocate(d.cols); !x) return x.error();
    if (auto x = launch(d, 0, 1, vals.get()); !x) return x.error();
    auto part = statsOfDeviceValues(vals.get(), d.cols);
    if (!part) return part.error();
    // Several tensors of one kind (KTransformers NUMA parts) add up, as the CPU pass adds them.
    auto [slot, fresh] = out.try_emplace(std::string(componentName(s.component)), part.value());
    if (!fresh) {
      slot->second.stats.merge(part.value().stats);
      slot->second.histogram.merge(part.value().histogram);
      slot->second.sum += part.value().sum;
      slot->second.sumSquares += part.value().sumSquares;
    }
  }
  return out;
}

Result<bool> decodeBf16Into(num::DecodeDesc d, uint64_t firstRow, uint64_t rows, uint16_t* out, bool onDevice) {
  if (!rows) return true;  // nothing to decode launches nothing
  if (firstRow + rows > d.rows) return Error{ErrorCode::Usage, "row range past the end of the tensor", {}, std::nullopt, {}};
  DeviceRegions regions;
  if (!onDevice)  // else every region already points at the load's uploaded copies
    if (auto r = prepare(d, firstRow, rows, regions); !r) return r.error();
  launchDecode(d, firstRow, rows, out);
  return finished("BF16 decode");
}

Result<bool> transposeOnDevice(const uint8_t* src, uint8_t* dst, uint64_t mats, uint64_t rows, uint64_t cols, uint32_t elemBytes) {
  const num::TransposeShape s{mats, rows, cols};
  const num::LaunchGrid g = num::transposeGrid(s);
  if (!g.blocks) return true;
  switch (elemBytes) {
    case 1: transposeKernel<<<g.blocks, g.threads>>>(src, dst, s); break;
    case 2: transposeKernel<<<g.blocks, g.threads>>>(reinterpret_cast<const uint16_t*>(src), reinterpret_cast<uint16_t*>(dst), s); break;
    case 4: transposeKernel<<<g.blocks, g.threads>>>(reinterpret_cast<const uint32_t*>(src), reinterpret_cast<uint32_t*>(dst), s); break;
    case 8: transposeKernel<<<g.blocks, g.threads>>>(reinterpret_cast<const uint64_t*>(src), reinterpret_cast<uint64_t*>(dst), s); break;
    default: return Error{ErrorCode::Usage, "transpose of " + std::to_string(elemBytes) + "-byte elements", {}, std::nullopt, {}};
  }
  return finished("transpose");
}

Result<KernelTiming> timeDequantBf16(const Checkpoint& c, uint32_t logical, int repeat, int device) {
  DeviceRegions regions;
  uint64_t rows = UINT64_MAX;
  auto described = describeOnDevice(c, logical, device, 0, rows, regions);
  if (!described) return described.error();
  const num::DecodeDesc& d = described.value();
  if (d.kind == num::DescKind::GgufBlocks && d.blockElems > 256) return Error{ErrorCode::Usage, "block too large", {}, std::nullopt, {}};
  KernelTiming t;
  t.bytesIn = d.w.bytes + d.s.bytes + d.g.bytes + d.zp.bytes + d.gidx.bytes + d.nestedMap.bytes;
  t.bytesOut = d.rows * d.cols * 2;
  uint16_t* out = nullptr;
  if (cudaError_t e = cudaMalloc(&out, t.bytesOut); e != cudaSuccess) return Error{ErrorCode::Io, std::string("cudaMalloc: ") + cudaGetErrorString(e), {}, std::nullopt, {}};
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const unsigned grid = unsigned(std::max(1, sms) * 32);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  t.seconds = 1e30;
  for (int i = 0; i < repeat; ++i) {
    cudaEventRecord(a);
    launchDecode(d, 0, d.rows, out, grid);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    t.seconds = std::min(t.seconds, double(ms) / 1e3);
  }
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess && d.rows) {
    const uint64_t picks[3] = {0, d.rows / 2, d.rows - 1};
    t.sampleRows.resize(3 * d.cols);
    for (int k = 0; k < 3 && e == cudaSuccess; ++k) {
      t.sampleRowIndex[k] = picks[k];
      e = cudaMemcpy(t.sampleRows.data() + k * d.cols, out + picks[k] * d.cols, d.cols * 2, cudaMemcpyDeviceToHost);
    }
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaFree(out);
  if (e != cudaSuccess) return Error{ErrorCode::Io, std::string("kernel: ") + cudaGetErrorString(e), {}, std::nullopt, {}};
  return t;
}

Result<double> timeDeviceCopy(uint64_t bytes, int repeat, int device) {
  std::string why;
  if (!deviceAvailable(device, &why)) return Error{ErrorCode::Usage, why, {}, std::nullopt, {}};
  cudaSetDevice(device);
  void *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess) {
    cudaFree(src);
    return Error{ErrorCode::Io, "cudaMalloc failed", {}, std::nullopt, {}};
  }
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  double best = 1e30;
  cudaError_t e = cudaSuccess;
  for (int i = 0; i < repeat && e == cudaSuccess; ++i) {
    cudaEventRecord(a);
    e = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    best = std::min(best, double(ms) / 1e3);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaFree(src);
  cudaFree(dst);
  if (e != cudaSuccess) return Error{ErrorCode::Io, std::string("device copy: ") + cudaGetErrorString(e), {}, std::nullopt, {}};
  return best;
}

Result<uint64_t> reserveKernelLocalMemory(int device) {
  cudaSetDevice(device);
  using B = num::Body;
  const void* kernels[] = {(const void*)decodeKernel<B::Elements, float>, (const void*)decodeKernel<B::Elements, uint16_t>,
                           (const void*)decodeKernel<B::Blocks, float>,   (const void*)decodeKernel<B::Blocks, uint16_t>,
                           (const void*)decodeKernel<B::Fp8Runs, float>,  (const void*)decodeKernel<B::Fp8Runs, uint16_t>,
                           (const void*)decodeKernel<B::Fp4Runs, float>,  (const void*)decodeKernel<B::Fp4Runs, uint16_t>,
                           (const void*)decodeKernel<B::IntRuns, float>,  (const void*)decodeKernel<B::IntRuns, uint16_t>,
                           (const void*)decodeKernel<B::Q4kRuns, float>,  (const void*)decodeKernel<B::Q4kRuns, uint16_t>,
                           (const void*)decodeKernel<B::GgufRuns, float>, (const void*)decodeKernel<B::GgufRuns, uint16_t>,
                           (const void*)transposeKernel<uint8_t>, (const void*)transposeKernel<uint16_t>,
                           (const void*)transposeKernel<uint32_t>, (const void*)transposeKernel<uint64_t>, (const void*)toBf16Kernel, (const void*)ggufScalesKernel,
                           (const void*)statsKernel,     (const void*)deviationKernel};
  size_t deepest = 0;
  for (const void* k : kernels) {
    cudaFuncAttributes a{};
    if (cudaError_t e = cudaFuncGetAttributes(&a, k); e != cudaSuccess) return Error{ErrorCode::Io, std::string("cudaFuncGetAttributes: ") + cudaGetErrorString(e), {}, std::nullopt, {}};
    deepest = std::max(deepest, a.localSizeBytes);
  }
  size_t now = 0;
  if (cudaError_t e = cudaDeviceGetLimit(&now, cudaLimitStackSize); e != cudaSuccess) return Error{ErrorCode::Io, std::string("cudaDeviceGetLimit: ") + cudaGetErrorString(e), {}, std::nullopt, {}};
  if (deepest > now)
    if (cudaError_t e = cudaDeviceSetLimit(cudaLimitStackSize, deepest); e != cudaSuccess)
      return Error{ErrorCode::Io, std::string("cudaDeviceSetLimit(stack ") + std::to_string(deepest) + "): " + cudaGetErrorString(e), {}, std::nullopt, {}};
  return uint64_t(deepest);
}

}  // namespace ws::kernels
