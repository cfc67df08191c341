#include "core/model/gguf_conversion.h"

#include <array>

namespace ws {

namespace {

// llama.cpp as vendored by llama-cpp-python 0.3.36 (conversion/*.py).
constexpr std::array kConversions = {
    GgufConversion{"llama", "llama", true, false, "ffn_norm", "llama.py LlamaModel.modify_tensors: permute(q_proj, n_head), permute(k_proj, n_kv_head)"},
    GgufConversion{"mistral", "llama", true, false, "ffn_norm", "llama.py: MistralForCausalLM registered with LlamaModel"},
    GgufConversion{"mixtral", "llama", true, false, "ffn_norm", "llama.py: MixtralForCausalLM registered with LlamaModel"},
    GgufConversion{"deepseek_v2", "deepseek2", false, true, "ffn_norm", "deepseek.py DeepseekV2Model.modify_tensors: kv_b_proj -> k_b_proj (transposed), v_b_proj"},
    GgufConversion{"deepseek_v3", "deepseek2", false, true, "ffn_norm", "deepseek.py: DeepseekV3ForCausalLM registered with DeepseekV2Model"},
    GgufConversion{"kimi_k2", "deepseek2", false, true, "ffn_norm", "deepseek.py: Kimi-K2 converts as DeepseekV2Model"},
    GgufConversion{"glm4_moe", "glm4moe", false, false, "post_attention_norm", "glm.py Glm4MoeModel; gguf-py MODEL_TENSOR.ATTN_POST_NORM for GLM4_MOE"},
    GgufConversion{"gpt_oss", "gpt-oss", false, false, "post_attention_norm", "gpt_oss.py GptOssModel; gguf-py MODEL_TENSOR.ATTN_POST_NORM for GPT_OSS"},
};

constexpr GgufConversion kNone{};

}  // namespace

const GgufConversion& ggufConversionFor(std::string_view format, std::string_view architecture) {
  for (const GgufConversion& c : kConversions)
    if ((format == "gguf" ? c.ggufArch : c.hfModelType) == architecture) return c;
  return kNone;
}

}  // namespace ws
