#include "core/validate/engines/engine_layout.h"

#include <algorithm>
#include <regex>

#include "core/plan/devices.h"

namespace ws::val::engines {

std::string EngineLayout::describe() const {
  std::string s = "TP " + std::to_string(tp);
  if (dp > 1) s += " x DP " + std::to_string(dp);
  if (ep > 1) s += ", EP " + std::to_string(ep);
  s += gpu.empty() ? " on an unnamed GPU" : " on " + gpu + " (" + plan::capabilityName(capability) + ")";
  return s;
}

std::optional<std::string> layoutForPlan(const std::string& engine, int ep, int tp, EngineLayout& l) {
  if (ep < 1 || tp < 1) return "--ep and --tp must be at least 1";
  if (engine == "vllm") {
    if (ep > 1 && ep % tp) return "--ep " + std::to_string(ep) + " is not TP x DP for --tp " + std::to_string(tp) + ": vLLM cannot form it";
    l.tp = tp, l.ep = ep, l.dp = ep > 1 ? ep / tp : 1;
  } else {
    const int world = std::max(ep, tp);
    if (world % tp) return "SGLang's attention DP would be " + std::to_string(world) + " / " + std::to_string(tp) + ": not whole";
    l.tp = world, l.ep = ep, l.dp = world / tp;
  }
  return std::nullopt;
}

std::optional<std::string> resolveGpu(EngineLayout& l) {
  if (l.gpu.empty()) return std::nullopt;
  if (const plan::DeviceSpec* d = plan::findDevice(l.gpu)) {
    l.capability = d->computeCapability;
    return std::nullopt;
  }
  std::smatch m;
  if (std::regex_match(l.gpu, m, std::regex(R"((?:sm_?|SM ?)(\d{2,3}))")) || std::regex_match(l.gpu, m, std::regex(R"((\d{1,2})\.(\d))"))) {
    l.capability = m.size() == 3 && m[2].matched ? std::stoi(m[1]) * 10 + std::stoi(m[2]) : std::stoi(m[1]);
    return std::nullopt;
  }
  std::string known;
  for (const auto& d : plan::deviceTable()) known += (known.empty() ? "" : ", ") + std::string(d.name);
  return "unknown GPU '" + l.gpu + "' (known: " + known + "; or a compute capability such as sm_90 or 8.9)";
}

std::optional<std::string> layoutProblem(const std::string& engine, const EngineLayout& l, const ModelDescription& m) {
  if (l.tp < 1 || l.dp < 1 || l.ep < 1) return "--tp, --dp and --ep must be at least 1";
  const int64_t heads = m.attention.numHeads;
  if (heads > 0 && l.tp > heads)
    return "--tp " + std::to_string(l.tp) + " is larger than the model's " + std::to_string(heads) + " attention heads: no rank would hold a head";
  if (l.ep > 1 && m.numExperts == 0) return "--ep " + std::to_string(l.ep) + " on a model without routed experts";
  if (engine == "vllm" && l.ep > 1 && l.ep != l.tp * l.dp)
    return "vLLM splits experts over all TP x DP = " + std::to_string(l.tp * l.dp) + " ranks when expert parallelism is on (--enable-expert-parallel); --ep " +
           std::to_string(l.ep) + " is not a layout it forms";
  if (engine == "sglang") {
    if (l.tp % l.ep) return "SGLang's --ep-size must divide --tp-size (" + std::to_string(l.tp) + "); --ep " + std::to_string(l.ep) + " does not";
    if (l.tp % l.dp) return "SGLang's --attn-dp-size must divide --tp-size (" + std::to_string(l.tp) + "); --dp " + std::to_string(l.dp) + " does not";
  }
  return std::nullopt;
}

}  // namespace ws::val::engines
