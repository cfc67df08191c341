#include "core/validate/ignore_list_rules.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "core/model/quant_scheme.h"

namespace ws::val {

namespace {

// One entry of a targets or ignore list against a module name, as compressed-tensors and vLLM
// match them (vLLM compressed_tensors/utils.py _is_equal_or_regex_match, commit aff237f): "re:"
// followed by a Python regular expression matched at the start of the name (re.match), else the
// exact name. `linear`: the module is a linear layer, which a class-name target matches when the
// target is part of its class name, case folded ("Linear" - find_matched_target's check_contains).
bool entryMatches(const std::string& entry, const std::string& module, bool linear, bool classNames) {
  if (entry.rfind("re:", 0) == 0) {
    try {
      return std::regex_search(module, std::regex(entry.substr(3)), std::regex_constants::match_continuous);
    } catch (const std::regex_error&) {
      return false;  // a pattern std::regex cannot read is matched by nothing here
    }
  }
  if (entry == module) return true;
  if (!classNames || !linear) return false;
  std::string lower = entry;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  return std::string("linear").find(lower) != std::string::npos;
}

// The linear layers a compressed-tensors config can quantize: per-module 2-D weights of the text
// model. Stacked or fused expert tensors are parameters, not modules; vision towers and MTP layers
// are left out, since how their names map is the engine's, not settled by the config.
bool isLinearModule(const Checkpoint& c, const LogicalTensor& l) {
  if (l.weight < 0) return false;
  const TensorRecord& w = c.tensors[uint32_t(l.weight)];
  if (w.layout != Layout::None || w.ggmlOrder || w.shape.size() != 2) return false;
  switch (w.role) {
    case Role::Attention: case Role::DenseMlp: case Role::Router: case Role::RoutedExpert: case Role::SharedExpert: case Role::LmHead:
      return true;
    default:
      return false;
  }
}

// Whether a class-name target ("Linear") covers the module: a router is an nn.Linear in some
// families (Qwen3-MoE) and a module of its own in others (DeepSeek's MoEGate), so only a name or
// pattern targets it here.
bool classTargetsApply(const Checkpoint& c, const LogicalTensor& l) { return c.tensors[uint32_t(l.weight)].role != Role::Router; }

}  // namespace

void ignoreListRules(const Checkpoint& c, Sink& sink) {
  const QuantConfig& q = c.model.quant;
  if (q.method != "compressed-tensors" || q.groups.empty()) return;
  std::vector<std::string> targets;
  for (const auto& g : q.groups) targets.insert(targets.end(), g.targets.begin(), g.targets.end());
  if (targets.empty()) return;  // groups without targets: what they cover is not said
  std::set<std::string> used;
  FindingGroup quantizedIgnored, quantizedUntargeted, plainTargeted;
  for (const auto& l : c.logical) {
    if (!isLinearModule(c, l) || c.isCut(l)) continue;
    const std::string& module = l.name;
    bool ignored = false;
    for (const auto& e : q.ignore)
      if (entryMatches(e, module, true, false)) ignored = true, used.insert(e);
    // A router either way: quantized under "Linear" is not flagged, unquantized under it neither.
    auto targetedBy = [&](bool classes) { return std::any_of(targets.begin(), targets.end(), [&](const std::string& t) { return entryMatches(t, module, classes, true); }); };
    const bool mayBeTargeted = targetedBy(true), surelyTargeted = targetedBy(classTargetsApply(c, l));
    const bool quantized = schemeInfo(l.scheme).quantized;
    const std::string& weight = c.tensors[uint32_t(l.weight)].name;
    if (quantized && ignored) quantizedIgnored.add(weight);
    else if (quantized && !mayBeTargeted) quantizedUntargeted.add(weight);
    else if (!quantized && surelyTargeted && !ignored) plainTargeted.add(weight);
  }
  const std::string where = q.source.empty() ? std::string("the quantization config") : q.source;
  quantizedIgnored.report(sink, "WS-S009", "quantized weights whose module " + where + " lists under ignore (a loader that follows the config reads them as unquantized)");
  quantizedUntargeted.report(sink, "WS-S009", "quantized weights whose module no config group of " + where + " targets");
  plainTargeted.report(sink, "WS-S009", "unquantized weights whose module " + where + " quantizes (targeted by a config group, not under ignore): a loader that follows the config expects their scales");
  for (const auto& e : q.ignore)
    if (!used.count(e)) sink.add("WS-S010", "ignore entry \"" + e + "\" of " + where + " matches no module of the checkpoint (written for another naming?)", {}, where);
}

}  // namespace ws::val
