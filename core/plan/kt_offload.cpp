#include "core/plan/kt_offload.h"

#include <algorithm>
#include <limits>
#include <random>

#include "core/model/scheme_table.h"

namespace ws::plan {

const std::vector<std::string>& ktMethods() {
  static const std::vector<std::string> m = {"AMXINT4", "AMXINT8", "BF16", "FP8", "RAWINT4", "LLAMAFILE"};
  return m;
}

std::vector<int64_t> torchRandperm(int64_t n, uint32_t seed) {
  if (n < 0 || n >= int64_t(std::numeric_limits<uint32_t>::max() / 20))
    fail(ErrorCode::Usage, "torch.randperm of " + std::to_string(n) + " positions takes its 64-bit path, not reproduced here");
  std::vector<int64_t> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) r[size_t(i)] = i;
  std::mt19937 engine(seed);
  for (int64_t i = 0; i + 1 < n; ++i) std::swap(r[size_t(i)], r[size_t(i + int64_t(engine() % uint64_t(n - i)))]);
  return r;
}

KtGpuMasks ktGpuMasks(const ModelDescription& m, const KtOptions& o) {
  if (o.strategy != "uniform" && o.strategy != "front-loading" && o.strategy != "random")
    fail(ErrorCode::Usage, "--kt-expert-placement-strategy: uniform, front-loading and random are planned; '" + o.strategy +
                               "' is not (frequency reads a torch .pt of expert counts)");
  const int64_t L = std::max<int64_t>(0, m.numLayers), E = std::max<int64_t>(0, m.numExperts);
  KtGpuMasks masks(static_cast<size_t>(L));
  // The fork's MoE layers: i >= first_k_dense_replace and i % moe_layer_freq == 0, defaults 0 and
  // 1 - mlp_only_layers and decoder_sparse_step are not read, so a Qwen dense layer counts.
  const int64_t firstK = std::max<int64_t>(0, m.firstKDenseReplace), freq = m.moeLayerFreq > 0 ? m.moeLayerFreq : 1;
  std::vector<int64_t> moe;
  for (int64_t layer = 0; layer < L; ++layer)
    if (layer >= firstK && layer % freq == 0) moe.push_back(layer);
  for (int64_t layer : moe) masks[size_t(layer)].assign(size_t(E), false);
  const int64_t experts = int64_t(moe.size()) * E;
  // Python's int() of the product, as the fork takes it.
  const int64_t total = o.gpuRatio >= 0 ? int64_t(double(experts) * o.gpuRatio) : int64_t(std::max(0, o.gpuExperts)) * int64_t(moe.size());
  if (o.strategy == "random") {
    const std::vector<int64_t> order = torchRandperm(experts, 42);
    for (int64_t i = 0; i < std::min(total, experts); ++i) masks[size_t(moe[size_t(order[size_t(i)] / E)])][size_t(order[size_t(i)] % E)] = true;
    return masks;
  }
  int64_t remaining = total;
  for (size_t i = 0; i < moe.size(); ++i) {
    int64_t n;
    if (o.strategy == "front-loading") {
      n = std::min(remaining, E);
      remaining -= n;
    } else {
      n = std::min(total / int64_t(moe.size()) + (int64_t(i) < total % int64_t(moe.size()) ? 1 : 0), E);
    }
    std::fill_n(masks[size_t(moe[i])].begin(), n, true);
  }
  return masks;
}

bool keptOnGpuByKt(const KtGpuMasks& masks, int32_t layer, int64_t e, const KtOptions& o) {
  if (e < 0) return false;
  if (layer >= 0 && size_t(layer) < masks.size() && !masks[size_t(layer)].empty()) return size_t(e) < masks[size_t(layer)].size() && masks[size_t(layer)][size_t(e)];
  return o.gpuRatio < 0 && e < o.gpuExperts;
}

int64_t ktGpuExpertCount(const KtGpuMasks& masks, int32_t layer, const KtOptions& o) {
  if (layer >= 0 && size_t(layer) < masks.size() && !masks[size_t(layer)].empty())
    return std::count(masks[size_t(layer)].begin(), masks[size_t(layer)].end(), true);
  return o.gpuRatio < 0 ? o.gpuExperts : 0;
}

Result<KtHost> ktHostBytes(const Checkpoint& c, const KtOptions& o) {
  return capture([&]() -> KtHost {
    if (std::find(ktMethods().begin(), ktMethods().end(), o.method) == ktMethods().end())
      fail(ErrorCode::Usage, "--kt-method takes AMXINT4, AMXINT8, BF16, FP8, RAWINT4 or LLAMAFILE, not '" + o.method + "'");
    if (o.numaNodes < 1) fail(ErrorCode::Usage, "--kt-threadpool-count takes the NUMA nodes, 1 or more");
    if (o.method == "LLAMAFILE" && c.format != "gguf") fail(ErrorCode::Usage, "--kt-method LLAMAFILE reads a GGUF's experts: PATH must be a GGUF file");
    const uint64_t T = uint64_t(o.numaNodes), E = uint64_t(std::max<int64_t>(0, c.model.numExperts));
    KtHost h;
    h.perNode.assign(T, 0);
    const bool amx = o.method.starts_with("AMX");
    const bool int4 = o.method == "AMXINT4";
    for (const auto& l : c.logical) {
      if (l.weight < 0) continue;
      const TensorRecord& w = c.tensors[uint32_t(l.weight)];
      if (w.role != Role::RoutedExpert) continue;
      if (!amx) {  // the checkpoint's own bytes, weight and companions
        h.total += l.bytes;
        continue;
      }
      const Scheme s = l.scheme;
      const bool float16 = s == Scheme::Plain && (w.dtype->name == "BF16" || w.dtype->name == "F16");
      if (!float16 && s != Scheme::Fp8Block && s != Scheme::Fp8Tensor && s != Scheme::Fp8Channel)
        fail(ErrorCode::Usage, "--kt-method " + o.method + " converts FP8, BF16 or FP16 experts (scripts/convert_cpu_weights.py --input-type); " + w.name +
                                   " is " + l.schemeName);
      if (w.shape.size() < 2) continue;
      // [n, k] matrices: one per expert, or E of them stacked along dim 0.
      const uint64_t n = w.shape[w.shape.size() - 2], k = w.shape.back();
      const uint64_t matrices = w.shape.size() == 3 && w.shape[0] == E ? E : 1;
      const uint64_t codes = int4 ? n * k / 2 : n * k;
      h.total += matrices * (codes + 4 * n);
      const bool down = w.projection == Projection::Down;
      for (uint64_t node = 0; node < T; ++node)  // down: all n rows, k/T columns; gate / up: n/T rows
        h.perNode[node] += matrices * (codes / T + (down ? 4 * n : 4 * n / T));
    }
    if (amx) {
      uint64_t sum = 0;
      for (uint64_t b : h.perNode) sum += b;
      h.total = sum;  // down's row scales once per node
      h.formula = "every routed expert matrix [n, k] as " + std::string(int4 ? "n*k/2 int4" : "n*k int8") + " + n FP32 row scales, split over " +
                  std::to_string(T) + " NUMA node(s) (down's scales on each)";
    } else {
      for (uint64_t node = 0; node < T; ++node) h.perNode[node] = h.total / T + (node < h.total % T ? 1 : 0);
      h.formula = "the checkpoint's routed expert bytes as stored (" + o.method + " reads them natively), about 1/" + std::to_string(T) + " a NUMA node";
    }
    return h;
  });
}

}  // namespace ws::plan
