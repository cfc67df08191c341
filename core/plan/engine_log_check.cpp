#include "core/plan/engine_log_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/plan/llama_cpp_cache.h"
#include "core/plan/llama_cpp_compute.h"
#include "core/plan/vllm_profile.h"
#include "core/util/format_bytes.h"

namespace ws::plan {

namespace {

constexpr double kGiB = double(1ull << 30);

std::string fixed(double v, int decimals) {
  if (std::fabs(v) < 0.5 * std::pow(10.0, -decimals)) v = 0;  // no "-0.00"
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string signedCount(int64_t d) { return (d > 0 ? "+" : d < 0 ? "-" : "") + formatCount(uint64_t(std::llabs(d))); }

// The figure as the engine would print it from `exact`: rounded to its decimals.
double printed(double exact, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(exact * scale) / scale;
}

// vLLM 0.11.0 v1/core/kv_cache_utils.py get_num_blocks: available // page_size // num_layers
// blocks, each `block` tokens; for one KV group of full or MLA layers that is
// floor(available / (block x bytes a token over all layers)) blocks.
uint64_t vllmTokens(double availableBytes, uint64_t bytesPerToken, uint64_t block) {
  if (availableBytes <= 0 || !bytesPerToken) return 0;
  return uint64_t(availableBytes) / (bytesPerToken * block) * block;
}

// The available-memory line of `worker` (the same worker, else the only one), for its tokens line.
// vLLM's engine core prints the tokens lines without the worker's name: each is then held to
// the worker whose printed memory explains it best.
const LoggedFigure* availableFor(const EngineLog& log, const LoggedFigure& tokens, uint64_t bpt, uint64_t block) {
  const LoggedFigure* best = nullptr;
  uint64_t bestGap = UINT64_MAX;
  for (const auto& a : log.availableKvGib) {
    if (!tokens.worker.empty() && a.worker == tokens.worker) return &a;
    const uint64_t p = vllmTokens(a.value * kGiB, bpt, block);
    const uint64_t gap = p > tokens.value ? p - uint64_t(tokens.value) : uint64_t(tokens.value) - p;
    if (gap < bestGap) bestGap = gap, best = &a;
  }
  return best;
}

void vllmRows(const EngineLog& log, const KvCache& kv, const LogCheckInputs& in, std::vector<LogRow>& rows) {
  const uint64_t block = uint64_t(std::max<int64_t>(1, in.kv.blockSize)), bpt = kv.bytesPerToken;
  const bool hybrid = kv.layers.sliding || kv.layers.linear;
  for (const auto& t : log.kvTokens) {
    LogRow r{"GPU KV cache size (tokens)", t.worker, "", formatCount(uint64_t(t.value)), "", LogVerdict::NotPredicted, ""};
    const LoggedFigure* a = availableFor(log, t, bpt, block);
    if (hybrid) {
      r.explanation = "sliding-window or linear-attention layers: vLLM splits its blocks over KV groups, not modeled here";
    } else if (!a) {
      r.explanation = "the log prints no available KV cache memory to size it from";
    } else {
      // The engine prints its available memory to a.decimals: the bytes it really had lie within
      // half a unit of that, and so do the tokens the prediction allows.
      const double half = 0.5 * std::pow(10.0, -a->decimals) * kGiB;
      const uint64_t p = vllmTokens(a->value * kGiB, bpt, block), lo = vllmTokens(a->value * kGiB - half, bpt, block),
                     hi = vllmTokens(a->value * kGiB + half, bpt, block);
      const uint64_t logged = uint64_t(t.value);
      r.predicted = formatCount(p);
      r.difference = signedCount(int64_t(logged) - int64_t(p));
      r.verdict = logged == p ? LogVerdict::Agrees : logged >= lo && logged <= hi ? LogVerdict::WithinRounding : LogVerdict::Differs;
      r.explanation = "from " + fixed(a->value, a->decimals) + " GiB available" + (a->worker.empty() ? "" : " (" + a->worker + ")") + " / " +
                      formatCount(bpt) + " B a token (" + kv.dtype + ") in " + std::to_string(block) + "-token blocks";
      if (r.verdict == LogVerdict::WithinRounding)
        r.explanation += "; the log rounds that memory to " + fixed(std::pow(10.0, -a->decimals), a->decimals) + " GiB: " + formatCount(lo) + " to " +
                         formatCount(hi) + " tokens";
      if (r.verdict == LogVerdict::Differs)
        r.explanation += "; its rounding allows only " + formatCount(lo) + " to " + formatCount(hi) + " tokens: the log implies " +
                         fixed(double(logged) ? a->value * kGiB / double(logged) : 0, 0) + " B a token";
    }
    rows.push_back(std::move(r));
  }
  // vLLM get_max_concurrency_for_kv_cache_config: num_blocks / cdiv(max_model_len, block). The
  // plan's max_concurrency (fitKvCache) is held to it on the engine's own token count.
  for (size_t i = 0; i < log.maxConcurrency.size() && i < log.kvTokens.size(); ++i) {
    const auto& c = log.maxConcurrency[i];
    LogRow r{"Maximum concurrency for " + formatCount(uint64_t(std::max<int64_t>(0, log.concurrencyLen))) + " tokens", c.worker, "", fixed(c.value, c.decimals) + "x",
             "", LogVerdict::NotPredicted, ""};
    if (hybrid || log.concurrencyLen <= 0) {
      r.explanation = hybrid ? "sliding-window or linear-attention layers: not modeled here" : "the log does not say for how many tokens";
    } else {
      KvCache at = kv;
      at.maxModelLen = log.concurrencyLen;
      const KvFit f = fitKvCache(at, int64_t(uint64_t(log.kvTokens[i].value) * bpt), int64_t(block));
      const double p = printed(f.maxConcurrency, c.decimals);
      r.predicted = fixed(p, c.decimals) + "x";
      r.difference = fixed(c.value - p, c.decimals);
      r.verdict = std::fabs(c.value - p) < 0.5 * std::pow(10.0, -c.decimals) ? LogVerdict::Agrees : LogVerdict::Differs;
      r.explanation = "the engine's " + formatCount(uint64_t(log.kvTokens[i].value)) + " tokens over " + formatCount(uint64_t(log.concurrencyLen)) + " a request";
      if (r.verdict == LogVerdict::Differs) r.explanation += "; vLLM counts whole blocks a request: cdiv(L, " + std::to_string(block) + ")";
    }
    rows.push_back(std::move(r));
  }
  // Available memory: vLLM 0.11.0 gpu_worker.py determine_available_memory, requested memory
  // (total x gpu_memory_utilization) less what the profile run saw in use: the weights, the
  // activation peak and non-torch memory. Only the weights are printed; the rest is a residual.
  if (in.requested && !log.weightsGib.empty()) {
    uint64_t reserves = 0;
    std::string names;
    for (const auto& x : in.reserves) reserves += x.bytes, names += (names.empty() ? "" : ", ") + x.name + " " + formatBytes(x.bytes);
    for (const auto& a : log.availableKvGib) {
      const double w = log.weightsGib.front().value * kGiB;
      const double p = double(*in.requested) - w - double(reserves);
      rows.push_back({"Available KV cache memory", a.worker, fixed(p / kGiB, a.decimals) + " GiB", fixed(a.value, a.decimals) + " GiB",
                      fixed(a.value - p / kGiB, a.decimals) + " GiB", LogVerdict::Residual,
                      "requested " + fixed(double(*in.requested) / kGiB, 2) + " GiB - logged weights " + fixed(w / kGiB, 2) + " GiB - weightscope's reserves (" +
                          (names.empty() ? "none" : names) +
                          "); the difference is what vLLM measured beyond those lower bounds - the rest of its profile run's "
                          "activations and the non-torch memory (cuBLAS workspaces, NCCL) - " +
                          (log.peakActivationGib.empty() ? std::string("not itemized by the log")
                                                         : "itemized below where the log prints it (peak activation " + fixed(log.peakActivationGib.front().value, 2) +
                                                               " GiB, non-torch " + fixed(log.nonTorchGib.front().value, 2) + " GiB on " +
                                                               (log.peakActivationGib.front().worker.empty() ? "its worker" : log.peakActivationGib.front().worker) + ")")});
    }
  } else if (!log.availableKvGib.empty()) {
    rows.push_back({"Available KV cache memory", "", "", fixed(log.availableKvGib.front().value, log.availableKvGib.front().decimals) + " GiB", "",
                    LogVerdict::NotPredicted, "give --gpu-mem (and --gpu-memory-utilization when the log does not state it) to predict it"});
  }
  // What the profile run measured, where vLLM itemizes it: its activation peak against the
  // profile_run line's lower bound (vllm_profile.h); non-torch and CUDA-graph memory measured only.
  const Reserve* profile = nullptr;
  for (const auto& x : in.reserves)
    if (x.name == "profile_run") profile = &x;
  for (const auto& a : log.peakActivationGib) {
    LogRow r{"peak activation (profile run)", a.worker, "", fixed(a.value, a.decimals) + " GiB", "", LogVerdict::NotPredicted, "the model says too little for a bound"};
    if (profile) {
      // vLLM prints round(x / GiB, 2): "1.4" is 1.40 +- 0.005.
      const double p = double(profile->bytes) / kGiB;
      r.predicted = "at least " + fixed(p, 2) + " GiB";
      r.difference = fixed(a.value - p, 2);
      r.verdict = a.value + 0.005 >= p ? LogVerdict::AboveBound : LogVerdict::Differs;
      r.explanation = "vLLM's measure of its profile run's peak (gpu_worker.py) against " + profile->formula;
    }
    rows.push_back(std::move(r));
  }
  for (const auto& n : log.nonTorchGib)
    rows.push_back({"non-torch memory", n.worker, "", fixed(n.value, n.decimals) + " GiB", "", LogVerdict::NotPredicted,
                    "cuBLAS workspaces, NCCL buffers and what else the CUDA driver holds beside PyTorch's allocator: vLLM measures it, weightscope does not predict it"});
  for (const auto& g : log.cudaGraphGib)
    rows.push_back({"CUDA graph memory", g.worker, "", fixed(g.value, g.decimals) + " GiB", "", LogVerdict::NotPredicted,
                    "captured after the KV cache is sized (capture_model), so outside vLLM's budget: give it to plan with --reserve-cuda-graphs"});
}

// The figure of `worker` among `figures` (the same worker, else the first).
const LoggedFigure* sameWorker(const std::vector<LoggedFigure>& figures, const std::string& worker) {
  for (const auto& f : figures)
    if (f.worker == worker) return &f;
  return figures.empty() ? nullptr : &figures.front();
}

// SGLang's token count from its own free-memory lines: kv_cache_configurator.py
// _profile_available_bytes gives the pool the free memory after the weights less
// pre_model_load_memory x (1 - mem_fraction_static) - the free memory measured just before the
// weights load, as "Load weight begin" prints it - and DefaultPoolConfigurator.calculate_pool_sizes
// divides that by the bytes a token, in whole pages (SGLang 0.5.23; the same formula as
// model_runner.profile_max_num_token in the 0.4 releases).
LogRow sglangTokensRow(const EngineLog& log, const LoggedFigure& t, const KvCache& kv, int64_t page) {
  LogRow r{"KV cache #tokens", t.worker, "", formatCount(uint64_t(t.value)), "", LogVerdict::NotPredicted, ""};
  const LoggedFigure* before = sameWorker(log.freeBeforeWeightsGib, t.worker);
  const LoggedFigure* after = sameWorker(log.freeAfterWeightsGib, t.worker);
  const double share = log.gpuMemoryUtilization;
  if (kv.layers.mla || kv.layers.sliding || kv.layers.linear || !kv.bytesPerToken) {
    r.explanation = "MLA, sliding or linear-attention layers: SGLang's other pools, not modeled here";
  } else if (!before || !after || !(share > 0)) {
    r.explanation = std::string("the log prints no ") + (!before ? "\"Load weight begin. avail mem\"" : !after ? "\"Load weight end. ... avail mem\"" : "mem_fraction_static") +
                    " to size the pool from";
  } else {
    const auto tokensOf = [&](double freeAfter, double freeBefore) -> uint64_t {
      const double rest = freeAfter - freeBefore * (1 - share);
      if (rest <= 0) return 0;
      const uint64_t n = uint64_t(rest * kGiB) / kv.bytesPerToken;
      return n / uint64_t(page) * uint64_t(page);
    };
    const double halfAfter = 0.5 * std::pow(10.0, -after->decimals), halfBefore = 0.5 * std::pow(10.0, -before->decimals);
    const uint64_t p = tokensOf(after->value, before->value), lo = tokensOf(after->value - halfAfter, before->value + halfBefore),
                   hi = tokensOf(after->value + halfAfter, before->value - halfBefore);
    const uint64_t logged = uint64_t(t.value);
    r.predicted = formatCount(p);
    r.difference = signedCount(int64_t(logged) - int64_t(p));
    r.verdict = logged == p ? LogVerdict::Agrees : lo <= logged && logged <= hi ? LogVerdict::WithinRounding : LogVerdict::Differs;
    r.explanation = "(free after the weights " + fixed(after->value, after->decimals) + " GB - free before them " + fixed(before->value, before->decimals) +
                    " GB x (1 - mem_fraction_static " + fixed(share, 3) + ")) x 2^30 / " + formatCount(kv.bytesPerToken) + " B a token (" + kv.dtype +
                    ") (kv_cache_configurator.py _profile_available_bytes)";
    if (r.verdict != LogVerdict::Agrees)
      r.explanation += "; the log rounds both to " + fixed(2 * halfAfter, after->decimals) + " GB: " + formatCount(lo) + " to " + formatCount(hi) + " tokens";
  }
  return r;
}

void sglangRows(const EngineLog& log, const ModelDescription& m, const KvCache& kv, const LogCheckInputs& in, std::vector<LogRow>& rows) {
  // SGLang 0.5.23 srt/mem_cache/memory_pool.py MHATokenToKVPool._create_buffers: per layer a K and
  // a V buffer of (size + page_size) slots x heads x head_dim; logged as bytes / 1024**3.
  const int64_t page = std::max<int64_t>(1, in.kv.blockSize);
  const int64_t hd = m.attention.headDim, vhd = m.attention.vHeadDim;
  const double kShare = hd > 0 && vhd > 0 && hd != vhd ? double(hd) / double(hd + vhd) : 0.5;
  for (size_t i = 0; i < log.kvTokens.size() && i < log.kSizeGib.size(); ++i) {
    const auto& t = log.kvTokens[i];
    rows.push_back(sglangTokensRow(log, t, kv, page));
    struct Part {
      const char* what;
      LoggedFigure logged;
      double share;
    };
    for (const auto& [what, logged, share] : {Part{"K", log.kSizeGib[i], kShare}, Part{"V", log.vSizeGib[i], 1 - kShare}}) {
      LogRow r{std::string("KV cache ") + what + " size at " + formatCount(uint64_t(t.value)) + " tokens", t.worker, "", fixed(logged.value, logged.decimals) + " GB", "",
               LogVerdict::NotPredicted, ""};
      if (kv.layers.mla || kv.layers.sliding || kv.layers.linear) {
        r.explanation = "MLA, sliding or linear-attention layers: SGLang's other pools, not modeled here";
      } else {
        const double bytes = double(t.value + double(page)) * double(kv.bytesPerToken) * share;
        const double p = printed(bytes / kGiB, logged.decimals);
        r.predicted = fixed(p, logged.decimals) + " GB";
        r.difference = fixed(logged.value - p, logged.decimals);
        r.verdict = std::fabs(logged.value - p) < 0.5 * std::pow(10.0, -logged.decimals) ? LogVerdict::Agrees : LogVerdict::Differs;
        r.explanation = "(" + formatCount(uint64_t(t.value)) + " + page " + std::to_string(page) + ") slots x " + formatCount(uint64_t(double(kv.bytesPerToken) * share)) +
                        " B a token (" + kv.dtype + "), GB = 2^30 as SGLang prints it";
      }
      rows.push_back(std::move(r));
    }
  }
}

// llama.cpp's output buffer at context creation: output_reserve(n_seq_max) sizes it for n_seq_max
// outputs of n_vocab FP32 logits, nothing else at llama-server's defaults (no embeddings, no
// backend samplers: src/llama-context.cpp at 0c1e57098, llama_context::output_reserve), printed in
// MiB to 2 decimals - predicted from the model's vocabulary and the log's n_seq_max.
void llamaCppOutputRows(const EngineLog& log, const LogCheckInputs& in, std::vector<LogRow>& rows) {
  for (const auto& logged : log.outputBufferMib) {
    LogRow r{"output buffer", logged.worker, "", fixed(logged.value, logged.decimals) + " MiB", "", LogVerdict::NotPredicted, ""};
    if (in.nVocab <= 0 || log.nSeqMax <= 0) {
      r.explanation = "n_vocab x n_seq_max x 4 B (llama_context::output_reserve): " + std::string(in.nVocab <= 0 ? "the vocabulary size" : "the log's n_seq_max") + " is unknown";
    } else {
      const uint64_t bytes = uint64_t(in.nVocab) * uint64_t(log.nSeqMax) * 4;
      const double p = printed(double(bytes) / (1024.0 * 1024.0), logged.decimals);
      r.predicted = fixed(p, logged.decimals) + " MiB";
      r.difference = fixed(logged.value - p, logged.decimals);
      r.verdict = std::fabs(logged.value - p) < 0.5 * std::pow(10.0, -logged.decimals) ? LogVerdict::Agrees : LogVerdict::Differs;
      r.explanation = "n_vocab " + formatCount(uint64_t(in.nVocab)) + " x n_seq_max " + std::to_string(log.nSeqMax) + " x 4 B of logits = " + formatCount(bytes) +
                      " B (llama_context::output_reserve)";
    }
    rows.push_back(std::move(r));
  }
}

// llama.cpp's compute buffers against the lower bound of what its worst-case graph holds at once
// (llama_cpp_compute.h) at the log's settings: the largest buffer it printed must reach it. With
// -fa left at auto and not resolved in the log, the bound takes flash attention's, the smaller.
void llamaCppComputeRow(const EngineLog& log, const ModelDescription& m, const LlamaCppCacheOptions& cache, std::vector<LogRow>& rows) {
  if (log.computeBufferMib.empty()) return;
  const LoggedFigure* largest = &log.computeBufferMib.front();
  for (const auto& f : log.computeBufferMib)
    if (f.value > largest->value) largest = &f;
  LogRow r{"compute buffer (largest)", largest->worker, "", fixed(largest->value, largest->decimals) + " MiB", "", LogVerdict::NotPredicted, ""};
  LlamaCppComputeOptions o;
  o.cache = cache;
  if (log.nBatch > 0) o.nBatch = log.nBatch;
  o.flashAttn = log.flashAttn != 0;
  const auto bound = llamaCppComputeBound(m, o);
  if (!bound) {
    r.explanation = bound.error().message;
  } else {
    const double mib = double(bound.value().bytes) / double(1 << 20);
    r.predicted = "at least " + fixed(mib, largest->decimals) + " MiB";
    r.difference = fixed(largest->value - mib, largest->decimals);
    r.verdict = largest->value + 0.5 * std::pow(10.0, -largest->decimals) >= mib ? LogVerdict::AboveBound : LogVerdict::Differs;
    r.explanation = bound.value().formula + (log.flashAttn < 0 ? ", flash attention taken (-fa auto, not resolved in the log)" : "") +
                    "; above it: the graph's other live tensors (FFN / MoE intermediates, inputs), not modelled";
  }
  rows.push_back(std::move(r));
}

// llama.cpp: each cache it printed held line for line to llamaCppCache at the log's own
// llama_context settings (n_ctx, n_seq_max, n_ubatch, kv_unified, --swa-full, -ctk/-ctv).
void llamaCppRows(const EngineLog& log, const ModelDescription& m, const LogCheckInputs& in, std::vector<LogRow>& rows) {
  llamaCppOutputRows(log, in, rows);
  // A folder with config.json alone: the model as the conversion would hand it to llama.cpp.
  const Result<ModelDescription> converted = in.gguf ? Result<ModelDescription>(m) : llamaCppModelOfConfig(m);
  if (!converted) {
    rows.push_back({"llama_kv_cache", "", "", std::to_string(log.llamaKvLines.size()) + " caches", "", LogVerdict::NotPredicted, converted.error().message});
    return;
  }
  LlamaCppCacheOptions o;
  if (log.maxModelLen > 0) o.nCtx = log.maxModelLen;
  if (log.nSeqMax > 0) o.nSeq = int(log.nSeqMax);
  if (log.nUbatch > 0) o.nUbatch = log.nUbatch;
  if (log.nRsSeq > 0) o.nRsSeq = int(log.nRsSeq);
  o.unified = log.kvUnified == 1;
  o.swaFull = log.swaFull;
  if (!log.typeK.empty()) o.typeK = log.typeK, o.typeV = log.typeV;
  auto parts = llamaCppCache(converted.value(), o);
  if (!parts) {
    rows.push_back({"llama_kv_cache", "", "", "", "", LogVerdict::NotPredicted, parts.error().message});
    return;
  }
  const size_t n = std::max(parts.value().size(), log.llamaKvLines.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string predicted = i < parts.value().size() ? parts.value()[i].logLine(o) : "(no such cache)";
    const std::string logged = i < log.llamaKvLines.size() ? log.llamaKvLines[i] : "(not printed)";
    // Releases before the cache classes were renamed print the same line as llama_kv_cache_unified,
    // padding the seqs column as "%2u/%2u": the same figures, compared without the spaces.
    const auto figures = [](std::string line) {
      if (line.starts_with("llama_kv_cache_unified: ")) line = "llama_kv_cache: " + line.substr(24);
      line.erase(std::remove(line.begin(), line.end(), ' '), line.end());
      return line;
    };
    const bool same = figures(predicted) == figures(logged);
    const LlamaCppCachePart* part = i < parts.value().size() ? &parts.value()[i] : nullptr;
    const std::string name = part && !part->name.empty() ? " (" + part->name + (part->state ? " compressor state" : "") + ")" : "";
    rows.push_back({"llama_kv_cache" + name, "", predicted, logged, "", same ? LogVerdict::Agrees : LogVerdict::Differs,
                    "the line llama.cpp prints, at -c " + std::to_string(o.nCtx) + " -np " + std::to_string(o.nSeq) + " -ub " + std::to_string(o.nUbatch) +
                        (o.unified ? " --kv-unified" : "") + (o.swaFull ? " --swa-full" : "") + " -ctk " + o.typeK + " -ctv " + o.typeV +
                        (o.nRsSeq ? " n_rs_seq " + std::to_string(o.nRsSeq) : "")});
  }
  llamaCppComputeRow(log, converted.value(), o, rows);
}

}  // namespace

const char* logVerdictName(LogVerdict v) {
  switch (v) {
    case LogVerdict::Agrees: return "agrees";
    case LogVerdict::WithinRounding: return "within rounding";
    case LogVerdict::Differs: return "differs";
    case LogVerdict::Residual: return "residual";
    case LogVerdict::NotPredicted: return "not predicted";
    case LogVerdict::AboveBound: return "above its bound";
  }
  return "?";
}

KvOptions kvOptionsOfLog(const EngineLog& log, KvOptions o) {
  if (log.maxModelLen > 0) o.maxModelLen = log.maxModelLen;
  if (log.tp > 0) o.tp = log.tp;
  if (log.maxNumBatchedTokens > 0) o.maxNumBatchedTokens = log.maxNumBatchedTokens;
  if (log.maxNumSeqs > 0) o.defaultMaxNumSeqs = log.maxNumSeqs;  // the profile run's sampler requests
  if (log.blockSize > 0) o.blockSize = log.blockSize;
  else if (log.engine == "sglang") o.blockSize = 1;  // SGLang's page_size default
  if (!log.kvCacheDtype.empty()) o.dtype = log.kvCacheDtype;
  return o;
}

LogCheckInputs logCheckInputs(const ModelDescription& m, const EngineLog& log, const LogCheckRequest& r) {
  LogCheckInputs in;
  in.kv = kvOptionsOfLog(log, r.fallback);
  in.weightsPerRank = r.weightsPerRank;
  in.gguf = r.gguf;
  in.nVocab = r.nVocab > 0 ? r.nVocab : m.vocabSize;
  if (r.deviceTotal) {
    const double u = r.utilization > 0 ? r.utilization : log.gpuMemoryUtilization > 0 ? log.gpuMemoryUtilization : 0.9;
    in.requested = uint64_t(double(*r.deviceTotal) * u);
  } else if (!log.requestedGib.empty() && r.utilization <= 0) {
    in.requested = uint64_t(log.requestedGib.front().value * kGiB);  // vLLM printed it ("Desired GPU memory utilization is (u, R GiB)")
  }
  // No --gpu-mem but the log printed its device's total: vLLM's default sequences for it (its name
  // is not printed, so the A100 exception cannot be told).
  if (!r.deviceTotal && !log.deviceTotalGib.empty() && log.maxNumSeqs <= 0)
    in.kv.defaultMaxNumSeqs = std::min(vllmServeDefaults(uint64_t(log.deviceTotalGib.front().value * kGiB), "").maxNumSeqs, in.kv.maxNumBatchedTokens);
  in.reserves = runtimeReserves(m, in.kv, r.cudaGraphs);
  return in;
}

Result<std::vector<LogRow>> checkEngineLog(const ModelDescription& m, const EngineLog& log, const LogCheckInputs& in) {
  auto kv = kvCachePerRank(m, in.kv);
  if (!kv) return kv.error();
  std::vector<LogRow> rows;
  if (log.pp > 1) {
    rows.push_back({"pipeline parallel " + std::to_string(log.pp), "", "", "", "", LogVerdict::NotPredicted,
                    "each stage holds only its layers' cache: pipeline stages are not modeled, so no KV figure is predicted"});
    return rows;
  }
  // The weights: the plan's rank 0 against the engine's measurement of its load (llama.cpp: the
  // model buffers it reports, in MiB, summed over devices).
  struct Weights {
    LoggedFigure figure;
    double unit;
    const char* unitName;
  };
  std::vector<Weights> weights;
  for (const auto& w : log.weightsGib) weights.push_back({w, kGiB, "GiB"});
  if (!log.modelBufferMib.empty()) {
    LoggedFigure total{0, 2, "", log.modelBufferMib.front().line};
    for (const auto& f : log.modelBufferMib) total.value += f.value;
    weights.push_back({total, double(1 << 20), "MiB"});
  }
  for (const auto& [w, unit, unitName] : weights) {
    LogRow r{"weights loaded", w.worker, "", fixed(w.value, w.decimals) + " " + unitName, "", LogVerdict::NotPredicted, "PATH holds no weights (a config.json alone)"};
    if (in.weightsPerRank) {
      const double p = double(*in.weightsPerRank) / unit;
      r.predicted = fixed(p, w.decimals) + " " + unitName;
      r.difference = fixed(w.value - p, w.decimals) + " " + unitName;
      r.verdict = LogVerdict::Residual;
      r.explanation = log.engine == "llama.cpp"
                          ? "the GGUF's tensors as planned; llama.cpp reports the model buffers it maps or copies them into, per device"
                          : "the checkpoint's tensors on rank 0 as planned; the engine measures its allocator's growth over the load, which also holds "
                            "buffers it makes (rotary tables, workspaces) and rounds tensors to its allocator's blocks";
    }
    rows.push_back(std::move(r));
  }
  if (log.engine == "vllm") vllmRows(log, kv.value(), in, rows);
  if (log.engine == "sglang") sglangRows(log, m, kv.value(), in, rows);
  if (log.engine == "llama.cpp") llamaCppRows(log, m, in, rows);
  // Workers that printed the same figure once each: one row says it for all of them.
  std::vector<LogRow> unique;
  for (auto& r : rows) {
    bool seen = false;
    for (auto& u : unique)
      if (u.quantity == r.quantity && u.logged == r.logged && u.predicted == r.predicted) {
        if (!r.worker.empty() && u.worker.find(r.worker) == std::string::npos) u.worker += (u.worker.empty() ? "" : ",") + r.worker;
        seen = true;
      }
    if (!seen) unique.push_back(std::move(r));
  }
  return unique;
}

}  // namespace ws::plan
