#include "core/plan/deployment_fit.h"

#include "core/plan/llama_cpp_cache.h"

#include <algorithm>

namespace ws::plan {

uint64_t KvBudget::reserveBytes() const {
  uint64_t n = 0;
  for (const auto& r : reserves) n += r.bytes;
  return n;
}

KvFit KvBudget::fit(const PlanOptions& opt, const RankPlan& rp) const {
  const int64_t free = opt.capacity ? int64_t(*opt.capacity) - int64_t(opt.reserved) - int64_t(rp.resident + rp.derived) - int64_t(reserveBytes()) : 0;
  return fitKvCache(*cache, free, cache->blockSize, options.maxNumSeqs);
}

KvBudget kvBudgetFor(const ModelDescription& m, const KvOptions& o, uint64_t cudaGraphs) {
  KvBudget kv;
  kv.options = o;
  auto cache = kvCachePerRank(m, o);
  if (cache) kv.cache = cache.value();
  else kv.why = cache.error().message;
  kv.reserves = runtimeReserves(m, o, cudaGraphs);
  if (o.sglang && !o.llamaCpp && o.sglangLaunch.preLoadFreeBytes && kv.cache)  // a budget SGLang cannot be said to split
    if (const auto share = sglangStaticShare(m, o.sglangLaunch); !share) kv.cache.reset(), kv.why = share.error().message;
  if (o.llamaCpp && kv.cache) {
    LlamaCppCacheOptions lo;
    lo.nCtx = kv.cache->maxModelLen;
    lo.nSeq = o.maxNumSeqs > 0 ? int(o.maxNumSeqs) : 1;
    lo.typeK = lo.typeV = kv.cache->dtype;
    if (auto parts = llamaCppCache(m, lo))
      for (const auto& p : parts.value()) kv.llamaCppLog.push_back(p.logLine(lo));
  }
  return kv;
}

Result<FitResult> fitDeployment(const Checkpoint& c, const PlanOptions& base, const PlacementSpec& spec, const KvOptions& kvBase, uint64_t cudaGraphs, double target) {
  if (!base.capacity) return Error{ErrorCode::Usage, "fitting needs a GPU budget", {}, std::nullopt, {}};
  if (!(target > 0)) return Error{ErrorCode::Usage, "the number of concurrent requests must be more than 0", {}, std::nullopt, {}};
  FitResult out;
  const int64_t experts = std::max<int64_t>(1, c.model.numExperts);
  for (int ep = 1; ep <= std::max<int64_t>(64, experts) && !out.answer; ep *= 2) {
    if (c.model.numExperts > 0 && ep > experts) break;
    for (int tp = 1; tp <= std::min(ep, 8) && !out.answer; tp *= 2) {
      if (ep % tp) continue;
      auto placement = spec.build(ep, c.model.numExperts);
      if (!placement) return placement.error();
      PlanOptions opt = base;
      opt.placement = placement.value();
      opt.tp = tp;
      auto res = planCheckpoint(c, opt);
      if (!res) return res.error();
      KvOptions ko = kvBase;
      ko.tp = tp;
      ko.sglangLaunch.tpSize = ep, ko.sglangLaunch.attnDpSize = ep / tp;  // SGLang's --tp-size N --attn-dp-size N/t
      const KvBudget kv = kvBudgetFor(c.model, ko, cudaGraphs);
      if (!kv.cache) return Error{ErrorCode::Usage, "KV cache: " + kv.why, {}, std::nullopt, {}};
      // Each group of TP ranks serves its own requests (EP = TP x DP): the deployment serves the
      // worst rank's concurrency once per group.
      FitRow row;
      row.ep = ep, row.tp = tp;
      double worst = -1;
      row.weightsFit = true;
      for (const auto& rp : res.value().ranks) {
        row.weightsFit &= !rp.fits || *rp.fits;
        const double conc = kv.fit(opt, rp).servedConcurrency;  // never more than --max-num-seqs an engine
        worst = worst < 0 ? conc : std::min(worst, conc);
      }
      row.minRankConcurrency = std::max(0.0, worst);
      row.concurrency = row.minRankConcurrency * double(ep / tp);
      row.fits = row.weightsFit && row.concurrency >= target;
      out.tried.push_back(row);
      if (row.fits) out.answer = row;
    }
  }
  return out;
}

}  // namespace ws::plan
