// Hand-run probe (tests/scripts/make_llama_cpp_kv_logs.py builds and runs it): loads a GGUF with
// llama.cpp's own library and creates a context, printing the lines llama.cpp logs about its KV
// cache - the engine's own figures that tst_kv_cache holds core/plan/llama_cpp_cache to.
// usage: llama_cpp_kv_probe MODEL.gguf N_CTX N_SEQ UNIFIED(0|1) SWA_FULL(0|1) TYPE(f16|q8_0|q4_0) [FULL_LOG]
// FULL_LOG: also every line llama.cpp logs, as its own log callback receives them (plan
// --engine-log reads such a log: tests/scripts/cli_engine_log.py).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "llama.h"

static FILE* fullLog = nullptr;

static void keepKvLines(ggml_log_level level, const char* text, void*) {
  if (fullLog) std::fputs(text, fullLog);
  if (level == GGML_LOG_LEVEL_ERROR) std::fputs(text, stderr);  // why no context was made
  if (std::strstr(text, "llama_kv_cache: size =") || std::strstr(text, "KV cache, size =") ||
      (std::strstr(text, "llama_dsv4_comp_state:") && std::strstr(text, ", size =")))  // DeepSeek-V4's compressor states
    std::fputs(text, stdout);
}

int main(int argc, char** argv) {
  if (argc != 7 && argc != 8) return 2;
  if (argc == 8 && !(fullLog = std::fopen(argv[7], "w"))) return 2;
  llama_log_set(keepKvLines, nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = uint32_t(std::atoi(argv[2]));
  cp.n_seq_max = uint32_t(std::atoi(argv[3]));
  cp.kv_unified = std::atoi(argv[4]) != 0;
  cp.swa_full = std::atoi(argv[5]) != 0;
  const std::string type = argv[6];
  cp.type_k = cp.type_v = type == "q8_0" ? GGML_TYPE_Q8_0 : type == "q4_0" ? GGML_TYPE_Q4_0 : GGML_TYPE_F16;
  // A quantized V cache needs flash attention (llama-context.cpp); f16 takes either.
  cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_ENABLED;
  llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return 1;
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  if (fullLog) std::fclose(fullLog);
  return 0;
}
