#include "core/validate/engines/quant_method.h"

namespace ws::val::engines {

namespace {

// Marlin's group sizes (marlin_utils.py MARLIN_SUPPORTED_GROUP_SIZES in both engines).
bool marlinGroup(int64_t g) { return g == -1 || g == 32 || g == 64 || g == 128; }

std::string compressedTensorsPath(const QuantGroup& g) {
  const bool acts = !g.activations.empty();
  if (g.type == "float" && g.bits == 8) return acts ? (g.strategy == "block" ? "ct-w8a8-fp8-block" : "ct-w8a8-fp8") : "ct-w8a16-fp8";
  if (g.type == "float" && g.bits == 4) return acts ? "ct-w4a4-nvfp4" : "ct-w4a16-nvfp4";
  if (g.type == "int" && g.bits == 8 && acts) return "ct-w8a8-int8";
  if (g.type == "int" && (g.bits == 4 || g.bits == 8) && !acts) return "ct-wna16";
  return {};
}

}  // namespace

std::vector<std::string> quantPathsOf(const ModelDescription& m, std::string* unknown) {
  const QuantConfig& q = m.quant;
  std::vector<std::string> out;
  auto add = [&](const std::string& p) {
    for (const auto& o : out)
      if (o == p) return;
    out.push_back(p);
  };
  auto notCovered = [&](const std::string& what) {
    if (unknown) *unknown = what;
    return std::vector<std::string>{};
  };
  if (q.method.empty() || q.method == "mlx") return out;
  if (q.method == "fp8") add("fp8");
  else if (q.method == "compressed-tensors") {
    for (const auto& g : q.groups) {
      const std::string p = compressedTensorsPath(g);
      if (p.empty()) return notCovered("compressed-tensors " + g.type + " " + std::to_string(g.bits) + "-bit " + g.strategy);
      add(p);
    }
  } else if (q.method == "modelopt") {
    if (q.algo == "FP8") add("modelopt-fp8");
    else if (q.algo == "NVFP4") add("modelopt-nvfp4");
    else return notCovered("modelopt " + q.algo);
  } else if (q.method == "mxfp4") {
    add("mxfp4");
  } else if (q.method == "awq") {
    // is_awq_marlin_compatible: bits, group_size and zero_point present, 4-bit with zero points.
    const bool marlin = q.declares("zero_point") && q.bits == 4 && !q.symmetric && marlinGroup(q.groupSize);
    add(marlin ? "awq-marlin" : "awq");
    if (m.numExperts > 0) add("awq-moe");
  } else if (q.method == "gptq") {
    // is_gptq_marlin_compatible: bits, group_size, sym and desc_act present; symmetric 4 or 8 bits.
    const bool keys = q.declares("bits") && q.declares("group_size") && q.declares("sym") && q.declares("desc_act");
    add(keys && q.symmetric && (q.bits == 4 || q.bits == 8) && marlinGroup(q.groupSize) ? "gptq-marlin" : "gptq");
  } else if (q.method == "bitsandbytes") {
    add(q.bits == 8 ? "bnb-8bit" : "bnb-4bit");
  } else {
    return notCovered(q.method);
  }
  return out;
}

}  // namespace ws::val::engines
