#include "core/validate/engines/quant_params.h"

#include <string>

namespace ws::val {

namespace {

using std::string_view;

// A method's answer for one name: registered, not, or unknown.
enum class Has { Yes, No, Unknown };

// An activation scheme's input scale: static stores one, dynamic computes it (vLLM registers None,
// no parameter), unsaid is not settled by the config.
Has staticInput(const std::string& activations) { return activations == "static" ? Has::Yes : activations == "dynamic" ? Has::No : Has::Unknown; }

// fp8 (quantization/fp8.py): Fp8LinearMethod.create_weights :309 weight_scale, :320 weight_scale_inv
// with weight_block_size, :327 input_scale when static (:329 None when dynamic); Fp8MoEMethod the
// same names under w13_ / w2_ (:550-551, :572-573, :599-605, :621-622).
Has fp8(const QuantConfig& q, string_view n) {
  if (n == "weight_scale_inv") return q.blockSize.empty() ? Has::No : Has::Yes;
  if (n == "weight_scale") return q.blockSize.empty() ? Has::Yes : Has::No;
  if (n == "input_scale") return staticInput(q.activations);
  return Has::No;
}

// One compressed-tensors config group's scheme (compressed_tensors.py _get_scheme_from_parts
// :446-537), linear or MoE (compressed_tensors_moe.py get_moe_method :77-149).
Has compressedGroup(const QuantGroup& g, string_view n, bool moe) {
  const bool weightsOnly = g.activations.empty();
  if (g.type == "int" && (g.bits == 4 || g.bits == 8) && weightsOnly) {
    // WNA16 (schemes/compressed_tensors_wNa16.py :171-186): weight_packed, weight_scale,
    // weight_shape; weight_zero_point unless symmetric; weight_g_idx with actorder "group", which
    // is not read here. The Marlin MoE method (:1276-1374) registers the g_idx and its sort
    // indices whatever the act order.
    if (n == "weight_packed" || n == "weight_scale" || n == "weight_shape") return Has::Yes;
    if (n == "weight_zero_point") return g.symmetric ? Has::No : Has::Yes;
    if (n == "weight_g_idx" || n == "g_idx_sort_indices") return moe ? Has::Yes : Has::Unknown;
    return Has::No;
  }
  if (g.type == "float" && g.bits == 8) {
    // W8A8 FP8 (schemes/compressed_tensors_w8a8_fp8.py :83-95) and weight-only W8A16 FP8
    // (_w8a16_fp8.py :82-108): weight, weight_scale (never _inv, whatever the strategy),
    // input_scale when static. No MoE method takes weight-only FP8 ("Unsupported FusedMoe scheme").
    if (moe && weightsOnly) return Has::Unknown;
    if (n == "weight" || n == "weight_scale") return Has::Yes;
    if (n == "input_scale") return staticInput(g.activations);
    return Has::No;
  }
  if (g.type == "float" && g.bits == 4) {
    // NVFP4: W4A4 (schemes/compressed_tensors_w4a4_nvfp4.py :75-98; MoE W4A4MoeMethod :180-251)
    // weight_packed, weight_global_scale, weight_scale, input_global_scale; W4A16 (_w4a16_nvfp4.py
    // :48-73) input_global_scale only on a GPU without CUTLASS FP4, and no MoE method.
    if (moe && weightsOnly) return Has::Unknown;
    if (n == "weight_packed" || n == "weight_global_scale" || n == "weight_scale") return Has::Yes;
    if (n == "input_global_scale") return weightsOnly ? Has::Unknown : Has::Yes;
    return Has::No;
  }
  return Has::Unknown;  // W8A8 int8, W4A8, 2:4 sparse: not tabled here
}

// compressed-tensors: registered if any group's scheme registers it (`scheme` answering for one
// group: vLLM's or SGLang's), not if none does and every group's scheme is known.
Has compressed(const QuantConfig& q, string_view n, bool moe, Has (*scheme)(const QuantGroup&, string_view, bool)) {
  if (q.groups.empty()) return Has::Unknown;
  bool unknown = false;
  for (const QuantGroup& g : q.groups) {
    const Has h = scheme(g, n, moe);
    if (h == Has::Yes) return Has::Yes;
    unknown = unknown || h == Has::Unknown;
  }
  return unknown ? Has::Unknown : Has::No;
}

// gptq / gptq_marlin (gptq.py :300-303, gptq_marlin.py :402-405): qweight, g_idx, qzeros, scales
// whatever desc_act; MoE (gptq_marlin.py :484-585, moe_wna16.py :226-286) the same under w13_ /
// w2_, with Marlin's g_idx_sort_indices. awq / awq_marlin (awq.py :194-196, awq_marlin.py
// :256-258; MoE :361-413): qweight, qzeros, scales.
Has gptq(string_view n, bool moe) {
  if (n == "qweight" || n == "g_idx" || n == "qzeros" || n == "scales") return Has::Yes;
  return moe && n == "g_idx_sort_indices" ? Has::Yes : Has::No;
}
Has awq(string_view n) { return n == "qweight" || n == "qzeros" || n == "scales" ? Has::Yes : Has::No; }

// modelopt (modelopt.py): FP8 weight_scale and input_scale (:255-262; MoE :394-411), NVFP4
// input_scale, weight_scale_2 and weight_scale (:908-926; MoE :1143-1194).
Has modelopt(const QuantConfig& q, string_view n) {
  if (q.algo == "FP8") return n == "weight_scale" || n == "input_scale" ? Has::Yes : Has::No;
  if (q.algo == "NVFP4") return n == "input_scale" || n == "weight_scale_2" || n == "weight_scale" ? Has::Yes : Has::No;
  return Has::Unknown;
}

// ---- SGLang 0.5.23 (Q/ = sglang/srt/layers/quantization/), on CUDA with the default MoE backend.

// fp8 (Q/fp8.py): create_fp8_weight_ :667-714 - weight_scale_inv with weight_block_size, weight_scale
// without, input_scale when static (registered as None when dynamic); create_fp8_moe_weight_
// :1720-1824 the same under w13_ / w2_ (w13_/w2_weight_bias only for a model passing with_bias).
// The names are vLLM's.
Has sglangFp8(const QuantConfig& q, string_view n, bool moe) { return moe && n == "weight_bias" ? Has::Unknown : fp8(q, n); }

// One compressed-tensors group's scheme (compressed_tensors.py _get_scheme_from_parts :721-862,
// get_moe_scheme :864-1005). WNA16 (schemes/compressed_tensors_wNa16.py :191-206; MoE, Marlin or
// Triton, compressed_tensors_wNa16_moe.py :124-264) and FP8 (compressed_tensors_w8a8_fp8.py
// :104-145, _w8a16_fp8.py :91-120; MoE _w8a8_fp8_moe.py :144-237, no weight-only MoE scheme)
// register vLLM's names - block FP8 too keeps weight_scale, never _inv. They differ in:
Has sglangCompressedGroup(const QuantGroup& g, string_view n, bool moe) {
  const bool weightsOnly = g.activations.empty();
  if (g.type == "float" && g.bits == 4 && g.groupSize == 16) {
    // NVFP4: W4A4 and, below SM 10.0, W4A16 with has_input_global_scale (w4a4_nvfp4.py :65-92,
    // w4a16_nvfp4.py :167-192; MoE w4a4_nvfp4_moe.py :82-163, w4a16_nvfp4_moe.py :86-156):
    // weight_packed, weight_global_scale, weight_scale, and input_global_scale for a W4A4
    // checkpoint only.
    if (n == "weight_packed" || n == "weight_global_scale" || n == "weight_scale") return Has::Yes;
    if (n == "input_global_scale") return weightsOnly ? Has::No : Has::Yes;
    return Has::No;
  }
  if (g.type == "float" && g.bits == 4) return Has::Unknown;  // MXFP4 (Mxfp4MoEMethod): not tabled here
  if (g.type == "int" && g.bits == 8 && !weightsOnly && !moe) {
    // W8A8 int8 (schemes/compressed_tensors_w8a8_int8.py :63-94): weight, weight_scale, input_scale
    // when static; input_zero_point with an asymmetric static input, which is not read here.
    if (n == "weight" || n == "weight_scale") return Has::Yes;
    if (n == "input_scale") return staticInput(g.activations);
    if (n == "input_zero_point") return g.activations == "dynamic" ? Has::No : Has::Unknown;
    return Has::No;
  }
  return compressedGroup(g, n, moe);  // WNA16 and FP8 as above; W4A8, int8 MoE (NPU only), 2:4 unknown
}

// gptq on CUDA is gptq_marlin or unknown (Q/__init__.py:107-137): qweight, g_idx, scales, qzeros
// whatever desc_act (Q/gptq/schemes/gptq_marlin.py :147-150; MoE gptq_moe.py :219-320 with
// g_idx_sort_indices) - vLLM's list. awq / awq_marlin: qweight, qzeros, scales
// (Q/awq/schemes/awq_linear.py :91-93, awq_marlin.py :95-97); a MoE is AWQMoEScheme's the same
// (awq_moe.py :65-123), or MoeWNA16's with qzeros only under zero_point (moe_wna16.py :301-364)
// where the layer misses Marlin - and plain awq leaves MoE unquantized (Q/awq/awq.py :155-160).
Has sglangAwq(const QuantConfig& q, string_view n, bool moe) {
  if (n == "qweight" || n == "scales") return Has::Yes;
  if (n == "qzeros") return moe && q.symmetric ? Has::Unknown : Has::Yes;
  return Has::No;
}

// modelopt (Q/modelopt_quant.py): FP8 weight_scale and input_scale (:600-609; MoE :1155-1192);
// NVFP4 input_scale, weight_scale_2, weight_scale, and pre_quant_scale for NVFP4_AWQ on linear
// layers only (:1844-1884; MoE :2520-2648); W4A16_NVFP4's placeholder input_scale (:2238-2267).
Has sglangModelopt(const QuantConfig& q, string_view n, bool moe) {
  if (q.algo == "FP8") return n == "weight_scale" || n == "input_scale" ? Has::Yes : Has::No;
  if (q.algo == "NVFP4" || q.algo == "NVFP4_AWQ" || q.algo == "W4A16_NVFP4") {
    if (n == "weight_scale" || n == "weight_scale_2" || n == "input_scale") return Has::Yes;
    if (n == "pre_quant_scale") return q.algo == "NVFP4_AWQ" && !moe ? Has::Yes : Has::No;
    return Has::No;
  }
  return Has::Unknown;
}

// The KV cache's scales sit on the attention layer and are remapped or skipped by each model's
// loader: not these tables'.
bool kvCacheScale(string_view leaf) { return leaf == "k_scale" || leaf == "v_scale" || leaf == "q_scale" || leaf == "prob_scale" || leaf == "kv_scale"; }

}  // namespace

std::optional<bool> sglangRegistersQuantParam(const QuantConfig& q, std::string_view leaf) {
  if (kvCacheScale(leaf)) return std::nullopt;
  const bool moe = leaf.starts_with("w13_") || leaf.starts_with("w2_");
  const string_view n = moe ? leaf.substr(leaf.find('_') + 1) : leaf;
  Has h = Has::Unknown;
  if (q.method == "fp8") h = sglangFp8(q, n, moe);
  else if (q.method == "compressed-tensors") h = compressed(q, n, moe, sglangCompressedGroup);
  else if (q.method == "gptq") h = gptq(n, moe);
  else if (q.method == "awq") h = sglangAwq(q, n, moe);
  else if (q.method == "modelopt") h = sglangModelopt(q, n, moe);
  if (h == Has::Unknown) return std::nullopt;
  return h == Has::Yes;
}

std::optional<bool> vllmRegistersQuantParam(const QuantConfig& q, std::string_view leaf) {
  if (kvCacheScale(leaf)) return std::nullopt;  // quantization/kv_cache.py's, on the attention layer
  const bool moe = leaf.starts_with("w13_") || leaf.starts_with("w2_");
  const string_view n = moe ? leaf.substr(leaf.find('_') + 1) : leaf;
  Has h = Has::Unknown;
  if (q.method == "fp8") h = fp8(q, n);
  else if (q.method == "compressed-tensors") h = compressed(q, n, moe, compressedGroup);
  else if (q.method == "gptq") h = gptq(n, moe);
  else if (q.method == "awq") h = awq(n);
  else if (q.method == "modelopt") h = modelopt(q, n);
  if (h == Has::Unknown) return std::nullopt;
  return h == Has::Yes;
}

}  // namespace ws::val
