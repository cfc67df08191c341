// What a TP / DP / EP split requires of the model, as each engine checks it while it builds the
// model - before a weight is read, so the refusal costs a start-up, not a load.
//   vLLM 0.11.0 (V/ = vllm/): V/config/model.py ModelConfig.verify_with_parallel_config; the
//     linear layers' divide() (V/model_executor/layers/linear.py); V/model_executor/layers/
//     quantization/utils/fp8_utils.py validate_fp8_block_shape; fp8.py and compressed_tensors_moe.py
//     create_weights for FP8 experts; gptq.py / awq.py create_weights; utils/marlin_utils.py;
//     V/model_executor/layers/fused_moe/layer.py FusedMoE.__init__ and config.py
//     FusedMoEParallelConfig.make (how experts split).
//   SGLang 0.5.23 (S/ = sglang/srt/): the models' attention asserts (models/llama.py, qwen3.py,
//     deepseek_v2.py) and layers/linear.py QKVParallelLinear; layers/quantization/fp8.py
//     validate_block_quant_shapes and Fp8MoEMethod.create_fp8_moe_weight_;
//     model_executor/model_runner_components/moe_ep_setup.py check_quantized_moe_compatibility;
//     layers/moe/fused_moe_triton/layer.py FusedMoE.__init__.
#include "core/validate/engines/layout_rules.h"

#include <algorithm>
#include <string>

namespace ws::val::engines {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

// The widths each engine derives from the layout.
struct Widths {
  int64_t attnTp;   // attention heads are split over this many ranks
  int64_t denseTp;  // the dense MLP layers over this many (0: unknown)
  int64_t moeTp;    // each expert's intermediate dimension over this many
  int64_t moeEp;    // the routed experts over this many
};

Widths widthsOf(const std::string& engine, const EngineLayout& l) {
  if (engine == "sglang") {
    // derive_attn_tp_size / derive_parallel_widths: attention TP = tp / attn_dp, MoE TP = tp / ep.
    // How the dense MLP splits under DP attention was not traced: 0, unknown, not checked.
    return {l.tp / l.dp, l.dp > 1 ? 0 : l.tp, l.tp / l.ep, l.ep};
  }
  // vLLM: the attention and dense layers split over TP; the experts over DP x TP, by EP (whole
  // experts, intermediate unsplit) or by TP (each expert's intermediate split DP x TP ways).
  const bool ep = l.ep > 1;
  return {l.tp, l.tp, ep ? 1 : int64_t(l.tp) * l.dp, ep ? l.ep : 1};
}

bool isMla(const ModelDescription& m) { return m.attention.kvLoraRank > 0; }

void tpSplitRules(const std::string& engine, const ModelDescription& m, const Widths& w, Sink& sink) {
  // The dense MLP's column and row shards: divide() asserts the intermediate splits evenly.
  if (!m.denseLayers.empty() && m.intermediateSize > 0 && w.denseTp > 1 && m.intermediateSize % w.denseTp)
    sink.add("WS-E003", num(m.intermediateSize) + " is not divisible by " + num(w.denseTp) + " - the dense MLP's intermediate over TP " + num(w.denseTp) +
                            " (the parallel linear layers' divide() asserts it)");
  const int64_t heads = m.attention.numHeads, kv = m.attention.numKvHeads, tp = w.attnTp;
  if (heads <= 0 || tp <= 1) return;
  if (heads % tp) {
    sink.add("WS-E003", engine == "vllm" ? "Total number of attention heads (" + num(heads) + ") must be divisible by tensor parallel size (" + num(tp) +
                                              ") - vLLM refuses the layout (ModelConfig.verify_with_parallel_config)"
                                         : num(heads) + " attention heads do not divide over attention TP " + num(tp) +
                                               " - SGLang's attention asserts total_num_heads % tp_size == 0");
    return;
  }
  // MLA keeps one latent per token, replicated: no KV-head split to check.
  if (isMla(m) || kv <= 0) return;
  if (tp >= kv ? tp % kv : kv % tp)
    sink.add("WS-E003", num(kv) + " KV heads and TP " + num(tp) + ": " + (tp >= kv ? num(tp) + " is not divisible by " + num(kv) : num(kv) + " is not divisible by " + num(tp)) +
                            " - QKVParallelLinear replicates KV heads only when TP is a multiple of them, and splits them only when they are a multiple of TP");
}

// The experts' split: intermediate over moeTp, experts over moeEp.
void moeSplitRules(const std::string& engine, const ModelDescription& m, const EngineLayout& l, const Widths& w, Sink& sink) {
  if (m.numExperts <= 0) return;
  const int64_t I = m.expertIntermediateSize, E = m.numExperts;
  if (engine == "vllm") {
    if (I > 0 && I % w.moeTp)
      sink.add("WS-E004", "expert intermediate " + num(I) + " does not split over DP x TP = " + num(w.moeTp) +
                              " ranks without expert parallelism (FusedMoE.__init__ asserts intermediate_size % tp_size == 0); use --ep");
    // Qwen-family MoE models refuse an attention TP above the expert count (qwen3_moe.py and
    // others; deepseek_v2.py does not).
    static const char* kTpAboveExperts[] = {"Qwen3MoeForCausalLM", "Qwen2MoeForCausalLM", "Qwen3NextForCausalLM", "DeepseekForCausalLM",
                                            "Ernie4_5_MoeForCausalLM", "HunYuanMoEV1ForCausalLM", "Step3TextForCausalLM"};
    for (const auto& a : m.architectures)
      for (const char* k : kTpAboveExperts)
        if (a == k && l.tp > E) sink.add("WS-E004", "Tensor parallel size " + num(l.tp) + " is greater than the number of experts " + num(E) + ". (" + a + ")");
    // gpt-oss's MLP block asserts intermediate_size % world_size == 0, expert parallel or not
    // (gpt_oss.py MLPBlock.__init__; the world is TP x DP with DP > 1).
    for (const auto& a : m.architectures)
      if (a == "GptOssForCausalLM" && I > 0 && I % (int64_t(l.tp) * l.dp))
        sink.add("WS-E004", "gpt-oss intermediate " + num(I) + " is not a multiple of the world size " + num(int64_t(l.tp) * l.dp) + " (gpt_oss.py MLPBlock asserts it)");
  } else if (engine == "sglang") {
    if (E % w.moeEp)
      sink.add("WS-E004", num(E) + " routed experts do not divide over EP " + num(w.moeEp) + " (FusedMoE.__init__ asserts num_global_routed % ep_size == 0)");
  }
}

// FP8 block quantization: every TP shard a whole number of blocks.
void blockRules(const std::string& engine, const ModelDescription& m, const Widths& w, Sink& sink) {
  const std::vector<int64_t> b = fp8BlockOf(m);
  if (b.empty()) return;
  const int64_t bn = b[0], bk = b[1];
  auto outShard = [&](const std::string& what, int64_t out, int64_t tp) {
    if (tp > 1 && out > 0 && (out / tp) % bn)
      sink.add("WS-E005", "Weight output_partition_size = " + num(out / tp) + " is not divisible by weight quantization block_n = " + num(bn) + ". (" + what + " at TP " + num(tp) + ")");
  };
  auto inShard = [&](const std::string& what, int64_t in, int64_t tp) {
    if (tp > 1 && in > 0 && (in / tp) % bk)
      sink.add("WS-E005", "Weight input_size_per_partition = " + num(in / tp) + " is not divisible by weight quantization block_k = " + num(bk) + ". (" + what + " at TP " + num(tp) + ")");
  };
  const auto& a = m.attention;
  // Attention (not MLA, whose projections differ by model): q, k, v column shards, o a row shard.
  if (!isMla(m) && a.numHeads > 0 && a.headDim > 0 && w.attnTp > 1 && a.numHeads % w.attnTp == 0) {
    outShard("q_proj", a.numHeads * a.headDim, w.attnTp);
    // k and v: their share of the KV heads, or one replicated head when TP exceeds them.
    if (a.numKvHeads > 0 && (a.numKvHeads >= w.attnTp ? a.numKvHeads % w.attnTp == 0 : w.attnTp % a.numKvHeads == 0)) {
      const int64_t perRank = std::max<int64_t>(1, a.numKvHeads / w.attnTp) * a.headDim;
      if (perRank % bn)
        sink.add("WS-E005", "Weight output_partition_size = " + num(perRank) + " is not divisible by weight quantization block_n = " + num(bn) + ". (k_proj / v_proj at TP " +
                                num(w.attnTp) + ")");
    }
    inShard("o_proj", a.numHeads * a.vHeadDim, w.attnTp);
  }
  if (!m.denseLayers.empty() && m.intermediateSize > 0 && w.denseTp > 1 && m.intermediateSize % w.denseTp == 0) {
    outShard("the dense MLP's gate_up_proj", m.intermediateSize, w.denseTp);
    inShard("the dense MLP's down_proj", m.intermediateSize, w.denseTp);
  }
  // The experts: vLLM checks each rank's intermediate against block_n always and against block_k
  // under attention TP > 1 (Fp8MoEMethod.create_weights); SGLang's start-up check
  // (check_quantized_moe_compatibility) and its FP8 MoE method the same against the MoE TP.
  const int64_t I = m.expertIntermediateSize;
  if (m.numExperts <= 0 || I <= 0 || I % w.moeTp) return;
  const int64_t ipp = I / w.moeTp;
  if (ipp % bn)
    sink.add("WS-E005", engine == "vllm" ? "The output_size of gate's and up's weight = " + num(ipp) + " is not divisible by weight quantization block_n = " + num(bn) + ". (experts split " +
                                               num(w.moeTp) + " ways; with --ep they stay whole)"
                                         : "For quantized MoE models, please make sure (moe_intermediate_size=" + num(I) + " / moe_tp_size=" + num(w.moeTp) +
                                               ") % weight_block_size_n=" + num(bn) + " == 0 (check_quantized_moe_compatibility; raise --ep)");
  else if ((engine == "vllm" ? w.attnTp : w.moeTp) > 1 && ipp % bk)
    sink.add("WS-E005", "The input_size of down's weight = " + num(ipp) + " is not divisible by weight quantization block_k = " + num(bk) + ".");
}

// GPTQ and AWQ under TP (vLLM): the row-parallel shards (o_proj, the dense down_proj) must hold
// whole groups; Marlin's minimum tile sizes decide whether the fast kernel takes a shard.
void groupRules(const std::string& engine, const ModelDescription& m, const Widths& w, const std::vector<std::string>& paths, Sink& sink) {
  if (engine != "vllm") return;
  const int64_t g = m.quant.groupSize;
  auto has = [&](const char* p) { return std::find(paths.begin(), paths.end(), p) != paths.end(); };
  const bool gptq = has("gptq") || has("gptq-marlin"), awq = has("awq") || has("awq-marlin");
  if (!gptq && !awq) return;
  struct Shard {
    std::string what;
    int64_t in, out;
  };
  std::vector<Shard> shards;
  const auto& a = m.attention;
  if (w.attnTp > 1 && a.numHeads > 0 && a.vHeadDim > 0 && !isMla(m)) shards.push_back({"o_proj", a.numHeads * a.vHeadDim / w.attnTp, m.hiddenSize});
  if (w.denseTp > 1 && !m.denseLayers.empty() && m.intermediateSize > 0 && m.intermediateSize % w.denseTp == 0) {
    shards.push_back({"the dense MLP's down_proj", m.intermediateSize / w.denseTp, m.hiddenSize});
    shards.push_back({"the dense MLP's gate_proj / up_proj", m.hiddenSize, m.intermediateSize / w.denseTp});
  }
  for (const auto& s : shards) {
    // The plain kernels' own checks (GPTQLinearMethod / AWQLinearMethod.create_weights).
    const int64_t packOut = gptq ? 32 : 8;
    if (g > 0 && s.in % g) {
      sink.add("WS-E006", "The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size. (" + s.what + ": " + num(s.in) +
                              " input features a rank, group size " + num(g) + ")");
      continue;
    }
    if (s.out > 0 && s.out % packOut) {
      sink.add("WS-E006", "The output size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size. (" + s.what + ": " + num(s.out) +
                              " output features a rank)");
      continue;
    }
    // Marlin: out % 64, in % 128 (verify_marlin_supports_shape). AWQ falls back to its own kernels
    // with a warning; GPTQ-Marlin tries the other WNA16 kernels (Machete on SM 9.0, AllSpark on
    // SM 8.x), whose acceptance of this shard is not settled here.
    if ((has("awq-marlin") || has("gptq-marlin")) && (s.out % 64 || s.in % 128))
      sink.add("WS-E008", s.what + " shard of " + num(s.out) + " x " + num(s.in) + " is below Marlin's tile (output a multiple of 64, input of 128): " +
                              (awq ? "'Falling back to unoptimized AWQ kernels.'" : "another WNA16 kernel must take it (choose_mp_linear_kernel); whether one does: unknown"));
  }
  // Experts: the Marlin MoE kernel needs hidden % 128 and the rank's intermediate % max(64, group);
  // else vLLM falls back to the MoeWNA16 Triton kernel with a warning. Plain GPTQ experts go to
  // MoeWNA16 without trying Marlin (gptq.py get_quant_method), so no fallback to report.
  const int64_t I = m.expertIntermediateSize;
  if ((awq || has("gptq-marlin")) && m.numExperts > 0 && I > 0 && I % w.moeTp == 0) {
    const int64_t ipp = I / w.moeTp;
    if ((m.hiddenSize > 0 && m.hiddenSize % 128) || ipp % std::max<int64_t>(64, g))
      sink.add("WS-E008", "experts of intermediate " + num(ipp) + " a rank and hidden " + num(m.hiddenSize) + " do not fit the Marlin MoE kernel: 'Falling back to Moe WNA16 kernels.'");
  }
}

}  // namespace

std::vector<int64_t> fp8BlockOf(const ModelDescription& m) {
  std::vector<int64_t> b = m.quant.blockSize;
  for (const auto& g : m.quant.groups)
    if (b.empty() && g.strategy == "block") b = g.blockStructure;
  if (b.size() != 2 || b[0] <= 0 || b[1] <= 0) return {};
  return b;
}

void layoutRules(const std::string& engine, const ModelDescription& m, const EngineLayout& l, const std::vector<std::string>& quantPaths, Sink& sink) {
  const Widths w = widthsOf(engine, l);
  tpSplitRules(engine, m, w, sink);
  moeSplitRules(engine, m, l, w, sink);
  blockRules(engine, m, w, sink);
  groupRules(engine, m, w, quantPaths, sink);
}

}  // namespace ws::val::engines
