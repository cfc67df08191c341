#include "core/plan/kt_offload.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>

#include "core/formats/torch_save.h"
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

namespace {

std::string shortNumber(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", double(v));
  return text;
}

// kt_ep_wrapper.py _init_kt_gpu_experts_masks at 04653fa, strategy "frequency" (:1952-2012): the
// activation table [layers, experts] - the .pt's logical_count summed over its first dimension,
// .float(), or 1.0 on the MoE rows without one - and kt-kernel's generate_gpu_experts_masks
// (experts_base.py:21-68 at ktransformers 95009ea): torch.topk of the flattened table for `total`,
// then the dense rows all True (they hold no routed experts).
KtGpuMasks frequencyMasks(KtGpuMasks masks, const std::vector<int64_t>& moe, int64_t total, int64_t E, const KtOptions& o) {
  const int64_t L = int64_t(masks.size());
  std::vector<float> freq(size_t(L * E), 0.0f);
  if (o.initExpertLocation.empty()) {
    for (int64_t layer : moe) std::fill_n(freq.begin() + layer * E, E, 1.0f);
  } else {
    auto counts = readTorchSavedTensor(o.initExpertLocation, "logical_count");
    if (!counts) fail(counts.error().code, "--init-expert-location: " + counts.error().message, counts.error().file, counts.error().offset);
    const TorchTensor& t = counts.value();
    if (t.shape.size() != 3)
      fail(ErrorCode::Usage, "--init-expert-location: expected activation counts tensor with 3 dims [buffer_size, num_layers, num_experts], got " + std::to_string(t.shape.size()),
           o.initExpertLocation);
    if (t.shape[1] != L) fail(ErrorCode::Usage, "--init-expert-location: its counts' num_layers (" + std::to_string(t.shape[1]) + ") doesn't match the model's (" + std::to_string(L) + ")", o.initExpertLocation);
    if (t.shape[2] != E) fail(ErrorCode::Usage, "--init-expert-location: its counts' num_experts (" + std::to_string(t.shape[2]) + ") doesn't match the model's (" + std::to_string(E) + ")", o.initExpertLocation);
    for (int64_t l = 0; l < L; ++l)
      for (int64_t e = 0; e < E; ++e) {
        int64_t sum = 0;  // torch sums an int tensor in int64, then .float() rounds it to float32
        for (int64_t b = 0; b < t.shape[0]; ++b) sum += t.integerAt({b, l, e});
        freq[size_t(l * E + e)] = static_cast<float>(sum);
      }
  }
  const int64_t k = std::clamp<int64_t>(total, 0, L * E);
  std::vector<int64_t> order(freq.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int64_t(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return freq[size_t(a)] > freq[size_t(b)]; });
  if (k > 0 && k < L * E && freq[size_t(order[size_t(k - 1)])] == freq[size_t(order[size_t(k)])])
    fail(ErrorCode::Usage, "--kt-expert-placement-strategy frequency: experts tie at " + shortNumber(freq[size_t(order[size_t(k)])]) + " across the last of the " +
                               std::to_string(k) + " places kept, and which of them torch.topk keeps is not settled" +
                               (o.initExpertLocation.empty() ? std::string(" (without --init-expert-location every MoE expert counts 1.0)") : std::string()));
  for (int64_t i = 0; i < k; ++i) {
    const int64_t at = order[size_t(i)];
    if (!masks[size_t(at / E)].empty()) masks[size_t(at / E)][size_t(at % E)] = true;
  }
  return masks;
}

}  // namespace

KtGpuMasks ktGpuMasks(const ModelDescription& m, const KtOptions& o) {
  if (o.strategy != "uniform" && o.strategy != "front-loading" && o.strategy != "random" && o.strategy != "frequency")
    fail(ErrorCode::Usage, "--kt-expert-placement-strategy takes uniform, front-loading, random or frequency, not '" + o.strategy + "'");
  if (!o.initExpertLocation.empty() && o.strategy != "frequency")
    fail(ErrorCode::Usage, "--init-expert-location is read by the frequency placement (--kt-expert-placement-strategy frequency)");
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
  if (o.strategy == "frequency") return frequencyMasks(masks, moe, total, E, o);
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
