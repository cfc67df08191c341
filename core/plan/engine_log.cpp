#include "core/plan/engine_log.h"

#include <algorithm>
#include <regex>

#include "core/io/text_file.h"

namespace ws::plan {

namespace {

struct LogicalLine {
  std::string text;
  int line = 0;
};

std::vector<std::string> physicalLines(const std::string& text) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= text.size()) {
    size_t nl = text.find('\n', p);
    if (nl == std::string::npos) nl = text.size();
    std::string l = text.substr(p, nl - p);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    out.push_back(std::move(l));
    p = nl + 1;
  }
  return out;
}

// A line that opens a log record: a vLLM process prefix "(EngineCore_0 pid=..)", a level, an
// SGLang timestamp "[2025-..", llama.cpp's "function: " prefix, or a comment.
bool opensRecord(const std::string& l) {
  static const std::regex record(R"(^(\(|\[|INFO|WARNING|ERROR|DEBUG|#|~?[A-Za-z_][A-Za-z0-9_]*: ))");
  return std::regex_search(l, record);
}

// A terminal copy wraps long lines at its width (not always the same width within one copy:
// 136 and 147 columns in one vLLM log): a long line followed by one that opens no record is
// joined with it.
std::vector<LogicalLine> logicalLines(const std::string& text) {
  const auto lines = physicalLines(text);
  std::vector<LogicalLine> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    LogicalLine l{lines[i], int(i + 1)};
    const bool comment = !lines[i].empty() && lines[i][0] == '#';
    while (!comment && lines[i].size() >= 80 && i + 1 < lines.size() && !lines[i + 1].empty() && !opensRecord(lines[i + 1])) l.text += lines[++i];
    out.push_back(std::move(l));
  }
  return out;
}

// "Worker_TP3_EP3" of "(Worker_TP3_EP3 pid=2081) INFO ...", "TP0" of "[2025-03-08 12:29:21 TP0] ...".
std::string workerOf(const std::string& l) {
  static const std::regex vllm(R"(^\((\S+) pid=\d+\))"), sglang(R"(^\[[0-9-]+ [0-9:]+ ([A-Z]+[0-9]+[^\]]*)\])");
  std::smatch m;
  if (std::regex_search(l, m, vllm)) return m[1].str().rfind("EngineCore", 0) == 0 || m[1].str().rfind("APIServer", 0) == 0 ? "" : m[1].str();
  if (std::regex_search(l, m, sglang)) return m[1].str();
  return "";
}

// The number of "14.2488" or "1,192,160" and the decimals it was printed with.
LoggedFigure figureOf(const std::string& number, const std::string& worker, int line) {
  std::string digits;
  for (char ch : number)
    if (ch != ',') digits += ch;
  const size_t dot = digits.find('.');
  return LoggedFigure{std::stod(digits), dot == std::string::npos ? 0 : int(digits.size() - dot - 1), worker, line};
}

// `key` of a Python dict or keyword list as vLLM and SGLang print their arguments:
// 'max_model_len': 16384, tensor_parallel_size=2, tp_size=4, kv_cache_dtype='auto'.
std::string settingOf(const std::string& l, const std::string& key) {
  const std::regex r("[ ({,]'?" + key + R"('?\s*[:=]\s*'?([A-Za-z0-9_.]+))");
  std::smatch m;
  if (!std::regex_search(l, m, r)) return "";
  std::string v = m[1].str();
  while (!v.empty() && v.back() == '.') v.pop_back();  // a sentence's full stop: "...=2048."
  return v;
}

void readSettings(const std::string& l, EngineLog& log) {
  auto integer = [&](const char* key, auto& into) {
    if (const auto v = settingOf(l, key); !v.empty() && std::all_of(v.begin(), v.end(), ::isdigit)) into = std::remove_reference_t<decltype(into)>(std::stoll(v));
  };
  integer("max_model_len", log.maxModelLen);
  integer("max_seq_len", log.maxModelLen);
  integer("context_length", log.maxModelLen);
  integer("tensor_parallel_size", log.tp);
  integer("tp_size", log.tp);
  integer("pipeline_parallel_size", log.pp);
  integer("pp_size", log.pp);
  integer("block_size", log.blockSize);
  integer("max_num_batched_tokens", log.maxNumBatchedTokens);
  integer("max_num_seqs", log.maxNumSeqs);
  integer("page_size", log.blockSize);
  for (const char* key : {"gpu_memory_utilization", "mem_fraction_static"})
    if (const auto v = settingOf(l, key); !v.empty() && v != "None") log.gpuMemoryUtilization = std::stod(v);
  if (const auto v = settingOf(l, "kv_cache_dtype"); !v.empty()) log.kvCacheDtype = v;
}

}  // namespace

EngineLog parseEngineLog(const std::string& text, const std::string& path) {
  EngineLog log;
  log.path = path;
  // vLLM 0.11.0: gpu_model_runner.py load_model ("Model loading took %.4f GiB"), gpu_worker.py
  // determine_available_memory ("Available KV cache memory: %.2f GiB"), v1/core/kv_cache_utils.py
  // get_kv_cache_config_from_groups ("GPU KV cache size: %s tokens", "Maximum concurrency for %s
  // tokens per request: %.2fx"). SGLang 0.5.23: srt/mem_cache/memory_pool.py ("KV Cache is
  // allocated. ... #tokens: %d, K size: %.2f GB, V size: %.2f GB", GB = 1024**3), model_runner's
  // "Load weight begin. avail mem=%.2f GB" and "Load weight end. ... avail mem=%.2f GB, mem
  // usage=%.2f GB" (the same GB).
  static const std::regex vllmVersion(R"(vLLM API server version (\S+)|V1 LLM engine \(v([^)]+)\))"),
      loading(R"(Model loading took ([0-9.]+) GiB)"), available(R"(Available KV cache memory: ([0-9.]+) GiB)"),
      tokens(R"(GPU KV cache size: ([0-9,]+) tokens)"), concurrency(R"(Maximum concurrency for ([0-9,]+) tokens per request: ([0-9.]+)x)"),
      maxLen(R"(Using max model len (\d+))"), sglangKv(R"(KV Cache is allocated\..*#tokens: (\d+), K size: ([0-9.]+) GB, V size: ([0-9.]+) GB)"),
      sglangWeights(R"(Load weight end\..*mem usage=([0-9.]+) GB)"), sglangArgs(R"(server_args=ServerArgs\()"),
      sglangFreeBefore(R"(Load weight begin\. avail mem=([0-9.]+) GB)"), sglangFreeAfter(R"(Load weight end\..*avail mem=([0-9.]+) GB)"),
      sglangLen(R"(max_total_num_tokens=\d+.*context_len=(\d+))"),
      vllmItemized(R"(Free memory on device \([0-9.]+/([0-9.]+) GiB\) on startup\. Desired GPU memory utilization is \(([0-9.]+), ([0-9.]+) GiB\)\. Actual usage is [0-9.]+ GiB for weight, ([0-9.]+) GiB for peak activation, ([0-9.]+) GiB for non-torch memory, and ([0-9.]+) GiB for CUDAGraph memory)");
  // llama.cpp 0c1e57098: src/llama-context.cpp (the "llama_context: n_ctx = %u" block, the output
  // and compute buffer sizes), src/llama-kv-cache.cpp ("llama_kv_cache: size = ...", "llama_kv_cache_unified" before the rename),
  // src/llama-kv-cache-iswa.cpp ("using full-size SWA cache"), src/llama-model.cpp
  // load_tensors ("%s model buffer size = %8.2f MiB").
  static const std::regex llamaSetting(R"(llama_context: (n_ctx|n_seq_max|n_batch|n_ubatch|kv_unified|n_rs_seq|flash_attn) += (\w+))"),
      llamaKv(R"(llama_kv_cache(?:_unified)?: size = .*K \((\w+)\):.*V \((\w+)\):.*MiB)"),
      llamaBuffer(R"((model|compute|output) buffer size = +([0-9.]+) MiB)");
  bool vllm = false, sglang = false, llama = false;
  for (const auto& [l, line] : logicalLines(text)) {
    if (!l.empty() && l[0] == '#') continue;
    const std::string worker = workerOf(l);
    std::smatch m;
    if (l.find("non-default args:") != std::string::npos || l.find("with config:") != std::string::npos || std::regex_search(l, sglangArgs)) readSettings(l, log);
    if (std::regex_search(l, m, vllmVersion)) {
      vllm = true;
      if (log.version.empty()) log.version = m[1].matched ? m[1].str() : m[2].str();
    }
    if (std::regex_search(l, m, maxLen)) log.maxModelLen = std::stoll(m[1].str());
    if (l.find("Chunked prefill is enabled") != std::string::npos) readSettings(l, log);
    if (std::regex_search(l, m, loading)) vllm = true, log.weightsGib.push_back(figureOf(m[1], worker, line));
    if (std::regex_search(l, m, available)) vllm = true, log.availableKvGib.push_back(figureOf(m[1], worker, line));
    if (std::regex_search(l, m, tokens)) vllm = true, log.kvTokens.push_back(figureOf(m[1], worker, line));
    if (std::regex_search(l, m, vllmItemized)) {
      vllm = true;
      log.deviceTotalGib.push_back(figureOf(m[1], worker, line));
      if (log.gpuMemoryUtilization < 0) log.gpuMemoryUtilization = std::stod(m[2].str());
      log.requestedGib.push_back(figureOf(m[3], worker, line));
      log.peakActivationGib.push_back(figureOf(m[4], worker, line));
      log.nonTorchGib.push_back(figureOf(m[5], worker, line));
      log.cudaGraphGib.push_back(figureOf(m[6], worker, line));
    }
    if (std::regex_search(l, m, concurrency)) {
      vllm = true;
      log.concurrencyLen = int64_t(figureOf(m[1], worker, line).value);
      log.maxConcurrency.push_back(figureOf(m[2], worker, line));
    }
    if (std::regex_search(l, m, sglangKv)) {
      sglang = true;
      log.kvTokens.push_back(figureOf(m[1], worker, line));
      log.kSizeGib.push_back(figureOf(m[2], worker, line));
      log.vSizeGib.push_back(figureOf(m[3], worker, line));
    }
    if (std::regex_search(l, m, sglangWeights)) sglang = true, log.weightsGib.push_back(figureOf(m[1], worker, line));
    if (std::regex_search(l, m, sglangFreeBefore)) log.freeBeforeWeightsGib.push_back(figureOf(m[1], worker, line));
    if (std::regex_search(l, m, sglangFreeAfter)) log.freeAfterWeightsGib.push_back(figureOf(m[1], worker, line));
    if (std::regex_search(l, m, sglangLen) && log.maxModelLen < 0) log.maxModelLen = std::stoll(m[1].str());
    if (std::regex_search(l, m, llamaSetting)) {
      llama = true;
      const std::string key = m[1].str(), v = m[2].str();
      if (key == "kv_unified") log.kvUnified = v == "true";
      else if (key == "flash_attn") log.flashAttn = v == "1" || v == "enabled" ? 1 : v == "0" || v == "disabled" ? 0 : -1;
      else if (key == "n_batch" && std::all_of(v.begin(), v.end(), ::isdigit)) log.nBatch = std::stoll(v);
      else if (std::all_of(v.begin(), v.end(), ::isdigit))
        (key == "n_ctx" ? log.maxModelLen : key == "n_ubatch" ? log.nUbatch : key == "n_rs_seq" ? log.nRsSeq : log.nSeqMax) = std::stoll(v);
    }
    if (l.find("using full-size SWA cache") != std::string::npos) log.swaFull = true;
    // -fa auto resolved: "Flash Attention was auto, set to enabled" (older releases), 0c1e57098's
    // resolve_fused_ops "Flash Attention enabled" / "Flash Attention not supported, set to disabled".
    if (l.find("Flash Attention") != std::string::npos)
      if (const bool on = l.find("set to enabled") != std::string::npos || l.find("Flash Attention enabled") != std::string::npos;
          on || l.find("set to disabled") != std::string::npos)
        log.flashAttn = on;
    if (std::regex_search(l, m, llamaKv)) {
      llama = true;
      log.typeK = m[1].str(), log.typeV = m[2].str();
      log.llamaKvLines.push_back(l.substr(l.find("llama_kv_cache")));
    }
    // DeepSeek-V4's compressor states: one summary line each (llama-kv-cache-dsv4.cpp)
    if (const size_t at = l.find("llama_dsv4_comp_state: "); at != std::string::npos && l.find(" ratio = ") != std::string::npos) {
      llama = true;
      log.llamaKvLines.push_back(l.substr(at));
    }
    if (std::regex_search(l, m, llamaBuffer) && l.find("~llama_context") == std::string::npos) {
      auto& into = m[1].str() == "model" ? log.modelBufferMib : m[1].str() == "compute" ? log.computeBufferMib : log.outputBufferMib;
      into.push_back(figureOf(m[2], worker, line));
    }
  }
  if (log.maxModelLen < 0 && log.concurrencyLen > 0) log.maxModelLen = log.concurrencyLen;
  log.engine = int(vllm) + int(sglang) + int(llama) != 1 ? "" : vllm ? "vllm" : sglang ? "sglang" : "llama.cpp";
  return log;
}

Result<EngineLog> readEngineLog(const std::string& path) {
  try {
    EngineLog log = parseEngineLog(readTextFile(path, 64ull << 20), path);
    if (log.engine.empty())
      return Error{ErrorCode::Usage, "no vLLM, SGLang or llama.cpp start-up lines (weights loaded, KV cache size) in this log, or more than one engine's", path, std::nullopt, {}};
    return log;
  } catch (const CoreError& e) {
    return e.error();
  }
}

}  // namespace ws::plan
