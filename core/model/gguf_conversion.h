// What llama.cpp's converter (convert_hf_to_gguf.py and its conversion/ package) does to a model's
// tensors on the way to GGUF, per architecture, as data: diff undoes it before comparing, and the
// name mapping follows it. Each row names the converter code it mirrors.
#pragma once

#include <string_view>

namespace ws {

struct GgufConversion {
  std::string_view hfModelType;       // config.json model_type
  std::string_view ggufArch;          // general.architecture the converter writes
  // Q and K rows reordered for ggml's RoPE (LlamaModel.permute: per head, the two rotary halves
  // interleaved): undone with the head counts of the attention config.
  bool permutesQK = false;
  // MLA: kv_b_proj written as attn_k_b (per head, transposed) and attn_v_b, not as one tensor.
  bool splitsKvB = false;
  // What post_attention_layernorm becomes: "ffn_norm" for most, "post_attention_norm" where the
  // architecture's GGUF tensor list calls it so.
  std::string_view postAttentionNorm = "ffn_norm";
  std::string_view source;            // the converter code this row mirrors
};

// The row for a checkpoint: by GGUF architecture for a GGUF, by model_type otherwise; a row with
// no transformation for architectures the table does not list.
const GgufConversion& ggufConversionFor(std::string_view format, std::string_view architecture);

}  // namespace ws
