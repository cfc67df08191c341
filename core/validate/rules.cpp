#include "core/validate/rules.h"

#include <stdexcept>

namespace ws::val {

const char* severityName(Severity s) { return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "info"; }

const std::vector<RuleInfo>& rules() {
  using S = Severity;
  static const std::vector<RuleInfo> r = {
      // integrity: the readers' own checks (formats.md 1.2, 2.2) and the index
      {"WS-I001", "header-too-small", "integrity", S::Error, "safetensors file shorter than its 8-byte header length", "the file is truncated or not safetensors; re-download it"},
      {"WS-I002", "header-too-large", "integrity", S::Error, "safetensors header length over 100 MB", "the first 8 bytes are not a header length; the file is damaged or not safetensors"},
      {"WS-I003", "header-past-end", "integrity", S::Error, "safetensors header runs past the end of the file", "the file is truncated; re-download it"},
      {"WS-I004", "header-not-utf8", "integrity", S::Error, "safetensors header is not UTF-8", "the header bytes are damaged"},
      {"WS-I005", "header-invalid", "integrity", S::Error, "header is not the JSON the format requires", "rewrite the file with a safetensors writer"},
      {"WS-I006", "unknown-dtype", "integrity", S::Error, "a dtype or ggml type the format does not define", "the writer used a type this format (version) does not have"},
      {"WS-I007", "invalid-offsets", "integrity", S::Error, "tensor data offsets leave a gap, overlap or run backwards", "offsets must tile the data section from 0 without holes"},
      {"WS-I008", "size-overflow", "integrity", S::Error, "a shape product or byte size overflows 64 bits", "the header declares an impossible shape"},
      {"WS-I009", "misaligned-slice", "integrity", S::Error, "a sub-byte tensor does not fill whole bytes", "F4/F6 tensors need an element count that packs into whole bytes"},
      {"WS-I010", "byte-length-mismatch", "integrity", S::Error, "data length differs from elements x dtype size", "the shape, dtype or offsets in the header lie"},
      {"WS-I011", "data-size-mismatch", "integrity", S::Error, "the data section is truncated or has trailing bytes", "truncated: re-download; trailing bytes: the header does not describe all data"},
      {"WS-I012", "duplicate-tensor", "integrity", S::Error, "the same tensor name twice (in one file or in two shards)", "loaders keep one copy silently; remove the other"},
      {"WS-I013", "missing-shard", "integrity", S::Error, "the index (or a split set) names a file that is not there", "download the missing shard"},
      {"WS-I014", "index-tensor-absent", "integrity", S::Error, "weight_map names a tensor its shard does not hold", "regenerate model.safetensors.index.json"},
      {"WS-I015", "index-tensor-unlisted", "integrity", S::Error, "a shard holds a tensor weight_map does not name", "loaders that follow the index never read it; regenerate the index"},
      {"WS-I016", "index-tensor-misplaced", "integrity", S::Error, "weight_map points a tensor at the wrong shard", "regenerate model.safetensors.index.json"},
      {"WS-I017", "index-total-size", "integrity", S::Warning, "metadata.total_size disagrees with the tensors' bytes", "advisory field; regenerate the index to fix it"},
      {"WS-I018", "gguf-header", "integrity", S::Error, "GGUF magic or version is wrong", "not a GGUF v2/v3 file"},
      {"WS-I019", "gguf-truncated", "integrity", S::Error, "a GGUF length, count or tensor runs past the end of the file", "the file is truncated or its header lies"},
      {"WS-I020", "gguf-bad-value", "integrity", S::Error, "a GGUF KV value has the wrong type or an impossible size", "fix the writer"},
      {"WS-I021", "gguf-duplicate-key", "integrity", S::Error, "a GGUF key appears twice", "ggml refuses such files"},
      {"WS-I022", "gguf-tensor-info", "integrity", S::Error, "a GGUF tensor info has bad dims, offset or alignment", "ggml refuses such files"},
      {"WS-I023", "gguf-split", "integrity", S::Error, "a GGUF split set disagrees with itself", "re-run gguf-split"},
      {"WS-I024", "unreadable-file", "integrity", S::Error, "a file of the checkpoint cannot be read", "check permissions and the file system"},
      {"WS-I025", "config-invalid", "integrity", S::Error, "config.json is not valid JSON", "fix or regenerate config.json"},
      {"WS-I026", "prepartitioned-ranks", "integrity", S::Error, "the ranks of a pre-partitioned checkpoint disagree: a rank missing, or a tensor absent, extra, or of another dtype or shape than rank 0's", "every rank loads its own files: re-save the checkpoint from one run"},
      // completeness against the model description
      {"WS-C001", "missing-experts", "completeness", S::Error, "a MoE layer lacks some or all of its routed experts", "the checkpoint is incomplete; every layer needs num_experts experts"},
      {"WS-C002", "missing-projection", "completeness", S::Error, "an expert or MLP lacks one of its projections", "gate, up and down (or gate_up and down) must all be present"},
      {"WS-C003", "missing-scales", "completeness", S::Error, "a quantized weight has no scale tensor", "without its scales the weight cannot be dequantized"},
      {"WS-C004", "extra-experts", "completeness", S::Error, "an expert index at or past the configured expert count", "config.json and the checkpoint disagree on the expert count"},
      {"WS-C005", "layer-pattern", "completeness", S::Error, "dense and MoE layers disagree with config.json", "check first_k_dense_replace / mlp_only_layers / decoder_sparse_step"},
      {"WS-C006", "mtp-layers", "completeness", S::Info, "MTP layers present or absent against the config", "transformers drops MTP layers on save; runtimes that use them need the original weights"},
      {"WS-C007", "mixed-expert-layouts", "completeness", S::Error, "a layer holds both fused and per-expert expert tensors", "a loader picks one layout and ignores the other"},
      {"WS-C008", "missing-router", "completeness", S::Error, "a MoE layer has no router weight", "the layer cannot route tokens"},
      {"WS-C009", "missing-layer", "completeness", S::Error, "a layer the config declares holds no tensor at all", "the checkpoint is incomplete; the names it should hold are previewed"},
      {"WS-C010", "zero-storage-placeholder", "completeness", S::Error, "an expert weight with no elements (an empty(0) placeholder) where the expert should be", "the model was saved after KTransformers cleared its expert weights; save the original experts"},
      {"WS-C011", "missing-activation-scales", "completeness", S::Error, "the quantization config declares static activation scales, and a quantized weight has no input scale", "re-run the calibration: vLLM (fp8.py Fp8LinearMethod.create_weights at 0071b24) fills a static input_scale with -3.4e38 until the checkpoint's loads, so a missing one stays there"},
      {"WS-C012", "undeclared-activation-scales", "completeness", S::Warning, "input scales stored where the quantization config declares dynamic activation scales", "vLLM registers no input_scale parameter for a dynamic scheme (fp8.py at 0071b24): these are not used as scales; the config or the export is wrong"},
      {"WS-C013", "missing-kv-scales", "completeness", S::Warning, "the quantization config declares a quantized KV cache, and an attention layer has no k_scale and v_scale", "with an FP8 KV cache vLLM then uses 1.0 (kv_cache.py BaseKVCacheMethod.process_weights_after_loading at 0531c22: 'Using KV cache scaling factor 1.0 for fp8_e4m3'): calibrate the KV cache"},
      // shapes
      {"WS-M001", "vocab-embedding-mismatch", "metadata", S::Error, "the tokenizer's vocabulary does not fit the embedding (or lm_head) rows", "GGUF: llama.cpp needs as many tokens as token_embd rows; HF: a token id past the table reads out of bounds - resize the embeddings or fix the tokenizer"},
      {"WS-M002", "special-token-out-of-range", "metadata", S::Error, "a special token id (bos, eos, pad ...) past the vocabulary or the embedding rows", "the id was written for another tokenizer; fix config.json / generation_config.json or the GGUF key"},
      {"WS-M003", "missing-chat-template", "metadata", S::Info, "a chat or instruct model whose tokenizer has no chat template", "serving engines then need --chat-template; ship the template with the model"},
      {"WS-M004", "metadata-not-utf8", "metadata", S::Warning, "a metadata string that is not valid UTF-8", "gguf-py refuses to read such a file; llama.cpp passes the bytes on"},
      {"WS-M005", "model-keys", "metadata", S::Error, "a key the model is built from contradicts the tensors: a tensor past block_count, an expert count or experts-per-token that no router can use", "llama.cpp refuses such a file (or never loads the tensors past block_count); fix the key the message names"},
      {"WS-M006", "missing-model-keys", "metadata", S::Warning, "a GGUF model file without context_length, embedding_length or block_count", "llama.cpp refuses to build the model without them; gguf-py and other readers take the file"},
      {"WS-M007", "special-tokens-disagree", "metadata", S::Warning, "two files of the checkpoint give a special token (bos, eos) ids with none in common", "the engines stop at different tokens: llama.cpp on the GGUF's, vLLM on the tokenizer's and generation_config's, transformers on generation_config's (vllm PR #30434: Gemma never stopped); make the files agree"},
      {"WS-M008", "chat-template-disagrees", "metadata", S::Warning, "a GGUF's chat template (tokenizer.chat_template[.NAME]) absent from, or not equal to, the one its HF files beside it give", "llama.cpp applies the GGUF's, an engine serving it with the HF tokenizer the HF files': prompts differ between them; convert again from the files the HF tokenizer reads"},

      {"WS-A001", "lora-unpaired", "adapter", S::Error, "a LoRA factor (lora_A or lora_B) without its partner", "the adapter was saved partly: save it again"},
      {"WS-A002", "lora-rank", "adapter", S::Error, "a LoRA module's lora_A and lora_B do not share a rank, or their rank is not the one adapter_config.json gives it (r, rank_pattern, mlx-lm's rank)", "the config and the tensors come from different runs"},
      {"WS-A003", "lora-base-shape", "adapter", S::Error, "with --base: a LoRA module that the base model does not have, or whose factors' features (or experts) are not the base module's", "the adapter was trained on another base model"},
      {"WS-A004", "adapter-summary", "adapter", S::Info, "what the LoRA adapter is: library, base model, rank, scale, modules and targets", "inspect shows every module"},

      {"WS-S001", "expert-shape", "shapes", S::Error, "an expert projection's shape disagrees with hidden and expert intermediate sizes", "gate/up are [I, H], down is [H, I]"},
      {"WS-S002", "router-shape", "shapes", S::Error, "the router is not [num_experts, hidden_size]", "check the expert count"},
      {"WS-S003", "fused-shape", "shapes", S::Error, "a fused or stacked expert tensor has the wrong shape", "[E, 2I, H] / [E, H, 2I] and [E, H, I] / [E, I, H]"},
      {"WS-S004", "companion-mismatch", "shapes", S::Error, "scales or other companions do not fit their weight", "scale grids are ceil-div of the weight by the block size"},
      {"WS-S005", "squeezed-scale-grid", "shapes", S::Info, "an FP8 block scale stored squeezed to 1-D", "transformers 5 writes per-expert scales this way; loaders must accept it"},
      {"WS-S006", "weight-shape-mismatch", "shapes", S::Error, "weight_shape does not fit the packed tensor", "the packed codes cannot hold the declared shape"},
      {"WS-S007", "undeclared-scheme", "shapes", S::Error, "a quantized weight whose scheme the checkpoint's quantization config does not declare", "the config and the tensors disagree; runtimes follow the config and will misread the tensor"},
      {"WS-S008", "attention-shape", "shapes", S::Error, "attention projections disagree with the head counts the config declares", "q is [heads x head_dim, H], k and v [kv_heads x head_dim, H], o [H, heads x head_dim]; runtimes size the KV cache and split heads by the config"},
      {"WS-S009", "quantization-list-mismatch", "shapes", S::Error, "a linear weight stored quantized where the quantization config leaves its module out (compressed-tensors ignore or no group's targets; FP8 ignored_layers, AWQ modules_to_not_convert, bitsandbytes llm_int8_skip_modules, ModelOpt exclude_modules, GPTQ modules_in_block_to_quantize and dynamic -: as vLLM 0.11.0 matches them), stored unquantized where it quantizes it, or the shards vLLM fuses (qkv_proj, gate_up_proj) left out unevenly", "a loader that follows the config (compressed-tensors, vLLM) misreads the module, misses its scales or refuses the fused layer: fix the list or re-export"},
      {"WS-S010", "ignore-entry-unmatched", "shapes", S::Warning, "an entry of the quantization config's ignore / exclude list that matches no module of the checkpoint", "an entry written in another naming (vLLM's fused qkv_proj, a multimodal prefix) excludes nothing"},
      // compatibility with runtimes
      {"WS-R001", "native-fp8-dims", "compatibility", S::Info, "KTransformers' native FP8 path needs hidden and intermediate sizes divisible by 128", "other FP8 paths are not affected", "kt"},
      {"WS-R002", "rawint4-layout", "compatibility", S::Info, "KTransformers RAWINT4 needs group size 32, dimensions divisible by 32, weight_packed + weight_scale + weight_shape, no zero points, BF16 or F32 scales of shape [rows, cols/32], I32 or U8 codes", "other int4 loaders are not affected", "kt"},
      {"WS-R003", "gguf-noncanonical-offsets", "compatibility", S::Warning, "GGUF tensor offsets are aligned and in bounds but not canonical", "ggml's current reader (llama.cpp) refuses such files; rewrite them with gguf-py or llama.cpp's tools", "llama.cpp"},
      {"WS-R004", "native-fp8-layout", "compatibility", S::Info, "KTransformers' native FP8 path needs per-expert E4M3 weights with BF16 or F32 scales of exactly [rows/128, cols/128] (128x128 blocks)", "other FP8 paths are not affected; transformers also reads squeezed and fused layouts", "kt"},
      {"WS-R005", "runtime-dtypes", "compatibility", S::Info, "a dtype outside the seed runtime's set (BF16, F32, U8, I8, F8_E4M3, F8_E8M0, I64)", "the seed runtime refuses the file at load", "seed"},
      {"WS-R006", "kt-int8-scale-file", "compatibility", S::Info, "a KTransformers INT8 expert part whose scale sits in another file than its weight", "KTransformers' INT8 folder loader reads each part's scale from its weight's file; write them together", "kt"},
      {"WS-R007", "llama-cpp-model", "compatibility", S::Warning, "a GGUF model llama.cpp would not build: an architecture it does not name or map, or a key its model class requires missing", "llama.cpp refuses to load it; other GGUF readers (ik_llama.cpp, gguf-py) may take it", "llama.cpp"},
      {"WS-R008", "llama-cpp-tensors", "compatibility", S::Warning, "a GGUF model whose tensors are not those llama.cpp's model class creates: one it requires missing, or one it never creates", "llama.cpp refuses to load it ('missing tensor', 'wrong number of tensors'); rename or drop the tensors, or convert again with llama.cpp's own converter", "llama.cpp"},
      // serving engines at a layout and on a GPU (validate --runtime vllm|sglang, core/validate/engines)
      // Against the Hub's record (validate --hub; core/validate/hub_rules)
      {"WS-H001", "hub-file-differs", "hub", S::Error, "a local file whose size or digest is not the Hub's record of it (LFS sha256, git blob sha1)", "download the file again: it was cut short or corrupted on the way (hf download; hf cache verify)"},
      {"WS-H002", "hub-file-missing", "hub", S::Error, "a model file the Hub lists (weights, JSON, tokenizer) that the local folder lacks", "download it: the checkpoint is incomplete"},
      {"WS-H003", "hub-file-extra", "hub", S::Error, "a local file the Hub's repository does not list at that commit", "a file from another revision or another model, or one written locally: remove it or check the revision"},
      {"WS-H004", "hub-no-record", "hub", S::Error, "a weight file the Hub gives no sha256 for (or a file with neither sha256 nor blob id)", "its bytes cannot be verified; ask the repository's owner, or compare with another copy"},
      {"WS-H005", "hub-not-downloaded", "hub", S::Info, "files of the repository that are not model files (README, images) and were not downloaded", "nothing to do: the model does not need them"},
      {"WS-E001", "engine-architecture", "engine", S::Error, "config.json names no architecture, or one the engine has dropped", "serve it with the engine release that still has it, or fix config.json"},
      {"WS-E002", "engine-architecture-fallback", "engine", S::Warning, "an architecture the engine does not register: it tries its Transformers backend, which may or may not load it", "check that the installed transformers has a backend-compatible class, or use an engine release that registers the model"},
      {"WS-E003", "tp-split", "engine", S::Error, "the attention heads, the KV heads or a dense layer's width do not split over TP", "choose a TP that divides the heads and widths (and that the KV heads divide, or that divides them)"},
      {"WS-E004", "expert-split", "engine", S::Error, "the routed experts or their intermediate size do not split over the layout", "use expert parallelism (--ep), or a TP / EP the experts divide by"},
      {"WS-E005", "block-split", "engine", S::Error, "a TP shard of an FP8 block-quantized weight is not a whole number of blocks", "lower the TP, or use expert parallelism so experts stay whole"},
      {"WS-E006", "group-split", "engine", S::Error, "a TP shard of a GPTQ / AWQ weight does not hold whole groups or packed words", "lower the TP"},
      {"WS-E007", "gpu-capability", "engine", S::Error, "the engine does not run the checkpoint's quantization on this GPU (or on any), or not for MoE layers", "a newer GPU, another quantization of the model, or another engine"},
      {"WS-E008", "engine-fallback", "engine", S::Warning, "the engine takes a slower path (a weight-only or unoptimized kernel) at this layout on this GPU, or its source does not settle whether it loads", "expect lower throughput; the message names the path"},
      {"WS-E009", "engine-weight-names", "engine", S::Error, "a checkpoint tensor the engine's weight loader cannot place (it raises, or skips it), or a parameter of its model class no tensor fills", "rename the tensors to what the model class loads (the message names both), or add what is missing"},
      {"WS-E010", "engine-weight-shapes", "engine", S::Error, "checkpoint tensors the engine's weight loader takes in another layout or count than they are stored in - fused expert tensors it transposes from transformers 4.x's layout, an expert count its config builds otherwise - or per-expert scales it creates empty and the checkpoint does not fill", "transpose the fused expert tensors to transformers 4.x's [E, H, 2I] / [E, I, H], or name the expert count under the key the engine's config reads"},
      // full load (validate --full-load)
      {"WS-L001", "load-failed", "load", S::Error, "the checkpoint (or EP rank) could not be loaded onto the device", "the message names the tensor and the cause; nothing stays allocated"},
      {"WS-L002", "residency-mismatch", "load", S::Error, "the device's free memory, or the bytes the readers uploaded, differ from the prediction", "an allocator that pads; a tensor loaded twice, partly, or not at all"},
      {"WS-L003", "load-summary", "load", S::Info, "what the load put on the device, and how fast", "see weightscope load for the full residency report"},
      // against a reference checkpoint (validate --against REF)
      {"WS-D001", "moved-from-reference", "diff", S::Error, "a tensor moved more than --max-rel-error from the reference (relative Frobenius error)", "requantize it with better scales, or accept a larger error for this scheme"},
      {"WS-D002", "missing-from-reference", "diff", S::Error, "a tensor of the reference has no counterpart here", "the conversion dropped it"},
      {"WS-D003", "shape-differs-from-reference", "diff", S::Error, "a tensor's shape differs from its counterpart in the reference", "the conversion reshaped or truncated it"},
      {"WS-D004", "extra-versus-reference", "diff", S::Warning, "a tensor with no counterpart in the reference", "the conversion added it, or named it so it cannot be matched"},
      {"WS-D005", "reference-summary", "diff", S::Info, "how far the checkpoint is from the reference overall", "see weightscope diff for every tensor"},
      // scales and values
      {"WS-V001", "nan-scales", "values", S::Error, "scales that are NaN", "NaN scales turn whole blocks into NaN"},
      {"WS-V002", "inf-scales", "values", S::Error, "scales that are infinite", "infinite scales overflow whole blocks"},
      {"WS-V003", "negative-scales", "values", S::Error, "negative scales", "quantizers write non-negative scales; a sign flip corrupts the block"},
      {"WS-V004", "zero-scales", "values", S::Warning, "scales that are zero", "a zero scale zeroes its whole block"},
      {"WS-V005", "subnormal-scales", "values", S::Warning, "subnormal scales", "underflowed scales lose precision and slow some hardware"},
      {"WS-V006", "e8m0-nan", "values", S::Error, "E8M0 scales with the NaN code 0xFF", "MX scales of 0xFF are NaN by definition"},
      {"WS-V007", "scale-outlier", "values", S::Warning, "a tensor's scales far from its peers' (same projection and scheme)", "compare with the same projection in other experts and layers"},
      {"WS-V008", "nan-inf-weights", "values", S::Error, "weights that are NaN or infinite", "the checkpoint holds non-finite values"},
      {"WS-V009", "placeholder-expert", "values", S::Error, "an expert whose weights are all zero or constant", "an unmaterialized placeholder was saved instead of the expert"},
      {"WS-V010", "implausible-scales", "values", S::Error, "scales that imply weights outside 1e-6..1e3 (largest code x scale x global scale)", "the exporter wrote uninitialised scales: re-export this tensor"},
      {"WS-V011", "scale-outlier-far", "values", S::Error, "a tensor's scales 10 or more octaves (1024x) from its peers' (same projection and scheme, across layers and experts)", "the exporter wrote this tensor's scales wrong: re-export it"},
      {"WS-V012", "implausible-weights", "values", S::Error, "a quantized weight whose dequantized values are all below 1e-6 or reach beyond 1e3", "the codes or scales are not those of a trained weight: re-export this tensor"},
      {"WS-V013", "duplicate-experts", "values", S::Error, "routed experts of one layer whose every projection is byte-identical (codes, scales and zero points as stored)", "an upcycling or merge script copied one expert into another: they route differently but compute the same; re-export from the trained weights"},
      {"WS-V014", "unreachable-experts", "values", S::Warning, "routed experts the router's correction bias (e_score_correction_bias, exp_probs_b) makes impossible to choose, whatever the token", "they are dead weight in memory: the bias was trained or written wrong; compare it with the source checkpoint's"},
      {"WS-V015", "near-duplicate-experts", "values", S::Warning, "routed experts of one layer whose values have a cosine of 0.99 or more in every projection without being byte-identical", "a copy of one expert with noise added (a merge or upcycling script): compare them with the source checkpoint's"},
      {"WS-V016", "expert-norm-outlier", "values", S::Warning, "a routed expert projection whose Frobenius norm is 8x or more above or below the median of its layer's experts", "the expert was scaled by a merge or written wrong: compare it with the source checkpoint's"},
  };
  return r;
}

const RuleInfo& rule(const std::string& code) {
  for (const auto& r : rules())
    if (code == r.code) return r;
  throw std::out_of_range("unknown rule " + code);
}

Finding makeFinding(const std::string& code, std::string message, std::string tensor, std::string file) {
  const RuleInfo& r = rule(code);
  Finding f;
  f.severity = r.severity;
  f.code = r.code;
  f.rule = r.name;
  f.tensor = std::move(tensor);
  f.file = std::move(file);
  f.message = std::move(message);
  f.hint = r.hint;
  return f;
}

}  // namespace ws::val
