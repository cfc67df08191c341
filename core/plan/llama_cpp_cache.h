// llama.cpp's own KV cache for a GGUF model, as ggml-org/llama.cpp 0c1e57098 (the tree
// llama-cpp-python 0.3.36 vendors, which also wrote tests/data/llama_cpp) allocates it - not vLLM's
// formulas:
//   - which layers slide: the architecture's pattern (src/models/<arch>.cpp load_arch_hparams ->
//     load_swa_pattern), overridden by the GGUF's attention.sliding_window_pattern; layer il slides
//     when il % n < n - 1 (dense first: il % n != 0), src/llama-hparams.cpp set_swa_pattern;
//   - cells: n_ctx padded to 256 (src/llama-context.cpp), one stream per sequence unless unified
//     (n_ctx_seq = PAD(n_ctx / n_seq, 256)); the sliding layers' cache PAD(min(n_ctx_seq,
//     n_swa x (unified ? n_seq : 1) + n_ubatch), 256) cells, or all of them with --swa-full
//     (src/llama-kv-cache-iswa.cpp);
//   - bytes: each layer K [key_length x head_count_kv] and V [value_length x head_count_kv] a cell
//     per stream, in -ctk / -ctv's type; MLA (key_length_mla present) keeps K only
//     (src/llama-kv-cache.cpp: has_v = !is_mla). Per layer: head_count_kv may be an array, and
//     the sliding layers take key_length_swa / value_length_swa (llama-hparams.cpp n_embd_k_gqa);
//     V is stored untransposed, as flash attention (llama-server's auto on GPUs) keeps it - without
//     it llama.cpp pads every layer's V to the widest (llama-kv-cache.cpp, TAG_V_CACHE_VARIABLE);
//   - layers with a cache: all, except the KV-sharing layers at the end (hparams.has_kv:
//     n_layer_kv_from_start, gemma3n.cpp: 20; gemma4.cpp: n_layer - attention.shared_kv_layers);
//   - DeepSeek-V4 (deepseek4, src/llama-kv-cache-dsv4.cpp llama_kv_cache_dsv4): every layer's raw
//     keys in a sliding cache (K only, one stream per sequence even when unified), then K-only
//     caches of the compressed keys - ratio-4 layers (CSA), ratio-128 layers (HCA) and the ratio-4
//     layers' indexer keys (one head of indexer.key_length) - each of PAD(max(1, ceil(n_ctx_seq /
//     ratio)), 256) cells a sequence, and three F32 compressor states a sequence (kv and score
//     tensors of 2 x ratio rows for CSA and the indexer, 128 for HCA).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model_description.h"
#include "core/util/error.h"

namespace ws::plan {

// One architecture's built-in sliding-window pattern (general.architecture's name).
struct LlamaCppSwaPattern {
  std::string_view arch;
  int n;               // every n-th layer is dense (0: every layer slides; -1: only the GGUF's array says)
  bool denseFirst;     // the first of each n is the dense one, not the last
  bool needsWindow;    // sliding only when attention.sliding_window is present and > 0
  std::string_view source;
};
const std::vector<LlamaCppSwaPattern>& llamaCppSwaPatterns();

// Per layer (0 .. numLayers-1, MTP / NextN layers excluded): does llama.cpp give it the sliding
// cache? All false for an architecture without sliding layers.
std::vector<bool> llamaCppSlidingLayers(const ModelDescription& m);

// One layer's cache as llama.cpp allocates it: K and V widths a cell (values, before the cache
// type), sliding or not; hasKv false for a layer that reuses another's (no cache of its own).
struct LlamaCppLayerKv {
  bool hasKv = true, sliding = false;
  uint64_t kWidth = 0, vWidth = 0;
  uint64_t kHead = 0, vHead = 0;  // n_embd_head_k / _v: a quantized cache type's block must divide them
};
// How llama.cpp would see a model known only by its config.json (a log held to a folder with no
// GGUF): the architecture convert_hf_to_gguf.py names it (llamaCppConversions), with what the
// conversion writes of the sliding pattern. A usage error where that is not read here: a sliding,
// compressed, indexed, cache-sharing or MTP model of an architecture not in the table.
struct LlamaCppConversion {
  std::string_view hfArchitecture;  // config.json's architectures entry
  std::string_view ggufArch;        // general.architecture of the conversion
  std::string_view source;          // llama.cpp 0c1e57098 conversion/*.py, and what it writes of the pattern
};
const std::vector<LlamaCppConversion>& llamaCppConversions();
Result<ModelDescription> llamaCppModelOfConfig(const ModelDescription& config);

// Does llama.cpp keep lightning-indexer keys in a cache of their own (a GGUF of deepseek32 or
// glm-dsa)?
bool llamaCppIndexerKeys(const ModelDescription& m);
// Per trunk layer: does its indexer keep keys? DeepSeek-V3.2: every layer. GLM-DSA: the "full"
// ones - the GGUF's attention.indexer.types, else (glm-dsa.cpp load_arch_hparams) every layer when
// n_ctx_train < 1048576 (GLM-5, 5.1), GLM-5.2's table when not (layers 0 and 1, then every fourth
// from 2, up to 78).
std::vector<bool> llamaCppIndexerLayers(const ModelDescription& m);
// Does llama.cpp keep DeepSeek-V4's compressed caches (a GGUF of deepseek4)?
bool llamaCppCompressedCaches(const ModelDescription& m);

// Every layer (0 .. numLayers-1); a usage error naming the GGUF key a layer needs when it is absent.
std::vector<LlamaCppLayerKv> llamaCppLayerKv(const ModelDescription& m);

struct LlamaCppCacheOptions {
  int64_t nCtx = 4096;          // -c
  int nSeq = 1;                 // -np (n_seq_max)
  bool unified = false;         // --kv-unified (llama-server's default with -np auto: 4 slots, unified)
  int64_t nUbatch = 512;        // -ub
  bool swaFull = false;         // --swa-full
  std::string typeK = "f16", typeV = "f16";  // -ctk / -ctv
  int nRsSeq = 0;               // n_rs_seq: rollback planes of DeepSeek-V4's compressor states (0 unless set)
};

// One cache object, as its `llama_kv_cache: size = ...` line reports it - or one of DeepSeek-V4's
// compressor states, as its `llama_dsv4_comp_state: ...` line does.
struct LlamaCppCachePart {
  std::string name;             // "" (one cache), "non-SWA", "SWA", "CSA", "HCA", "indexer"; a state: "csa", "hca", "lid"
  uint64_t cells = 0;           // per stream
  int layers = 0;
  uint32_t streams = 1;
  uint64_t kBytes = 0, vBytes = 0;  // a state's bytes are in kBytes
  bool state = false;
  uint32_t ratio = 0;           // DeepSeek-V4: the compression of the keys it holds or compresses (0: raw keys)
  uint32_t stateRows = 0, stateWidth = 0;  // a state's F32 rows x values
  // "llama_kv_cache: size =  192.00 MiB (  4096 cells,  24 layers,  1/1 seqs), K (f16):   96.00 MiB, V (f16):   96.00 MiB"
  // "llama_dsv4_comp_state: csa ratio = 4, state = 8 x 128, streams = 1, rs_seq = 0, layers = 2, size =    0.02 MiB"
  std::string logLine(const LlamaCppCacheOptions& o) const;
};

// The parts llama.cpp allocates; a usage error naming the key a layer needs when the GGUF lacks it.
Result<std::vector<LlamaCppCachePart>> llamaCppCache(const ModelDescription& m, const LlamaCppCacheOptions& o);

}  // namespace ws::plan
