#include "core/plan/vllm_profile.h"

#include <algorithm>
#include <cctype>

#include "core/util/format_bytes.h"

namespace ws::plan {

VllmServeDefaults vllmServeDefaults(uint64_t deviceTotalBytes, std::string_view deviceName) {
  std::string name(deviceName);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (deviceTotalBytes >= (uint64_t(70) << 30) && name.find("a100") == std::string::npos) return {8192, 1024};
  return {2048, 256};
}

std::vector<VllmProfileMoment> vllmProfileMoments(const ModelDescription& m, const KvOptions& o) {
  std::vector<VllmProfileMoment> r;
  const uint64_t tokens = uint64_t(std::max<int64_t>(0, o.maxNumBatchedTokens));
  if (m.vocabSize > 0) {
    // profile_run -> _dummy_run(max_num_tokens) spreads the tokens over min(tokens, max_num_seqs)
    // requests and returns one hidden state each; _dummy_sampler_run computes their logits
    // (compute_logits, in the model's 16-bit dtype) and the sampler copies them to float32
    // (v1/sample/sampler.py: logits.to(torch.float32)) while the first is still held.
    const int64_t seqs = o.maxNumSeqs > 0 ? o.maxNumSeqs : o.defaultMaxNumSeqs;
    const uint64_t rows = std::min<uint64_t>(tokens, uint64_t(std::max<int64_t>(1, seqs)));
    r.push_back({"sampler",
                 "min(max-num-batched-tokens " + std::to_string(tokens) + ", max-num-seqs " + std::to_string(seqs) + ") requests x vocab " +
                     std::to_string(m.vocabSize) + " x (2 B + 4 B) of logits in 16 bits and their float32 copy (gpu_model_runner.py _dummy_sampler_run, sample/sampler.py)",
                 rows * uint64_t(m.vocabSize) * 6});
  }
  if (m.numExperts <= 0 && m.intermediateSize > 0) {
    // A dense MLP: a gated one (qwen2.py / llama.py MLP.forward) holds the merged gate-up
    // projection's output of 2 x intermediate / TP a token while SiluAndMul allocates its output of
    // half that (activation.py forward_cuda); an ungated one its first projection's output of
    // intermediate / TP while the activation allocates its own. The config does not say which, so
    // the bound is the ungated one's: 2 x intermediate / TP a token, in the activations' 16-bit dtype.
    const uint64_t tp = uint64_t(std::max(1, o.tp)), i = uint64_t(m.intermediateSize) / tp;
    r.push_back({"dense MLP",
                 "max-num-batched-tokens " + std::to_string(tokens) + " x 2 x intermediate / TP " + std::to_string(i) +
                     " x 2 B: the up (or gate-up) projection's output and the activation's (model_executor/layers/activation.py)",
                 tokens * 2 * i * 2});
  }
  if (m.numExperts > 0 && m.expertsPerToken > 0 && m.expertIntermediateSize > 0 && m.hiddenSize > 0) {
    // fused_experts_impl sizes its caches for M = min(tokens, VLLM_FUSED_MOE_CHUNK_SIZE 32768)
    // tokens: cache13 of M x top-k x max(N, K) (w13's output, reused for w2's) and cache2 of
    // M x top-k x N / 2, both in the activations' dtype. N = 2 x the expert intermediate size:
    // weightscope places whole experts on a rank (expert parallelism), not TP shards of them.
    const uint64_t m1 = std::min<uint64_t>(tokens, 32768), k = uint64_t(m.expertsPerToken);
    const uint64_t n = 2 * uint64_t(m.expertIntermediateSize), h = uint64_t(m.hiddenSize);
    r.push_back({"fused MoE",
                 "min(max-num-batched-tokens " + std::to_string(tokens) + ", 32768) x top-k " + std::to_string(k) + " x (max(2 x expert intermediate " +
                     std::to_string(n) + ", hidden " + std::to_string(h) + ") + " + std::to_string(n / 2) +
                     ") x 2 B of cache13 and cache2 (model_executor/layers/fused_moe/fused_moe.py fused_experts_impl)",
                 m1 * k * (std::max(n, h) + n / 2) * 2});
  }
  return r;
}

std::vector<Reserve> vllmProfileReserves(const ModelDescription& m, const KvOptions& o) {
  const auto moments = vllmProfileMoments(m, o);
  if (moments.empty()) return {};
  const auto peak = std::max_element(moments.begin(), moments.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  std::string formula = "at least the largest moment of vLLM 0.11.0's profile run (gpu_model_runner.py profile_run), " + peak->name + ": ";
  for (const auto& x : moments) formula += x.name + " " + formatBytes(x.bytes) + " = " + x.formula + "; ";
  formula += "the rest of its activations and the non-torch memory vLLM measures";
  return {{"profile_run", formula, peak->bytes}};
}

}  // namespace ws::plan
