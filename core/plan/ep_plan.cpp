#include "core/plan/ep_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "core/model/quant_scheme.h"
#include "core/plan/derived_buffers.h"
#include "core/plan/host_offload.h"
#include "core/util/glob.h"

namespace ws::plan {

namespace {

bool isNgramTable(const std::string& name) { return name.find("ngram") != std::string::npos || name.find(".embedders.") != std::string::npos; }

uint64_t sliceBytes(uint64_t bytes, uint64_t experts, uint64_t slots) {
  // A fused or stacked tensor stores experts along dim 0: each is bytes / E.
  return experts ? bytes / experts * slots : bytes;
}

// vLLM's or SGLang's --cpu-offload-gb on one rank (host_offload.h): the held decoder-layer weights
// moved to the host until `cap` bytes are - the cap exactly, the last tensor in part, which is the
// least the engine moves (it moves whole parameters). Held tensors come in the checkpoint's natural
// name order, so layers.2 before layers.10: the layer order make_layers offloads in.
void moveToHostByCpuOffload(const Checkpoint& c, uint64_t cap, const std::string& engine, RankPlan& rp) {
  for (const HeldTensor& h : rp.held) {
    if (rp.host >= cap) break;
    const TensorRecord& t = c.tensors[h.tensor];
    if (!offloadableByCpuOffload(t, engine)) continue;
    const uint64_t moved = std::min(h.bytes, cap - rp.host);
    rp.bytes[categoryOf(t)] -= moved;
    if (isScaleComponent(t.component)) rp.scaleBytes -= moved;
    rp.host += moved;
  }
}

}  // namespace

bool buildsTransposedTwin(const Checkpoint& c, const TensorRecord& t) {
  // A packed code has no transpose: plain float storage only.
  return !schemeInfo(c.logical[t.logical].scheme).quantized && t.dtype->family == DTypeFamily::Float && t.dtype->blockElems == 1 && t.shape.size() >= 2;
}

bool buildsBf16Twin(const Checkpoint& c, const TensorRecord& t) { return schemeInfo(c.logical[t.logical].scheme).quantized; }

bool slicedByExpert(const Checkpoint& c, const TensorRecord& t) {
  const uint64_t E = uint64_t(std::max<int64_t>(0, c.model.numExperts));
  return E > 0 && t.role == Role::RoutedExpert && t.expert < 0 && t.layout != Layout::None && !t.shape.empty() && t.shape[0] == E;
}

bool heldAsSlices(const Checkpoint& c, const TensorRecord& t, const PlanOptions& opt) { return slicedByExpert(c, t) && !opt.rules->fusedWholeOnEveryRank; }

std::vector<std::pair<uint64_t, uint64_t>> residentParts(const Checkpoint& c, const PlanOptions& opt, const TensorRecord& t, const HeldTensor& h,
                                                         const std::vector<int64_t>& rankExperts) {
  std::vector<std::pair<uint64_t, uint64_t>> parts;
  if (heldAsSlices(c, t, opt)) {
    const uint64_t per = t.bytes / uint64_t(c.model.numExperts);
    for (int64_t e : rankExperts) parts.push_back({uint64_t(e) * per, per});
  } else if (t.bytes == 0) {
    parts.push_back({0, 0});
  } else {
    for (uint64_t done = 0; done < h.bytes; done += t.bytes) parts.push_back({0, t.bytes});  // replicas repeat
  }
  return parts;
}

std::vector<SkippedTensor> notUploaded(const PlanResult& r) {
  std::map<uint32_t, SkippedTensor> seen;
  for (const auto& rp : r.ranks)
    for (const auto& s : rp.skipped) seen.try_emplace(s.tensor, s);
  std::vector<SkippedTensor> out;
  for (auto& [i, s] : seen) out.push_back(s);
  return out;
}

size_t mapRowOf(const ModelDescription& m, const Placement& p, int layer) {
  if (p.layerRows() <= 1) return 0;
  auto it = std::find(m.moeLayers.begin(), m.moeLayers.end(), layer);
  return it == m.moeLayers.end() ? 0 : size_t(it - m.moeLayers.begin());
}

std::vector<int64_t> expertsOnRank(const ModelDescription& m, const Placement& p, int rank, int layer) {
  std::vector<int64_t> e = p.logicalOf(rank, mapRowOf(m, p, layer));
  std::sort(e.begin(), e.end());
  return e;
}

const char* categoryName(int c) {
  static const char* names[] = {"routed_experts", "shared_experts", "attention", "dense_mlp", "embeddings", "lm_head", "norms", "mtp", "other", "deferred"};
  return c >= 0 && c < kCategories ? names[c] : "other";
}

Category categoryOf(const TensorRecord& t) {
  switch (t.role) {
    case Role::RoutedExpert: return RoutedExperts;
    case Role::SharedExpert: return SharedExperts;
    case Role::Attention: return Attention;
    case Role::DenseMlp: return DenseMlp;
    case Role::Embedding: return Embeddings;
    case Role::LmHead: return LmHead;
    case Role::Norm: return Norms;
    case Role::Mtp: return Mtp;
    default: return Other;  // router, vision tower, anything unrecognised
  }
}

Result<PlanResult> planCheckpoint(const Checkpoint& c, const PlanOptions& opt) {
  return capture([&]() -> PlanResult {
    const Placement& pl = opt.placement;
    const ModelDescription& m = c.model;
    if (opt.tp < 1) fail(ErrorCode::Usage, "--tp must be at least 1");
    PlanResult res;
    res.moeLayers = m.moeLayers;
    const uint64_t E = uint64_t(std::max<int64_t>(0, m.numExperts));
    if (E && pl.logicalExperts != int64_t(E)) fail(ErrorCode::Usage, "placement was built for a different expert count");
    if (opt.kt && pl.epSize != 1)
      fail(ErrorCode::Usage, "KTransformers (--kt-num-gpu-experts) plans one expert-parallel rank: its GPU experts are the first N of each layer on every GPU");
    const KtGpuMasks ktMasks = opt.kt ? ktGpuMasks(m, *opt.kt) : KtGpuMasks{};
    if (opt.nCpuMoe < 0) fail(ErrorCode::Usage, "--n-cpu-moe takes a block count, 0 or more");
    if (opt.nCpuMoe > 0 && c.format != "gguf") fail(ErrorCode::Usage, "--n-cpu-moe is llama.cpp's: PATH must be a GGUF file");
    // A checkpoint saved split per rank (vLLM's sharded state) loads only at the layout it was
    // saved for: vLLM 0.11.0's ShardedStateLoader.load_weights reads
    // model-rank-{tensor-parallel rank}-part-*.safetensors and copies each tensor into the rank's
    // parameter as it is. Each rank then holds its own files whole - the catalog's (rank 0's)
    // shapes, which every rank shares (describeRanks) - and nothing is split again. TP 1 (the
    // default, as load and the GUI plan) means that layout too.
    const std::optional<Prepartitioned>& saved = c.prepartitioned;
    if (saved && (pl.epSize != 1 || (opt.tp != 1 && opt.tp != int(saved->ranks.size()))))
      fail(ErrorCode::Usage, "the checkpoint is saved split over " + std::to_string(saved->ranks.size()) +
                                 " tensor-parallel ranks (" + saved->layout + "): vLLM's ShardedStateLoader reads rank r's own files, so plan it with --ep 1 --tp " +
                                 std::to_string(saved->ranks.size()));

    // The map row of a MoE layer: one row for all layers, or one per MoE layer in order.
    std::map<int, size_t> rowOf;
    for (int layer : m.moeLayers) rowOf[layer] = mapRowOf(m, pl, layer);
    if (pl.layerRows() > 1 && pl.layerRows() != m.moeLayers.size())
      fail(ErrorCode::Usage, "the expert map has " + std::to_string(pl.layerRows()) + " layer rows but the model has " + std::to_string(m.moeLayers.size()) + " MoE layers");

    // Per rank and map row: how many slots carry each logical expert.
    const size_t rows = std::max<size_t>(1, pl.layerRows());
    std::vector<std::vector<std::vector<uint32_t>>> copies(size_t(pl.epSize), std::vector<std::vector<uint32_t>>(rows, std::vector<uint32_t>(E, 0)));
    for (int r = 0; r < pl.epSize; ++r)
      for (size_t row = 0; row < rows; ++row)
        for (int64_t l : pl.logicalOf(r, row)) copies[size_t(r)][row][size_t(l)]++;

    // Multiplier: the seed runtime's pre-flight heuristic by scheme, unless given.
    bool present[size_t(Scheme::kCount)] = {};
    for (const auto& l : c.logical) present[size_t(l.scheme)] = true;
    res.multiplier = opt.peakMultiplier > 0 ? opt.peakMultiplier : peakMultiplierOf(present);

    res.expertBytes.assign(m.moeLayers.size(), std::vector<uint64_t>(E, 0));
    std::map<int, size_t> moeIndex;
    for (size_t i = 0; i < m.moeLayers.size(); ++i) moeIndex[m.moeLayers[i]] = i;

    bool glmStyleMtp = false;
    res.ranks.resize(size_t(pl.epSize));
    for (int r = 0; r < pl.epSize; ++r) {
      RankPlan& rp = res.ranks[size_t(r)];
      rp.rank = r;
      rp.experts = pl.logicalOf(r, 0);
      std::sort(rp.experts.begin(), rp.experts.end());
    }

    for (uint32_t i = 0; i < c.tensors.size(); ++i) {
      const TensorRecord& t = c.tensors[i];
      const Category cat = categoryOf(t);
      if (t.role == Role::Mtp && t.name.rfind("mtp.", 0) != 0) glmStyleMtp = true;
      // Not uploaded at all: the same on every rank. The skips first, then the defer hook among what
      // they keep (the seed consults is_deferred only for tensors should_skip_tensor kept).
      std::string skip;
      const bool byName = opt.rules->skipsByName;
      if (opt.skipActivationScales && (byName ? t.name.ends_with(".input_scale") : t.component == Component::InputScale)) skip = "activation scale";
      if (skip.empty() && opt.skipMtp && (byName ? t.name.starts_with("mtp.") : t.role == Role::Mtp)) skip = "mtp";
      if (skip.empty() && opt.deferNgramTables && isNgramTable(t.name)) skip = "deferred";
      for (const auto& g : opt.defer)
        if (skip.empty() && globMatch(g, t.name)) skip = "deferred";
      if (skip.empty() && keptOnHostByNCpuMoe(t.name, opt.nCpuMoe)) skip = "host";
      // KTransformers: a routed expert its placement leaves off the GPU runs on the CPU only.
      if (skip.empty() && opt.kt && t.role == Role::RoutedExpert && t.expert >= 0 && !keptOnGpuByKt(ktMasks, t.layer, t.expert, *opt.kt)) skip = "host";

      const bool routed = t.role == Role::RoutedExpert && E > 0;
      // An MTP head under layers.N (GLM style) has experts of its own: the seed shards them like
      // routed ones (its rule keys on the name's expert index), vLLM's draft model loads them whole.
      const bool mtpSharded = opt.rules->shardMtpUnderLayers && t.role == Role::Mtp && t.expert >= 0 && E > 0 && t.name.rfind("mtp.", 0) != 0;
      const bool perExpert = (routed && t.expert >= 0) || mtpSharded;
      const bool sliced = routed && heldAsSlices(c, t, opt);
      auto rowIt = rowOf.find(t.layer);
      const size_t row = rowIt != rowOf.end() ? rowIt->second : 0;

      // The expert memory map: bytes per (MoE layer, logical expert).
      if (routed && moeIndex.count(t.layer)) {
        auto& eb = res.expertBytes[moeIndex[t.layer]];
        if (perExpert && uint64_t(t.expert) < E) eb[size_t(t.expert)] += t.bytes;
        else if (slicedByExpert(c, t))
          for (uint64_t e = 0; e < E; ++e) eb[e] += t.bytes / E;
      }

      for (int r = 0; r < pl.epSize; ++r) {
        RankPlan& rp = res.ranks[size_t(r)];
        // The rank's share first: a tensor this rank does not hold is neither loaded nor deferred
        // by it (another rank's expert deferred is that rank's business).
        uint64_t bytes = t.bytes;
        if (perExpert) {
          const uint32_t n = uint64_t(t.expert) < E ? copies[size_t(r)][row][size_t(t.expert)] : 0;
          if (n == 0) continue;  // another rank's expert
          bytes = t.bytes * n;
        } else if (sliced && opt.kt) {  // the GPU experts' slice of a stacked tensor
          bytes = sliceBytes(t.bytes, E, std::min<uint64_t>(E, uint64_t(std::max<int64_t>(0, ktGpuExpertCount(ktMasks, t.layer, *opt.kt)))));
        } else if (sliced) {
          uint64_t slots = 0;
          for (uint64_t e = 0; e < E; ++e) slots += copies[size_t(r)][row][e];
          if (slots == 0) continue;  // none of this layer's experts on this rank
          bytes = sliceBytes(t.bytes, E, slots);
        } else if (opt.tp > 1 && !saved && (cat == Attention || cat == DenseMlp)) {
          bytes = (t.bytes + uint64_t(opt.tp) - 1) / uint64_t(opt.tp);
        }
        if (!skip.empty()) {
          rp.skipped.push_back({i, skip, bytes});
          if (skip == "deferred") rp.bytes[Deferred] += bytes;
          if (skip == "host") rp.host += bytes;
          continue;
        }
        rp.held.push_back({i, bytes});
        rp.bytes[cat] += bytes;
        if (isScaleComponent(t.component)) rp.scaleBytes += bytes;
      }
      if (t.numaNode >= 0) {
        if (res.numaBytes.size() <= size_t(t.numaNode)) res.numaBytes.resize(size_t(t.numaNode) + 1, 0);
        res.numaBytes[size_t(t.numaNode)] += t.bytes;
      }
    }
    if (glmStyleMtp)
      res.notes.push_back("MTP layers " + std::string(m.mtpLayers.empty() ? "" : "declared by config ") +
                          "sit under the main layer prefix with no 'mtp.' (GLM / DeepSeek style): " +
                          (opt.rules->shardMtpUnderLayers ? "their experts sharded like routed experts (" + std::string(opt.rules->name) + "'s rule)"
                                                          : "replicated on every rank, their experts included"));
    if (opt.rules->fusedWholeOnEveryRank)
      for (const auto& t : c.tensors)
        if (slicedByExpert(c, t)) {
          res.notes.push_back("fused and stacked expert tensors are held whole on every rank (" + std::string(opt.rules->name) + "'s rule: no expert index in the name)");
          break;
        }

    if (opt.kt) {  // kt-kernel holds every routed expert, the GPU's too: its own sizes
      auto host = ktHostBytes(c, *opt.kt);
      if (!host) throw CoreError(host.error());
      for (auto& rp : res.ranks) rp.host = host.value().total;
      res.numaBytes = host.value().perNode;
      res.hostFormula = host.value().formula;
    }
    if (saved)
      res.notes.push_back("saved split over " + std::to_string(saved->ranks.size()) + " tensor-parallel ranks (" + saved->layout +
                          "): each rank holds its own files whole, as rank 0's shown here");
    if (opt.cpuOffloadCap) {
      bool mlaKept = false;  // SGLang keeps MLA's kv_b_proj: said where the model has one
      for (const auto& t : c.tensors) mlaKept |= opt.cpuOffloadEngine == "sglang" && !offloadableByCpuOffload(t, "sglang") && offloadableByCpuOffload(t, "vllm");
      const bool sglang = opt.cpuOffloadEngine == "sglang";
      for (auto& rp : res.ranks) moveToHostByCpuOffload(c, opt.cpuOffloadCap, opt.cpuOffloadEngine, rp);
      res.notes.push_back(std::string(sglang ? "SGLang" : "vLLM") + " --cpu-offload-gb: " + std::to_string(opt.cpuOffloadCap) +
                          " bytes of each rank's decoder-layer weights in host memory, the first layers first" + (mlaKept ? " (MLA's kv_b_proj stays on the device)" : "") +
                          "; the engine moves whole parameters, so it "
                          "moves this much and up to one parameter more (which parameter of a layer goes first follows the model's module order): "
                          "the device bytes shown are the most it keeps");
    }

    // Derived buffers the loader would build from what each rank holds: the loader's own list.
    for (auto& rp : res.ranks) rp.derived = derivedBuffers(c, opt, rp).bytes();

    double sum = 0, mx = 0;
    for (auto& rp : res.ranks) {
      for (int k = 0; k < kCategories; ++k)
        if (k != Deferred) rp.resident += rp.bytes[size_t(k)];
      rp.transient = uint64_t(std::llround(double(rp.resident) * (res.multiplier - 1.0)));
      rp.peak = rp.resident + rp.transient + rp.derived;
      if (opt.capacity) {
        rp.headroom = int64_t(*opt.capacity) - int64_t(opt.reserved) - int64_t(rp.peak);
        rp.fits = rp.headroom >= 0;
      }
      sum += double(rp.resident);
      mx = std::max(mx, double(rp.resident));
    }
    res.imbalance = sum > 0 ? mx / (sum / double(res.ranks.size())) : 1.0;
    return res;
  });
}

}  // namespace ws::plan
