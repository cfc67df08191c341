// Tensor plans with Hugging Face names (and KTransformers NUMA names for kt-int8).
#include <stdexcept>

#include "core/synth/plan.h"
#include "core/util/checked.h"

namespace ws::synth {

namespace {

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

const DType* dt(const char* name) { return dtypeByName(name); }

class HfPlanner {
 public:
  HfPlanner(const Family& f, Scheme scheme, int64_t numa) : f_(f), scheme_(scheme), numa_(numa) {}

  Plan build() {
    const std::string& p = f_.prefix;
    add(p + "embed_tokens.weight", "BF16", {u(f_.vocab), u(f_.hidden)});
    for (int64_t l = 0; l < f_.layers + f_.mtp; ++l) layer(l);
    add(p + "norm.weight", "BF16", {u(f_.hidden)}, Fill::Ones);
    if (!f_.tiedEmbeddings) add("lm_head.weight", "BF16", {u(f_.vocab), u(f_.hidden)});
    if (f_.vision) visionTower();
    plan_.config = config();
    return std::move(plan_);
  }

 private:
  static uint64_t u(int64_t v) { return uint64_t(v); }

  void add(std::string name, const char* dtype, std::vector<uint64_t> shape, Fill fill = Fill::Values, std::vector<int64_t> ints = {}) {
    plan_.tensors.push_back(PlannedTensor{std::move(name), dt(dtype), std::move(shape), fill, std::move(ints)});
  }

  bool quantizes(bool routedExpert) const {
    if (scheme_ == Scheme::Fp8Block || scheme_ == Scheme::Nvfp4) return true;
    if (scheme_ == Scheme::Mxfp4 || scheme_ == Scheme::Int4Ct) return routedExpert;
    return false;
  }

  // One nn.Linear weight [out, in] named base + ".weight", in the checkpoint's scheme.
  void linear(const std::string& base, uint64_t out, uint64_t in, bool routedExpert = false) {
    if (!quantizes(routedExpert)) return add(base + ".weight", "BF16", {out, in});
    if (scheme_ == Scheme::Fp8Block) {
      add(base + ".weight", "F8_E4M3", {out, in}, Fill::Fp8Codes);
      add(base + ".weight_scale_inv", "F32", {ceilDiv(out, 128), ceilDiv(in, 128)}, Fill::PositiveF32);
    } else if (scheme_ == Scheme::Nvfp4) {  // ModelOpt: E2M1 pairs, E4M3 per 16, F32 global and input scales
      add(base + ".weight", "U8", {out, in / 2}, Fill::Fp4Codes);
      add(base + ".weight_scale", "F8_E4M3", {out, in / 16}, Fill::E4m3Scale);
      add(base + ".weight_scale_2", "F32", {}, Fill::PositiveF32);
      add(base + ".input_scale", "F32", {}, Fill::PositiveF32);
    } else if (scheme_ == Scheme::Mxfp4) {  // gpt-oss style blocks of 32 codes with one E8M0 scale
      add(base + "_blocks", "U8", {out, in / 32, 16}, Fill::Fp4Codes);
      add(base + "_scales", "U8", {out, in / 32}, Fill::E8m0Scale);
    } else if (scheme_ == Scheme::Int4Ct) {  // compressed-tensors pack-quantized, symmetric, group 32
      add(base + ".weight_packed", "I32", {out, ceilDiv(in, 8)}, Fill::IntCodes);
      add(base + ".weight_scale", "BF16", {out, ceilDiv(in, 32)}, Fill::Bf16Scale);
      add(base + ".weight_shape", "I64", {2}, Fill::ShapeInts, {int64_t(out), int64_t(in)});
    }
  }

  // A fused expert tensor holding every expert: [E, a, b] with (a, b) = (out, in) unless inOut.
  void fused(const std::string& base, uint64_t out, uint64_t in, bool inOut) {
    uint64_t E = u(f_.experts);
    if (!quantizes(true)) return add(base, "BF16", inOut ? std::vector<uint64_t>{E, in, out} : std::vector<uint64_t>{E, out, in});
    // Quantized fused tensors are stored out-rows first, as gpt-oss MXFP4 and transformers 5 FP8 do.
    if (scheme_ == Scheme::Fp8Block) {
      add(base, "F8_E4M3", {E, out, in}, Fill::Fp8Codes);
      add(base + "_scale_inv", "F32", {E, ceilDiv(out, 128), ceilDiv(in, 128)}, Fill::PositiveF32);
    } else if (scheme_ == Scheme::Nvfp4) {
      add(base + ".weight", "U8", {E, out, in / 2}, Fill::Fp4Codes);
      add(base + ".weight_scale", "F8_E4M3", {E, out, in / 16}, Fill::E4m3Scale);
      add(base + ".weight_scale_2", "F32", {}, Fill::PositiveF32);
      add(base + ".input_scale", "F32", {}, Fill::PositiveF32);
    } else if (scheme_ == Scheme::Mxfp4) {
      add(base + "_blocks", "U8", {E, out, in / 32, 16}, Fill::Fp4Codes);
      add(base + "_scales", "U8", {E, out, in / 32}, Fill::E8m0Scale);
    } else if (scheme_ == Scheme::Int4Ct) {
      add(base + ".weight_packed", "I32", {E, out, ceilDiv(in, 8)}, Fill::IntCodes);
      add(base + ".weight_scale", "BF16", {E, out, ceilDiv(in, 32)}, Fill::Bf16Scale);
      add(base + ".weight_shape", "I64", {3}, Fill::ShapeInts, {int64_t(E), int64_t(out), int64_t(in)});
    }
  }

  // KTransformers NUMA shards: each node holds a contiguous slice of the output rows (our reading
  // of formats.md 10.1, recorded in docs/formats-decisions.md), INT8 codes and F32 per-row scales.
  void ktExpert(int64_t layer, int64_t expert, const char* proj, uint64_t out, uint64_t in) {
    uint64_t rows = out / u(numa_);
    for (int64_t n = 0; n < numa_; ++n) {
      std::string base = "blk." + std::to_string(layer) + ".ffn_" + proj + "_exps." + std::to_string(expert) + ".numa." + std::to_string(n);
      add(base + ".weight", "I8", {rows, in}, Fill::IntCodes);
      add(base + ".scale", "F32", {rows}, Fill::PositiveF32);
    }
  }

  void attention(const std::string& a) {
    uint64_t H = u(f_.hidden);
    if (f_.mla) {
      uint64_t heads = u(f_.heads);
      linear(a + "q_a_proj", u(f_.qLora), H);
      add(a + "q_a_layernorm.weight", "BF16", {u(f_.qLora)}, Fill::Ones);
      linear(a + "q_b_proj", heads * u(f_.nope + f_.rope), u(f_.qLora));
      linear(a + "kv_a_proj_with_mqa", u(f_.kvLora + f_.rope), H);
      add(a + "kv_a_layernorm.weight", "BF16", {u(f_.kvLora)}, Fill::Ones);
      linear(a + "kv_b_proj", heads * u(f_.nope + f_.vHead), u(f_.kvLora));
      linear(a + "o_proj", H, heads * u(f_.vHead));
      return;
    }
    uint64_t q = u(f_.heads * f_.headDim), kv = u(f_.kvHeads * f_.headDim);
    linear(a + "q_proj", q, H);
    linear(a + "k_proj", kv, H);
    linear(a + "v_proj", kv, H);
    linear(a + "o_proj", H, q);
    if (f_.attnBias) {
      add(a + "q_proj.bias", "BF16", {q});
      add(a + "k_proj.bias", "BF16", {kv});
      add(a + "v_proj.bias", "BF16", {kv});
      if (f_.moe == MoeStyle::GptOss) add(a + "o_proj.bias", "BF16", {H});
    }
    if (f_.sinks) add(a + "sinks", "BF16", {u(f_.heads)});
    if (f_.qkNorm) {
      add(a + "q_norm.weight", "BF16", {u(f_.headDim)}, Fill::Ones);
      add(a + "k_norm.weight", "BF16", {u(f_.headDim)}, Fill::Ones);
    }
  }

  void mlp(const std::string& m, uint64_t inter, bool routed) {
    uint64_t H = u(f_.hidden);
    linear(m + "gate_proj", inter, H, routed);
    linear(m + "up_proj", inter, H, routed);
    linear(m + "down_proj", H, inter, routed);
  }

  void moe(int64_t layer, const std::string& l) {
    uint64_t H = u(f_.hidden), I = u(f_.expertIntermediate), E = u(f_.experts);
    bool kt = scheme_ == Scheme::KtInt8;
    auto routedPerExpert = [&](const std::string& expertsPrefix, const char* g, const char* up, const char* d) {
      for (uint64_t e = 0; e < E; ++e) {
        if (kt) {
          ktExpert(layer, int64_t(e), "gate", I, H);
          ktExpert(layer, int64_t(e), "up", I, H);
          ktExpert(layer, int64_t(e), "down", H, I);
          continue;
        }
        std::string b = expertsPrefix + std::to_string(e) + ".";
        linear(b + g, I, H, true);
        linear(b + up, I, H, true);
        linear(b + d, H, I, true);
      }
    };
    switch (f_.moe) {
      case MoeStyle::Qwen:
        add(l + "mlp.gate.weight", "BF16", {E, H});
        routedPerExpert(l + "mlp.experts.", "gate_proj", "up_proj", "down_proj");
        break;
      case MoeStyle::DeepSeek:
        add(l + "mlp.gate.weight", "BF16", {E, H});
        add(l + "mlp.gate.e_score_correction_bias", "F32", {E});
        routedPerExpert(l + "mlp.experts.", "gate_proj", "up_proj", "down_proj");
        if (f_.shared > 0) mlp(l + "mlp.shared_experts.", I * u(f_.shared), false);
        break;
      case MoeStyle::Mixtral:
        add(l + "block_sparse_moe.gate.weight", "BF16", {E, H});
        routedPerExpert(l + "block_sparse_moe.experts.", "w1", "w3", "w2");
        break;
      case MoeStyle::GptOss:
        add(l + "mlp.router.weight", "BF16", {E, H});
        add(l + "mlp.router.bias", "BF16", {E});
        if (kt) { routedPerExpert("", "", "", ""); break; }
        fused(l + "mlp.experts.gate_up_proj", 2 * I, H, /*inOut=*/true);  // gate and up rows interleaved
        add(l + "mlp.experts.gate_up_proj_bias", "BF16", {E, 2 * I});
        fused(l + "mlp.experts.down_proj", H, I, true);
        add(l + "mlp.experts.down_proj_bias", "BF16", {E, H});
        break;
      case MoeStyle::QwenVlFused:
        add(l + "mlp.gate.weight", "BF16", {E, H});
        if (kt) { routedPerExpert("", "", "", ""); break; }
        fused(l + "mlp.experts.gate_up_proj", 2 * I, H, false);  // transformers 5 layout [E, 2I, H]
        fused(l + "mlp.experts.down_proj", H, I, false);
        break;
    }
  }

  void layer(int64_t n) {
    std::string l = f_.prefix + "layers." + std::to_string(n) + ".";
    uint64_t H = u(f_.hidden);
    add(l + "input_layernorm.weight", "BF16", {H}, Fill::Ones);
    add(l + "post_attention_layernorm.weight", "BF16", {H}, Fill::Ones);
    attention(l + "self_attn.");
    bool dense = n < f_.denseLayers;
    if (dense) mlp(l + "mlp.", u(f_.denseIntermediate), false);
    else moe(n, l);
    if (n >= f_.layers) {  // DeepSeek / GLM multi-token-prediction layer
      add(l + "embed_tokens.weight", "BF16", {u(f_.vocab), H});
      add(l + "enorm.weight", "BF16", {H}, Fill::Ones);
      add(l + "hnorm.weight", "BF16", {H}, Fill::Ones);
      add(l + "eh_proj.weight", "BF16", {H, 2 * H});
      add(l + "shared_head.norm.weight", "BF16", {H}, Fill::Ones);
      add(l + "shared_head.head.weight", "BF16", {u(f_.vocab), H});
    }
  }

  void visionTower() {
    const std::string v = "model.visual.";
    add(v + "patch_embed.proj.weight", "BF16", {64, 3, 2, 16, 16});
    add(v + "patch_embed.proj.bias", "BF16", {64});
    add(v + "blocks.0.attn.qkv.weight", "BF16", {192, 64});
    add(v + "blocks.0.attn.qkv.bias", "BF16", {192});
    add(v + "blocks.0.attn.proj.weight", "BF16", {64, 64});
    add(v + "blocks.0.norm1.weight", "BF16", {64}, Fill::Ones);
    add(v + "merger.linear_fc1.weight", "BF16", {u(f_.hidden), 256});
    add(v + "merger.linear_fc2.weight", "BF16", {u(f_.hidden), u(f_.hidden)});
  }

  nlohmann::json config() const {
    nlohmann::json t = {
        {"model_type", f_.modelType},
        {"hidden_size", f_.hidden},
        {"num_hidden_layers", f_.layers},
        {"num_attention_heads", f_.heads},
        {"num_key_value_heads", f_.kvHeads},
        {"head_dim", f_.headDim},
        {"intermediate_size", f_.denseIntermediate},
        {"vocab_size", f_.vocab},
        {"num_experts_per_tok", f_.topk},
    };
    switch (f_.moe) {
      case MoeStyle::Qwen:
      case MoeStyle::QwenVlFused:
        t["num_experts"] = f_.experts;
        t["moe_intermediate_size"] = f_.expertIntermediate;
        t["decoder_sparse_step"] = 1;
        t["mlp_only_layers"] = nlohmann::json::array();
        for (int64_t i = 0; i < f_.denseLayers; ++i) t["mlp_only_layers"].push_back(i);
        break;
      case MoeStyle::DeepSeek:
        t["n_routed_experts"] = f_.experts;
        t["n_shared_experts"] = f_.shared;
        t["moe_intermediate_size"] = f_.expertIntermediate;
        t["first_k_dense_replace"] = f_.denseLayers;
        t["moe_layer_freq"] = 1;
        t["num_nextn_predict_layers"] = f_.mtp;
        if (f_.mla) {
          t["q_lora_rank"] = f_.qLora; t["kv_lora_rank"] = f_.kvLora; t["qk_nope_head_dim"] = f_.nope;
          t["qk_rope_head_dim"] = f_.rope; t["v_head_dim"] = f_.vHead;
        }
        break;
      case MoeStyle::Mixtral:
      case MoeStyle::GptOss:
        t["num_local_experts"] = f_.experts;
        t["intermediate_size"] = f_.expertIntermediate;  // these families size experts with it
        break;
    }
    nlohmann::json root;
    if (f_.moe == MoeStyle::QwenVlFused) {
      t["model_type"] = "qwen3_vl_moe_text";
      root = {{"model_type", f_.modelType}, {"text_config", t}, {"vision_config", {{"hidden_size", 64}, {"depth", 1}}}};
    } else {
      root = t;
    }
    root["architectures"] = {f_.architecture};
    root["transformers_version"] = "5.17.0";
    root["tie_word_embeddings"] = f_.tiedEmbeddings;
    if (scheme_ == Scheme::Fp8Block)
      root["quantization_config"] = {{"quant_method", "fp8"}, {"fmt", "e4m3"}, {"activation_scheme", "dynamic"}, {"weight_block_size", {128, 128}}};
    else if (scheme_ == Scheme::Nvfp4)
      root["quantization_config"] = {{"quant_method", "modelopt"}, {"quant_algo", "NVFP4"}, {"group_size", 16}};
    else if (scheme_ == Scheme::Mxfp4)
      root["quantization_config"] = {{"quant_method", "mxfp4"}};
    else if (scheme_ == Scheme::Int4Ct)
      root["quantization_config"] = {
          {"quant_method", "compressed-tensors"}, {"format", "pack-quantized"},
          {"config_groups", {{"group_0", {{"format", "pack-quantized"}, {"targets", {"Linear"}},
                                          {"weights", {{"num_bits", 4}, {"type", "int"}, {"symmetric", true}, {"strategy", "group"}, {"group_size", 32}}}}}}},
          {"ignore", {"lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|down)_proj.*"}}};
    return root;
  }

  const Family& f_;
  const Scheme scheme_;
  int64_t numa_;
  Plan plan_;
};

}  // namespace

uint64_t PlannedTensor::bytes() const {
  auto n = checkedProduct(shape);
  auto b = n ? dtype->bytesFor(*n) : std::nullopt;
  if (!b) throw std::invalid_argument("synthetic tensor '" + name + "' has an impossible size");
  return *b;
}

Plan planSafetensors(const Family& f, Scheme scheme, int64_t numaNodes) {
  return HfPlanner(f, scheme, numaNodes).build();
}

}  // namespace ws::synth
