#include "core/validate/engines/deepseek_shard_rules.h"

#include <string>

#include "core/validate/engines/layout_rules.h"

namespace ws::val::engines {

namespace {

// The first stored 2-D weight whose name ends with `suffix` (layer 0's, or the first layer that has
// one: DeepSeek's leading dense layers hold no shared experts).
const TensorRecord* firstWeight(const Checkpoint& c, const std::string& suffix) {
  for (const auto& t : c.tensors)
    if (t.shape.size() == 2 && t.name.ends_with(suffix)) return &t;
  return nullptr;
}

std::string num(int64_t v) { return std::to_string(v); }

}  // namespace

// vLLM 0.11.0 vllm/model_executor/models/deepseek_v2.py: DeepseekV2MLAAttention makes q_b_proj (or
// q_proj without a q LoRA) and kv_b_proj ColumnParallelLinear and o_proj RowParallelLinear over the
// TP group; DeepseekV2MoE's shared experts are a DeepseekV2MLP (MergedColumnParallelLinear gate_up,
// RowParallelLinear down) of n_shared_experts x moe_intermediate_size, split over TP unless
// ParallelConfig.use_sequence_parallel_moe (expert parallelism, TP > 1 and DP > 1 with the default
// VLLM_ALL2ALL_BACKEND allgather_reducescatter: then disable_tp). Every such linear layer runs
// fp8_utils.validate_fp8_block_shape: a column shard a whole number of block_n rows, a row shard a
// whole number of block_k columns.
void vllmDeepseekShardRules(const Checkpoint& c, const EngineLayout& l, Sink& sink) {
  bool deepseek = false;
  for (const auto& a : c.model.architectures) deepseek |= a == "DeepseekV2ForCausalLM" || a == "DeepseekV3ForCausalLM";
  const std::vector<int64_t> b = fp8BlockOf(c.model);
  if (!deepseek || b.empty() || l.tp <= 1) return;
  const int64_t bn = b[0], bk = b[1], tp = l.tp;
  auto column = [&](const std::string& what, const TensorRecord* t) {
    if (!t || int64_t(t->shape[0]) % tp) return;  // heads not dividing TP: WS-E003's refusal
    const int64_t part = int64_t(t->shape[0]) / tp;
    if (part % bn)
      sink.add("WS-E005", "Weight output_partition_size = " + num(part) + " is not divisible by weight quantization block_n = " + num(bn) + ". (" + what + " at TP " +
                              num(tp) + ")",
               t->name);
  };
  auto row = [&](const std::string& what, const TensorRecord* t) {
    if (!t || int64_t(t->shape[1]) % tp) return;
    const int64_t part = int64_t(t->shape[1]) / tp;
    if (part % bk)
      sink.add("WS-E005", "Weight input_size_per_partition = " + num(part) + " is not divisible by weight quantization block_k = " + num(bk) + ". (" + what + " at TP " +
                              num(tp) + ")",
               t->name);
  };
  const TensorRecord* qb = firstWeight(c, ".self_attn.q_b_proj.weight");
  column(qb ? "MLA q_b_proj" : "MLA q_proj", qb ? qb : firstWeight(c, ".self_attn.q_proj.weight"));
  column("MLA kv_b_proj", firstWeight(c, ".self_attn.kv_b_proj.weight"));
  row("MLA o_proj", firstWeight(c, ".self_attn.o_proj.weight"));
  const bool sequenceParallel = l.ep > 1 && l.dp > 1;  // and TP > 1, as above
  if (sequenceParallel) return;
  column("the shared experts' gate_up_proj", firstWeight(c, ".mlp.shared_experts.gate_proj.weight"));
  row("the shared experts' down_proj", firstWeight(c, ".mlp.shared_experts.down_proj.weight"));
}

}  // namespace ws::val::engines
