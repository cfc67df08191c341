#include "core/validate/ignore_list_rules.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
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


// The other writers' lists, matched as vLLM 0.11.0 matches them (model_executor/layers/quantization;
// a module name here is the checkpoint's, which vLLM's equals outside fused and renamed layers):
// - fp8 ignored_layers (quant_utils.is_layer_skipped): the exact name; an expert by its MoE layer's
//   prefix ("...mlp.experts") inside an entry that names experts;
// - awq modules_to_not_convert (awq.is_layer_skipped_awq): an entry inside the name (the MoE layer's
//   prefix for an expert, awq_marlin);
// - bitsandbytes llm_int8_skip_modules (is_layer_skipped_bnb): an entry equal to one dotted part of
//   the name or to a leading run of them; experts never (FusedMoE is always quantized);
// - ModelOpt exclude_modules (modelopt.py): FP8 - the exact name, else an entry inside it (also past
//   a "language_model." prefix); NVFP4 - the exact name, else an entry with '*' or '.' as a pattern
//   ('*' any run) over the whole name; experts: how the list applies is unknown, not judged;
// - GPTQ (gptq_utils): quantized when an entry of modules_in_block_to_quantize is inside the name
//   (an empty list: what the tensors say, vLLM fills it from their dtypes) and no dynamic "-:" pattern
//   matches from the start.
// A router and lm_head are unquantized in vLLM whatever the list says (ReplicatedLinear without a
// quant config; ParallelLMHead is an embedding), so only their quantized forms are judged.
enum class Lister { Fp8, Awq, Bnb, ModelOptFp8, ModelOptNvfp4, Gptq, None };

Lister listerOf(const QuantConfig& q) {
  if (q.method == "fp8") return Lister::Fp8;
  if (q.method == "awq") return Lister::Awq;
  if (q.method == "bitsandbytes") return Lister::Bnb;
  if (q.method == "gptq") return Lister::Gptq;
  if (q.method == "modelopt") return q.algo == "NVFP4" || q.algo == "nvfp4" ? Lister::ModelOptNvfp4 : Lister::ModelOptFp8;
  return Lister::None;
}

// "model.layers.1.mlp.experts.3.gate_proj" -> "model.layers.1.mlp.experts": the FusedMoE layer's prefix.
std::string moeLayerOf(const std::string& module) {
  const size_t at = module.find(".experts");
  return at == std::string::npos ? module : module.substr(0, at + 8);
}

// ModelOpt NVFP4's pattern: '.' literal, '*' any run, over the whole name.
bool wildcardMatch(const std::string& pattern, const std::string& name) {
  std::string re;
  for (char ch : pattern) {
    if (ch == '*') re += ".*";
    else if (std::string_view("\\^$.|?+()[]{}").find(ch) != std::string_view::npos) re += '\\', re += ch;
    else re += ch;
  }
  try {
    return std::regex_match(name, std::regex(re));
  } catch (const std::regex_error&) {
    return false;
  }
}

// Whether entry `e` of the list leaves `module` unquantized (for GPTQ: quantizes it). nullopt: not
// judged (how the list applies there is unknown).
std::optional<bool> entryApplies(Lister w, const std::string& e, const std::string& module, bool expert) {
  switch (w) {
    case Lister::Fp8:
      if (expert) return e.find("experts") != std::string::npos && e.find(moeLayerOf(module)) != std::string::npos;
      return e == module;
    case Lister::Awq: return (expert ? moeLayerOf(module) : module).find(e) != std::string::npos;
    case Lister::Bnb: {
      if (expert) return false;
      size_t start = 0;
      while (true) {
        const size_t dot = module.find('.', start);
        if (module.compare(start, dot == std::string::npos ? std::string::npos : dot - start, e) == 0) return true;  // one part
        if (dot == std::string::npos) return false;
        if (module.compare(0, dot, e) == 0) return true;  // a leading run of parts
        start = dot + 1;
      }
    }
    case Lister::ModelOptFp8: {
      if (expert) return std::nullopt;
      if (e == module) return true;
      const std::string inner = module.rfind("language_model.", 0) == 0 ? module.substr(15) : std::string{};
      return module.find(e) != std::string::npos || (!inner.empty() && inner.find(e) != std::string::npos);
    }
    case Lister::ModelOptNvfp4:
      if (expert) return std::nullopt;
      return e == module || (e.find_first_of("*.") != std::string::npos && wildcardMatch(e, module));
    case Lister::Gptq: return (expert ? moeLayerOf(module) : module).find(e) != std::string::npos;
    case Lister::None: break;
  }
  return std::nullopt;
}

void otherWritersLists(const Checkpoint& c, Sink& sink) {
  const QuantConfig& q = c.model.quant;
  const Lister w = listerOf(q);
  if (w == Lister::None) return;
  const std::vector<std::string>& list = w == Lister::Gptq ? q.gptqIncluded : q.excluded;
  std::vector<std::optional<std::regex>> skips;  // GPTQ dynamic "-:" patterns, re.match
  for (const auto& p : q.gptqDynamicSkips) {
    try {
      skips.emplace_back(std::regex(p));
    } catch (const std::regex_error&) {
      skips.emplace_back(std::nullopt);
    }
  }
  // Judge unquantized modules only where the engine would quantize them from the config alone: not
  // for GPTQ or AWQ without a list (vLLM derives GPTQ's from the dtypes; newer vLLM AWQ's too).
  const bool judgeUnquantized = !((w == Lister::Gptq || w == Lister::Awq) && list.empty());
  std::vector<bool> used(list.size(), false), skipUsed(skips.size(), false);
  FindingGroup quantizedExcluded, plainIncluded;
  // The shards vLLM fuses into one layer (packed_modules_mapping: qkv_proj, gate_up_proj) must be
  // left out together: is_layer_skipped raises "some but not all shards ... are quantized" (FP8,
  // ModelOpt), is_layer_gptq_quantized the same (GPTQ).
  const bool fusedMustAgree = w == Lister::Fp8 || w == Lister::ModelOptFp8 || w == Lister::ModelOptNvfp4 || w == Lister::Gptq;
  std::map<std::string, std::pair<int, int>> fused;  // "parent.qkv_proj" -> (shards excluded, shards)
  bool anyQuantized = false;
  for (const auto& l : c.logical) anyQuantized |= l.weight >= 0 && schemeInfo(l.scheme).quantized;
  if (!anyQuantized) return;
  struct Judged {
    const LogicalTensor* l;
    bool excluded;
    std::string fusedLayer;  // the layer vLLM fuses it into, or empty
  };
  std::vector<Judged> judged;
  for (const auto& l : c.logical) {
    if (!isLinearModule(c, l) || c.isCut(l)) continue;
    const bool expert = c.tensors[uint32_t(l.weight)].role == Role::RoutedExpert;
    bool matched = false, unknown = false;
    for (size_t k = 0; k < list.size(); ++k) {
      const auto applies = entryApplies(w, list[k], l.name, expert);
      if (!applies) unknown = true;
      else if (*applies) matched = true, used[k] = true;
    }
    if (unknown) continue;
    bool skipped = false;
    for (size_t k = 0; k < skips.size(); ++k)
      if (skips[k] && std::regex_search(expert ? moeLayerOf(l.name) : l.name, *skips[k], std::regex_constants::match_continuous)) skipped = true, skipUsed[k] = true;
    Judged j{&l, w == Lister::Gptq ? skipped || (!list.empty() && !matched) : matched, {}};
    if (fusedMustAgree && !expert)
      for (const auto& [shards, into] : {std::pair<std::array<const char*, 3>, const char*>{{".q_proj", ".k_proj", ".v_proj"}, ".qkv_proj"},
                                         {{".gate_proj", ".up_proj", nullptr}, ".gate_up_proj"}})
        for (const char* shard : shards)
          if (shard && l.name.ends_with(shard)) {
            j.fusedLayer = l.name.substr(0, l.name.size() - std::strlen(shard)) + into;
            auto& [out, all] = fused[j.fusedLayer];
            out += j.excluded, ++all;
          }
    judged.push_back(std::move(j));
  }
  for (const Judged& j : judged) {
    // Shards that disagree are one finding, the refusal, below.
    if (!j.fusedLayer.empty() && fused[j.fusedLayer].first && fused[j.fusedLayer].first < fused[j.fusedLayer].second) continue;
    const TensorRecord& weight = c.tensors[uint32_t(j.l->weight)];
    const bool quantized = schemeInfo(j.l->scheme).quantized;
    const bool alwaysPlain = weight.role == Role::Router || weight.role == Role::LmHead;
    if (quantized && j.excluded && !alwaysPlain) quantizedExcluded.add(weight.name);
    else if (!quantized && !j.excluded && !alwaysPlain && judgeUnquantized) plainIncluded.add(weight.name);
  }
  const std::string where = q.listKey.empty() ? (q.source.empty() ? std::string("the quantization config") : q.source) : q.listKey;
  quantizedExcluded.report(sink, "WS-S009", "quantized weights whose module " + where + " leaves unquantized (vLLM 0.11.0 loads them as unquantized and misreads them)");
  plainIncluded.report(sink, "WS-S009", "unquantized weights whose module vLLM 0.11.0 quantizes by " + where + " (not excluded): it expects their scales");
  for (const auto& [layer, counts] : fused)
    if (counts.first && counts.first < counts.second)
      sink.add("WS-S009", std::to_string(counts.first) + " of the " + std::to_string(counts.second) + " shards vLLM fuses into " + layer + " are left unquantized by " + where +
                              ": vLLM 0.11.0 refuses the load (\"some but not all shards of " + layer + " are quantized\")", layer, where);
  for (size_t k = 0; k < list.size(); ++k)
    if (!used[k]) sink.add("WS-S010", "entry \"" + list[k] + "\" of " + where + " matches no module of the checkpoint (written for another naming?)", {}, where);
  for (size_t k = 0; k < skips.size(); ++k)
    if (!skipUsed[k]) sink.add("WS-S010", "dynamic entry \"-:" + q.gptqDynamicSkips[k] + "\" of " + where + " matches no module of the checkpoint", {}, where);
}

}  // namespace

void ignoreListRules(const Checkpoint& c, Sink& sink) {
  const QuantConfig& q = c.model.quant;
  if (q.method != "compressed-tensors") return otherWritersLists(c, sink);
  if (q.groups.empty()) return;
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
