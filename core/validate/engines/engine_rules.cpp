#include "core/validate/engines/engine_rules.h"

#include <algorithm>
#include <set>

#include "core/plan/devices.h"
#include "core/validate/engines/deepseek_shard_rules.h"
#include "core/validate/engines/engine_tables.h"
#include "core/validate/engines/expert_layout_rules.h"
#include "core/validate/engines/layout_rules.h"
#include "core/validate/engines/quant_method.h"
#include "core/validate/engines/weight_name_rules.h"
#include "core/validate/runtimes.h"

namespace ws::val::engines {

namespace {

const ArchitectureRegistry& registryOf(const std::string& engine) { return engine == "vllm" ? vllmArchitectures() : sglangArchitectures(); }

// vLLM 0.11.0 ModelRegistry.inspect_model_cls / _raise_for_unsupported (model_executor/models/
// registry.py); SGLang 0.5.23 get_model_architecture and resolve_transformers_arch
// (srt/model_loader/utils.py). Both fall back to their Transformers backend for an architecture
// they do not register - which loads only where the installed transformers has a compatible class.
void architectureRules(const ModelDescription& m, const std::string& engine, const RuntimeInfo& rt, Sink& sink) {
  if (m.source != "config.json") return;  // GGUF and tensor-only folders name no class
  if (m.architectures.empty()) {
    sink.add("WS-E001", "config.json names no architectures: " + std::string(rt.title) + " refuses ('No model architectures are specified')");
    return;
  }
  const ArchitectureRegistry& r = registryOf(engine);
  std::string unregistered;
  for (const auto& a : m.architectures) {
    if (std::find(r.supported.begin(), r.supported.end(), a) != r.supported.end()) return;  // the first registered one is used
    for (const auto& [gone, until] : r.previously)
      if (gone == a) {
        sink.add("WS-E001", "Model architecture " + a + " was supported in vLLM until v" + std::string(until) + ", and is not supported anymore.");
        return;
      }
    unregistered += (unregistered.empty() ? "" : ", ") + a;
  }
  sink.add("WS-E002", std::string(rt.title) + " registers no " + unregistered + ": it tries its Transformers backend (slower), which loads only if the installed transformers has a " +
                          "backend-compatible class for it - unknown from the checkpoint; otherwise 'Model architectures [" + unregistered + "] are not supported for now.'");
}

void capabilityRules(const ModelDescription& m, const std::string& engine, const EngineLayout& l, const RuntimeInfo& rt, Sink& sink) {
  std::string unknown;
  const auto paths = quantPathsOf(m, &unknown);
  if (!unknown.empty()) sink.add("WS-E008", "quantization " + unknown + ": no row of the " + std::string(rt.title) + " kernel table covers it - whether it loads: unknown");
  for (const auto& p : paths) {
    const QuantKernelRow* row = findQuantKernel(engine, p);
    if (!row) {
      sink.add("WS-E008", "quantization path " + p + ": " + std::string(rt.title) + "'s kernels for it were not read - unknown");
      continue;
    }
    if (row->minCapability >= kRefusedOnEveryGpu) {
      sink.add("WS-E007", std::string(row->refusal) + " [" + std::string(row->source) + "]");
      continue;
    }
    if (l.capability == 0) continue;  // no GPU named: nothing to hold the minimum to
    const std::string gpu = l.gpu + " (" + plan::capabilityName(l.capability) + ")";
    if (l.capability < row->minCapability)
      sink.add("WS-E007", p + " needs " + plan::capabilityName(row->minCapability) + "; " + gpu + " is below it: '" + std::string(row->refusal) + "' [" + std::string(row->source) + "]");
    else if (row->nativeCapability > 0 && l.capability < row->nativeCapability)
      sink.add("WS-E008", p + " on " + gpu + ", below the native kernel's " + plan::capabilityName(row->nativeCapability) + ": " + std::string(row->fallback) + " [" +
                              std::string(row->source) + "]");
  }
  if (m.numExperts > 0)
    for (const auto& r : moeRefusalTable())
      if (r.engine == engine && std::find(paths.begin(), paths.end(), r.method) != paths.end())
        sink.add("WS-E007", std::string(r.method) + " experts: '" + std::string(r.refusal) + "' [" + std::string(r.source) + "]");
}

// AutoAWQ's packings other than GEMM. vLLM 0.11.0 and SGLang 0.5.23 read no "version" from the
// config (vLLM Q/awq.py:73-79 and Q/awq_marlin.py:98; SGLang Q/awq/awq.py:127-134 and :315) and
// create every AWQ layer with GEMM's shapes, qweight [in, out / 8] and scales [groups, out] (vLLM
// Q/awq.py:134-190, Q/awq_marlin.py:195-240; SGLang Q/awq/schemes/awq_linear.py:30-80,
// awq_marlin.py:31-60). GEMV's scales [out, 8 W] never have GEMM's shape [groups, out] (that
// would take a group of one input), so the weight loader's shape check raises - at the latest on
// a layer's scales, even where a square layer's qweight [n, n / 8] fits the wrong way round.
void packingRules(const Checkpoint& c, const RuntimeInfo& rt, Sink& sink) {
  const QuantConfig& q = c.model.quant;
  if (q.method != "awq" || q.awqVersion.empty() || q.awqVersion == "gemm") return;
  std::string first;
  for (const auto& t : c.tensors)
    if (t.name.ends_with(".qweight")) {
      first = t.name;
      break;
    }
  const std::string where = std::string(rt.title) + " " + std::string(rt.version) + " reads no AWQ version and creates GEMM's qweight [in, out / 8] and scales [groups, out]";
  if (q.awqVersion == "gemv")
    sink.add("WS-E009", "AWQ version \"gemv\": " + where + "; GEMV packs qweight [out, in / 8] and scales [out, groups padded], which its weight loader's shape check refuses" +
                            (first.empty() ? std::string() : " (first: " + first + ")") + "; repack as GEMM (AutoAWQ version \"gemm\")",
             first);
  else
    sink.add("WS-E008", "AWQ version \"" + q.awqVersion + "\": " + where + "; whether this packing's shapes pass its loader was not read - unknown", first);
}

}  // namespace

bool isServingEngine(const std::string& runtime) { return runtime == "vllm" || runtime == "sglang"; }

void engineRules(const Checkpoint& c, const std::string& engine, const EngineLayout& l, Sink& sink) {
  const RuntimeInfo* rt = findRuntime(engine);
  if (!rt || !isServingEngine(engine)) return;
  const ModelDescription& m = c.model;
  architectureRules(m, engine, *rt, sink);
  capabilityRules(m, engine, l, *rt, sink);
  layoutRules(engine, m, l, quantPathsOf(m), sink);
  if (engine == "vllm") vllmDeepseekShardRules(c, l, sink);
  packingRules(c, *rt, sink);
  weightNameRules(c, engine, sink);
  expertLayoutRules(c, engine, sink);
}

bool EngineCheck::refuses() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::Error; });
}

EngineCheck checkEngine(const Checkpoint& c, const std::string& engine, const EngineLayout& l) {
  EngineCheck out;
  const ValidateOptions all;
  Sink sink{all, out.findings};
  engineRules(c, engine, l, sink);
  std::stable_sort(out.findings.begin(), out.findings.end(), [](const Finding& x, const Finding& y) { return x.severity > y.severity; });
  out.verdict = verdictLine(engine, l, out.findings);
  return out;
}

std::string verdictLine(const std::string& engine, const EngineLayout& l, const std::vector<Finding>& findings) {
  const RuntimeInfo* rt = findRuntime(engine);
  std::set<std::string> refusals, breakages, fallbacks;
  size_t reasons = 0, broken = 0, others = 0;
  for (const auto& f : findings) {
    const bool engineRule = f.code.rfind("WS-E", 0) == 0;
    if (engineRule && f.severity == Severity::Error && loadsBroken(f)) ++broken, breakages.insert(f.code);
    else if (engineRule && f.severity == Severity::Error) ++reasons, refusals.insert(f.code);
    else if (engineRule && f.severity == Severity::Warning) fallbacks.insert(f.code);
    else if (f.severity == Severity::Error) ++others;
  }
  auto join = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& c : s) out += (out.empty() ? "" : ", ") + c;
    return out;
  };
  std::string v = std::string(rt ? rt->title : engine) + " " + std::string(rt ? rt->version : "") + ", " + l.describe() + ": ";
  auto count = [](size_t n) { return std::to_string(n) + (n == 1 ? " reason (" : " reasons ("); };
  v += reasons ? "refuses: " + count(reasons) + join(refusals) + ")" : broken ? "loads broken: " + count(broken) + join(breakages) + ")" : "loads";
  if (reasons && broken) v += "; broken besides: " + count(broken) + join(breakages) + ")";
  if (!fallbacks.empty()) v += "; fallbacks or unknowns: " + join(fallbacks);
  if (others) v += "; " + std::to_string(others) + " other error" + (others == 1 ? "" : "s") + " in the checkpoint";
  if (l.capability == 0) v += " (no --gpu: the GPU rules were not run)";
  return v;
}

}  // namespace ws::val::engines
