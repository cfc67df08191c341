#include "core/validate/ignore_list_rules.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/model/quant_scheme.h"

namespace ws::val {

namespace {

// One entry of a targets or ignore list, as compressed-tensors and vLLM match it against a module
// name (vLLM compressed_tensors/utils.py _is_equal_or_regex_match, commit aff237f): "re:" followed
// by a Python regular expression matched at the start of the name (re.match), else the exact name;
// a target may also name a class, which covers a linear layer when it is part of "linear", case
// folded (find_matched_target's check_contains). Compiled once, matched against every module.
class ListEntry {
 public:
  explicit ListEntry(std::string text) : text_(std::move(text)) {
    if (text_.rfind("re:", 0) == 0) {
      try {
        re_ = std::regex(text_.substr(3));
      } catch (const std::regex_error&) {
        unreadable_ = true;  // a pattern std::regex cannot read is matched by nothing here
      }
      return;
    }
    std::string lower = text_;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    linearClass_ = std::string("linear").find(lower) != std::string::npos;
  }
  const std::string& text() const { return text_; }
  // `byClass`: whether a class-name entry may cover this module.
  bool matches(const std::string& module, bool byClass) const {
    if (re_) return std::regex_search(module, *re_, std::regex_constants::match_continuous);
    if (unreadable_) return false;
    return text_ == module || (byClass && linearClass_);
  }

 private:
  std::string text_;
  std::optional<std::regex> re_;
  bool unreadable_ = false, linearClass_ = false;
};

bool anyMatches(const std::vector<ListEntry>& list, const std::string& module, bool byClass) {
  return std::any_of(list.begin(), list.end(), [&](const ListEntry& e) { return e.matches(module, byClass); });
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
  std::vector<ListEntry> targets, ignore;
  for (const auto& g : q.groups)
    for (const auto& t : g.targets) targets.emplace_back(t);
  if (targets.empty()) return;  // groups without targets: what they cover is not said
  for (const auto& e : q.ignore) ignore.emplace_back(e);
  std::vector<bool> used(ignore.size(), false);
  FindingGroup quantizedIgnored, quantizedUntargeted, plainTargeted;
  for (const auto& l : c.logical) {
    if (!isLinearModule(c, l) || c.isCut(l)) continue;
    const std::string& module = l.name;
    bool ignored = false;
    for (size_t k = 0; k < ignore.size(); ++k)
      if (ignore[k].matches(module, false)) ignored = true, used[k] = true;
    // A router either way: quantized under "Linear" is not flagged, unquantized under it neither.
    const bool mayBeTargeted = anyMatches(targets, module, true), surelyTargeted = anyMatches(targets, module, classTargetsApply(c, l));
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
  for (size_t k = 0; k < ignore.size(); ++k)
    if (!used[k]) sink.add("WS-S010", "ignore entry \"" + ignore[k].text() + "\" of " + where + " matches no module of the checkpoint (written for another naming?)", {}, where);
}

}  // namespace ws::val
