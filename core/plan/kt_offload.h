// KTransformers' CPU/GPU split as it serves today: SGLang with kt-kernel (ktransformers 95009ea,
// 2026-08-21, README.md "Launch"; flags of the kvcache-ai/sglang fork at 04653fa,
// python/sglang/srt/server_args.py). Everything but the routed experts runs in SGLang on the GPU
// (attention, KV cache, router, embeddings, lm_head, shared experts: kt_ep_wrapper.py swaps only
// FusedMoE's quant method). Of the routed experts, --kt-num-gpu-experts N per MoE layer (or a
// ratio of all) stay on the GPU as the placement picks them (ktGpuMasks below; the "uniform"
// default keeps the first N of every layer) - and kt-kernel holds every
// routed expert in host memory, those N too (amx/moe.hpp loads all expert_num; the GPU mask only
// skips work at run time). --kt-threadpool-count T (one pool per NUMA node) splits each expert's
// intermediate dimension over the nodes (operators/moe-tp.hpp: intermediate_size /= tp_count):
// a slice per node, not a copy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/util/error.h"

namespace ws::plan {

struct KtOptions {
  int gpuExperts = 0;   // --kt-num-gpu-experts, per MoE layer
  // --kt-gpu-experts-ratio: the share of all MoE layers' routed experts on the GPU instead (the
  // fork takes it over --kt-num-gpu-experts); < 0: not given.
  double gpuRatio = -1;
  std::string strategy = "uniform";  // --kt-expert-placement-strategy: uniform, front-loading, random or frequency
  std::string initExpertLocation;    // --init-expert-location: the expert-distribution recorder's .pt (frequency)
  std::string method;   // --kt-method: AMXINT4, AMXINT8, BF16, FP8, RAWINT4, LLAMAFILE
  int numaNodes = 1;    // --kt-threadpool-count
};

// The methods --kt-method takes (server_args.py at 04653fa).
const std::vector<std::string>& ktMethods();

// Which routed experts of each layer (0 .. numLayers-1) the placement keeps on the GPU, as
// kt_ep_wrapper.py _init_kt_gpu_experts_masks at 04653fa makes the masks: a total of
// --kt-num-gpu-experts x the MoE layers, or int(all their experts x ratio); `uniform`
// (generate_uniform_masks) gives each MoE layer total / layers, the first layers one more for the
// remainder, `front-loading` (generate_front_loading_masks) fills whole layers from the first MoE
// layer until the total runs out - both the first ids of a layer; `random` (generate_random_masks)
// takes the first `total` of torch.randperm(all MoE layers' experts, seed 42) over the
// (layer, expert) positions in order; `frequency` (generate_gpu_experts_masks) the `total` most
// frequent of every row's experts, dense rows too, by the recorder's counts (--init-expert-location,
// its logical_count summed over the buffer, as float32) or, without a file, 1.0 on every MoE row -
// a usage error where experts tie across the last place kept, since which of them torch.topk keeps
// is not settled. An empty row for a layer outside the masks (dense).
using KtGpuMasks = std::vector<std::vector<bool>>;
KtGpuMasks ktGpuMasks(const ModelDescription& m, const KtOptions& o);

// Whether expert `e` of layer `layer` stays on the GPU: its mask, or for a layer past the masks'
// rows (an MTP layer: the fork's masks cover num_hidden_layers only, and what its draft layer
// keeps is not settled by the source) the first --kt-num-gpu-experts ids (none with a ratio).
bool keptOnGpuByKt(const KtGpuMasks& masks, int32_t layer, int64_t e, const KtOptions& o);
// How many of layer `layer`'s routed experts stay on the GPU, by the same rule (a stacked tensor's
// slice: kt_ep_wrapper.py sizes the layer's GPU FusedMoE by its mask's sum).
int64_t ktGpuExpertCount(const KtGpuMasks& masks, int32_t layer, const KtOptions& o);

// torch.randperm(n) on the CPU from a generator seeded `seed`: aten/src/ATen/native/
// TensorFactories.cpp randperm_cpu below 2^32 / 20 - a Fisher-Yates pass drawing
// mt19937() % (n - i) - with the generator's engine a standard MT19937 (at::mt19937 seeds as
// std::mt19937 does). Equal to torch 2.15.0's output (tests/tst_plan). Larger n: a usage error.
std::vector<int64_t> torchRandperm(int64_t n, uint32_t seed);

// The host bytes kt-kernel holds for the routed experts, all of them: in total and per NUMA node,
// with the formula that gave them.
struct KtHost {
  uint64_t total = 0;
  std::vector<uint64_t> perNode;
  std::string formula;
};
// AMXINT8 / AMXINT4: each expert matrix [n, k] converted (scripts/convert_cpu_weights.py, from FP8
// or BF16 weights) to n*k int8 or n*k/2 int4 bytes plus n FP32 row scales
// (amx/la/amx_kernels.hpp BufferB, amx/la/amx_buffers.hpp); per node, gate and up keep I/T of their
// rows, down all H rows of I/T columns - so down's H scales are on every node. BF16, FP8, RAWINT4
// and LLAMAFILE read the checkpoint's own bytes (README "native" methods): the stored routed
// expert bytes, about 1/T a node. A usage error for a method the checkpoint cannot take (AMX from
// other than FP8 / BF16 weights, LLAMAFILE from other than a GGUF).
Result<KtHost> ktHostBytes(const Checkpoint& c, const KtOptions& o);

}  // namespace ws::plan
