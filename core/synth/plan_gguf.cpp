// Tensor plans with llama.cpp GGUF names, quantized as Q4_K where rows allow it.
#include "core/synth/plan.h"

namespace ws::synth {

namespace {

class GgufPlanner {
 public:
  explicit GgufPlanner(const Family& f) : f_(f) {}

  Plan build() {
    uint64_t H = u(f_.hidden), V = u(f_.vocab);
    matrix("token_embd.weight", V, H);
    for (int64_t l = 0; l < f_.layers + f_.mtp; ++l) layer(l);
    vec("output_norm.weight", H);
    matrix("output.weight", V, H);
    plan_.config = kv();
    return std::move(plan_);
  }

 private:
  static uint64_t u(int64_t v) { return uint64_t(v); }

  void add(std::string name, const char* dtype, std::vector<uint64_t> shape, Fill fill) {
    plan_.tensors.push_back(PlannedTensor{std::move(name), dtypeByName(dtype), std::move(shape), fill, {}});
  }
  void vec(std::string name, uint64_t n) { add(std::move(name), "F32", {n}, Fill::Ones); }

  // The row length (the last PyTorch dim, ggml ne[0]) decides what block type fits.
  const char* typeFor(uint64_t rowLength) const {
    if (rowLength % 256 == 0) return "Q4_K";
    if (rowLength % 32 == 0) return "Q8_0";
    return "F16";
  }
  void matrix(std::string name, uint64_t out, uint64_t in) {
    const char* t = typeFor(in);
    add(std::move(name), t, {out, in}, std::string_view(t) == "F16" ? Fill::Values : Fill::GgufBlocks);
  }
  void stacked(std::string name, uint64_t e, uint64_t out, uint64_t in) {
    const char* t = typeFor(in);
    add(std::move(name), t, {e, out, in}, std::string_view(t) == "F16" ? Fill::Values : Fill::GgufBlocks);
  }

  void layer(int64_t n) {
    std::string b = "blk." + std::to_string(n) + ".";
    uint64_t H = u(f_.hidden), E = u(f_.experts), I = u(f_.expertIntermediate);
    vec(b + "attn_norm.weight", H);
    if (f_.mla) {
      uint64_t heads = u(f_.heads);
      matrix(b + "attn_q_a.weight", u(f_.qLora), H);
      vec(b + "attn_q_a_norm.weight", u(f_.qLora));
      matrix(b + "attn_q_b.weight", heads * u(f_.nope + f_.rope), u(f_.qLora));
      matrix(b + "attn_kv_a_mqa.weight", u(f_.kvLora + f_.rope), H);
      vec(b + "attn_kv_a_norm.weight", u(f_.kvLora));
      matrix(b + "attn_kv_b.weight", heads * u(f_.nope + f_.vHead), u(f_.kvLora));
      matrix(b + "attn_output.weight", H, heads * u(f_.vHead));
    } else {
      uint64_t q = u(f_.heads * f_.headDim), kv = u(f_.kvHeads * f_.headDim);
      matrix(b + "attn_q.weight", q, H);
      matrix(b + "attn_k.weight", kv, H);
      matrix(b + "attn_v.weight", kv, H);
      matrix(b + "attn_output.weight", H, q);
      if (f_.qkNorm) {
        vec(b + "attn_q_norm.weight", u(f_.headDim));
        vec(b + "attn_k_norm.weight", u(f_.headDim));
      }
    }
    vec(b + "ffn_norm.weight", H);
    if (n < f_.denseLayers) {
      uint64_t D = u(f_.denseIntermediate);
      matrix(b + "ffn_gate.weight", D, H);
      matrix(b + "ffn_up.weight", D, H);
      matrix(b + "ffn_down.weight", H, D);
    } else {
      add(b + "ffn_gate_inp.weight", "F32", {E, H}, Fill::Values);
      if (f_.moe == MoeStyle::DeepSeek) add(b + "exp_probs_b.bias", "F32", {E}, Fill::Values);
      stacked(b + "ffn_gate_exps.weight", E, I, H);
      stacked(b + "ffn_up_exps.weight", E, I, H);
      stacked(b + "ffn_down_exps.weight", E, H, I);
      if (f_.shared > 0) {
        uint64_t S = I * u(f_.shared);
        matrix(b + "ffn_gate_shexp.weight", S, H);
        matrix(b + "ffn_up_shexp.weight", S, H);
        matrix(b + "ffn_down_shexp.weight", H, S);
      }
    }
    if (n >= f_.layers) {  // llama.cpp keeps DeepSeek/GLM MTP pieces under blk.N.nextn.
      matrix(b + "nextn.eh_proj.weight", H, 2 * H);
      vec(b + "nextn.enorm.weight", H);
      vec(b + "nextn.hnorm.weight", H);
      vec(b + "nextn.shared_head_norm.weight", H);
    }
  }

  nlohmann::json kv() const {
    const std::string& a = f_.ggufArch;
    nlohmann::json j = {
        {"general.architecture", a},
        {"general.name", "weightscope-synth-" + f_.like},
        {a + ".block_count", f_.layers + f_.mtp},
        {a + ".embedding_length", f_.hidden},
        {a + ".feed_forward_length", f_.denseIntermediate},
        {a + ".attention.head_count", f_.heads},
        {a + ".attention.head_count_kv", f_.kvHeads},
        {a + ".expert_count", f_.experts},
        {a + ".expert_used_count", f_.topk},
        {a + ".expert_feed_forward_length", f_.expertIntermediate},
        {a + ".vocab_size", f_.vocab},
    };
    if (f_.shared > 0) j[a + ".expert_shared_count"] = f_.shared;
    if (f_.denseLayers > 0) j[a + ".leading_dense_block_count"] = f_.denseLayers;
    if (f_.mtp > 0) j[a + ".nextn_predict_layers"] = f_.mtp;
    return j;
  }

  const Family& f_;
  Plan plan_;
};

}  // namespace

Plan planGguf(const Family& f) { return GgufPlanner(f).build(); }

}  // namespace ws::synth
