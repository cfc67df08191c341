#include "core/synth/family.h"

#include <stdexcept>

namespace ws::synth {

namespace {

// Published dimensions come from each model's config.json (DeepSeek-V3, Kimi-K2-Instruct,
// Qwen3-235B-A22B, Mixtral-8x7B, gpt-oss-120b, Qwen3-VL-30B-A3B, GLM-4.5). Tiny presets keep the
// structure (dense layers, shared experts, MTP, fused layouts) at a few MiB, with 2I != H except
// where the real ambiguity is the point (Qwen3-VL-MoE, as in the fixture).
Family base(const std::string& like) {
  Family f;
  f.like = like;
  if (like == "qwen3-moe") {
    f.modelType = "qwen3_moe"; f.architecture = "Qwen3MoeForCausalLM"; f.ggufArch = "qwen3moe";
    f.moe = MoeStyle::Qwen; f.qkNorm = true;
  } else if (like == "deepseek-v3" || like == "kimi-k2") {
    f.modelType = like == "kimi-k2" ? "kimi_k2" : "deepseek_v3";
    f.architecture = "DeepseekV3ForCausalLM"; f.ggufArch = "deepseek2";
    f.moe = MoeStyle::DeepSeek; f.mla = true;
  } else if (like == "mixtral") {
    f.modelType = "mixtral"; f.architecture = "MixtralForCausalLM"; f.ggufArch = "llama";
    f.moe = MoeStyle::Mixtral;
  } else if (like == "gpt-oss") {
    f.modelType = "gpt_oss"; f.architecture = "GptOssForCausalLM"; f.ggufArch = "gpt-oss";
    f.moe = MoeStyle::GptOss; f.attnBias = true; f.sinks = true;
  } else if (like == "qwen3-vl-moe") {
    f.modelType = "qwen3_vl_moe"; f.architecture = "Qwen3VLMoeForConditionalGeneration"; f.ggufArch = "qwen3vlmoe";
    f.moe = MoeStyle::QwenVlFused; f.prefix = "model.language_model."; f.qkNorm = true; f.vision = true;
  } else if (like == "glm-4.5") {
    f.modelType = "glm4_moe"; f.architecture = "Glm4MoeForCausalLM"; f.ggufArch = "glm4moe";
    f.moe = MoeStyle::DeepSeek; f.attnBias = true;
  } else {
    throw std::invalid_argument("unknown --like '" + like + "'");
  }
  return f;
}

}  // namespace

Family presetFamily(const std::string& like, const std::string& size) {
  Family f = base(like);
  if (size == "tiny") {
    f.layers = 3; f.hidden = 256; f.heads = 4; f.kvHeads = 2; f.headDim = 64;
    f.denseIntermediate = 512; f.expertIntermediate = 128; f.experts = 8; f.topk = 2; f.vocab = 1024;
    if (f.moe == MoeStyle::DeepSeek) { f.experts = 16; f.shared = 1; f.denseLayers = 1; f.topk = 4; f.mtp = like == "kimi-k2" ? 0 : 1; }
    if (f.mla) { f.qLora = 96; f.kvLora = 64; f.nope = 32; f.rope = 32; f.vHead = 32; f.headDim = 64; f.kvHeads = 4; }
    if (f.moe == MoeStyle::Mixtral) { f.expertIntermediate = 320; f.layers = 2; }
    if (f.moe == MoeStyle::GptOss) { f.expertIntermediate = 192; f.layers = 2; }
    if (f.moe == MoeStyle::QwenVlFused) f.layers = 2;
    return f;
  }
  if (size != "full") throw std::invalid_argument("unknown --size '" + size + "' (tiny or full)");
  if (like == "deepseek-v3") {
    f.layers = 61; f.hidden = 7168; f.heads = 128; f.kvHeads = 128; f.denseIntermediate = 18432; f.expertIntermediate = 2048;
    f.experts = 256; f.shared = 1; f.topk = 8; f.denseLayers = 3; f.vocab = 129280; f.mtp = 1; f.shards = 163;
    f.qLora = 1536; f.kvLora = 512; f.nope = 128; f.rope = 64; f.vHead = 128; f.headDim = 192;
  } else if (like == "kimi-k2") {
    f.layers = 61; f.hidden = 7168; f.heads = 64; f.kvHeads = 64; f.denseIntermediate = 18432; f.expertIntermediate = 2048;
    f.experts = 384; f.shared = 1; f.topk = 8; f.denseLayers = 1; f.vocab = 163840; f.mtp = 0; f.shards = 61;
    f.qLora = 1536; f.kvLora = 512; f.nope = 128; f.rope = 64; f.vHead = 128; f.headDim = 192;
  } else if (like == "qwen3-moe") {
    f.layers = 94; f.hidden = 4096; f.heads = 64; f.kvHeads = 4; f.headDim = 128; f.denseIntermediate = 12288;
    f.expertIntermediate = 1536; f.experts = 128; f.topk = 8; f.vocab = 151936; f.shards = 118;
  } else if (like == "mixtral") {
    f.layers = 32; f.hidden = 4096; f.heads = 32; f.kvHeads = 8; f.headDim = 128; f.denseIntermediate = 14336;
    f.expertIntermediate = 14336; f.experts = 8; f.topk = 2; f.vocab = 32000; f.shards = 19;
  } else if (like == "gpt-oss") {
    f.layers = 36; f.hidden = 2880; f.heads = 64; f.kvHeads = 8; f.headDim = 64; f.denseIntermediate = 2880;
    f.expertIntermediate = 2880; f.experts = 128; f.topk = 4; f.vocab = 201088; f.shards = 15;
  } else if (like == "qwen3-vl-moe") {
    f.layers = 48; f.hidden = 2048; f.heads = 32; f.kvHeads = 4; f.headDim = 128; f.denseIntermediate = 6144;
    f.expertIntermediate = 768; f.experts = 128; f.topk = 8; f.vocab = 151936; f.shards = 13;
  } else if (like == "glm-4.5") {
    f.layers = 92; f.hidden = 5120; f.heads = 96; f.kvHeads = 8; f.headDim = 128; f.denseIntermediate = 12288;
    f.expertIntermediate = 1536; f.experts = 160; f.shared = 1; f.topk = 8; f.denseLayers = 3; f.vocab = 151552; f.mtp = 1;
    f.shards = 93;
  }
  return f;
}

}  // namespace ws::synth
