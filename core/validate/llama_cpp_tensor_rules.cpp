#include "core/validate/llama_cpp_tensor_rules.h"

#include <set>
#include <string>
#include <string_view>

#include "core/validate/engines/engine_tables.h"

namespace ws::val {

namespace {

std::set<std::string, std::less<>> words(std::string_view list) {
  std::set<std::string, std::less<>> out;
  for (size_t at = 0; at < list.size();) {
    const size_t end = std::min(list.find(' ', at), list.size());
    if (end > at) out.emplace(list.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The name as LLM_TENSOR_NAMES writes it: each all-digit component (a block, an expert) as "%d".
std::string pattern(std::string_view name) {
  std::string out;
  for (size_t at = 0; at <= name.size();) {
    const size_t end = std::min(name.find('.', at), name.size());
    const std::string_view part = name.substr(at, end - at);
    const bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string_view::npos;
    out += digits ? std::string("%d") : std::string(part);
    if (end < name.size()) out += '.';
    at = end + 1;
  }
  return out;
}

const engines::LlamaCppTensorRow* rowOf(std::string_view architecture) {
  for (const auto& row : engines::llamaCppTensors())
    if (row.architecture == architecture) return &row;
  return nullptr;
}

}  // namespace

// llama.cpp builds a model by asking for each tensor its class's load_arch_tensors names: one it
// asks for with no flags and no condition and the file lacks stops the load ("missing tensor",
// llama_model_loader::create_tensor); at the end every tensor of the file must have been asked for
// (llama_model_loader::done_getting_tensors: "wrong number of tensors"), so one whose name the
// class never asks for stops it too. Model files whose blocks are all here only (WS-R007's files;
// a missing split is another rule's), and architectures whose class the table knows.
void llamaCppTensorRules(const Checkpoint& c, Sink& sink) {
  if (c.format != "gguf" || c.files.empty() || c.incomplete || !c.unreadable.empty()) return;
  const MetaEntry* type = c.findMeta("general.type");
  if (type && type->value == MetaScalar(std::string("adapter"))) return;
  bool blocks = false;
  for (const auto& t : c.tensors) blocks |= t.layer >= 0;
  const engines::LlamaCppTensorRow* row = rowOf(c.model.architecture);
  if (!blocks || !row) return;
  const std::string llama = "llama.cpp " + std::string(engines::kLlamaCppCommit);
  const std::string where = " (" + std::string(row->source) + " load_arch_tensors)";

  std::set<std::string, std::less<>> present;
  for (const auto& t : c.tensors) present.insert(t.name);
  FindingGroup missing;
  for (const auto& name : words(row->required))
    if (!present.count(name)) missing.add(name);
  for (int64_t layer = 0; layer < c.model.numLayers; ++layer)
    for (const auto& p : words(row->requiredPerLayer)) {
      std::string inLayer = p;
      inLayer.replace(inLayer.find("%d"), 2, std::to_string(layer));
      if (!present.count(inLayer)) missing.add(inLayer);
    }
  missing.report(sink, "WS-R008", "tensors a " + c.model.architecture + " model requires are missing" + where + ": " + llama + " stops at the first, 'missing tensor'");

  const auto consumed = words(row->consumed), generic = words(engines::kLlamaCppGenericTensors);
  FindingGroup unused;
  for (const auto& t : c.tensors) {
    const std::string p = pattern(t.name);
    if (!consumed.count(p) && !generic.count(p)) unused.add(t.name);
  }
  unused.report(sink, "WS-R008", "tensors a " + c.model.architecture + " model never creates" + where + ": " + llama +
                                     " counts them against the file, 'done_getting_tensors: wrong number of tensors'");
}

}  // namespace ws::val
