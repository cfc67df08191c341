#include "core/validate/metadata_rules.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "core/formats/gguf.h"
#include "core/validate/chat_template_rule.h"
#include "core/formats/special_tokens.h"
#include "core/formats/tokenizer_info.h"
#include "core/formats/utf8.h"
#include "core/io/text_file.h"

namespace ws::val {

namespace {

namespace fs = std::filesystem;

const TensorRecord* firstOfRole(const Checkpoint& c, Role role) {
  for (const auto& t : c.tensors)
    if (t.role == role && t.component == Component::Weight && !t.shape.empty()) return &t;
  return nullptr;
}

bool looksLikeChatModel(const std::string& name) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  return n.find("instruct") != std::string::npos || n.find("chat") != std::string::npos || n.find("-it") != std::string::npos;
}

std::string modelName(const Checkpoint& c) {
  for (const auto& e : c.meta)
    if (e.key == "general.name")
      if (auto* s = std::get_if<std::string>(&e.value)) return *s;
  if (c.format == "gguf") return {};
  try {
    const auto j = nlohmann::json::parse(readTextFile((fs::path(sideFolder(c)) / "config.json").string()));
    if (j.is_object() && j.contains("_name_or_path") && j["_name_or_path"].is_string()) return j["_name_or_path"].get<std::string>();
  } catch (const std::exception&) {
  }
  return {};
}

void utf8Rule(const Checkpoint& c, Sink& sink) {
  for (const auto& e : c.meta) {
    if (e.file < 0 || size_t(e.file) >= c.files.size()) continue;
    const std::string& path = c.files[size_t(e.file)].path;
    if (auto* s = std::get_if<std::string>(&e.value); s && !isValidUtf8(*s)) {
      Finding f = makeFinding("WS-M004", "'" + e.key + "' holds bytes that are not UTF-8 (at byte " + std::to_string(firstInvalidUtf8(*s)) + " of its value)", {}, path);
      f.offset = e.offset;
      sink.add(std::move(f));
    }
    if (e.type != "ARRAY" || e.elementType != "STRING" || !c.files[size_t(e.file)].map) continue;
    auto a = GgufArray::open(c.files[size_t(e.file)].map->bytes(), path, e);
    if (!a) continue;
    for (uint64_t i = 0; i < a.value().size(); ++i) {
      const MetaScalar v = a.value().at(i);
      if (auto* s = std::get_if<std::string>(&v); s && !isValidUtf8(*s)) {
        Finding f = makeFinding("WS-M004", "element " + std::to_string(i) + " of '" + e.key + "' holds bytes that are not UTF-8", {}, path);
        f.offset = e.offset;
        sink.add(std::move(f));
        break;  // one finding per key
      }
    }
  }
}

// WS-M005 / WS-M006: the keys a runtime builds the model from, against the tensors. llama.cpp's
// loader (llama-model.cpp load_hparams) requires context_length, embedding_length and block_count
// (M006, a warning: gguf-py and other readers take the file without them), loads only
// blk.0 .. blk.(block_count-1), and asserts 0 < expert_used_count <= expert_count when the model
// has experts; transformers' routers take the top num_experts_per_tok of num_experts (M005).
void modelKeysRule(const Checkpoint& c, Sink& sink) {
  const ModelDescription& m = c.model;
  int64_t lastLayer = -1;
  const TensorRecord* expertTensor = nullptr;
  for (const auto& t : c.tensors) {
    lastLayer = std::max<int64_t>(lastLayer, t.layer);
    if (!expertTensor && t.role == Role::RoutedExpert) expertTensor = &t;
  }
  const bool gguf = c.format == "gguf";
  if (gguf && lastLayer >= 0) {  // a file of blocks: a model, not a vocabulary or a bag of tensors
    const std::string arch = m.architecture;
    const std::string& file = c.files.front().path;
    for (const char* key : {"context_length", "embedding_length", "block_count"})
      if (!c.findMeta(arch + "." + key))
        sink.add("WS-M006", "'" + arch + "." + key + "' is missing; llama.cpp requires it to build a " + arch + " model", {}, file);
    if (const MetaEntry* blocks = c.findMeta(arch + ".block_count"); blocks && m.numLayers >= 0) {
      const int64_t declared = m.numLayers + int64_t(m.mtpLayers.size());
      for (const auto& t : c.tensors)
        if (t.layer >= declared) {  // one finding: the key, not each tensor, is wrong
          sink.add("WS-M005", "'" + t.name + "' is in block " + std::to_string(t.layer) + ", past the " + std::to_string(declared) + " blocks '" + blocks->key +
                                  "' declares; llama.cpp never loads it",
                   t.name, file);
          break;
        }
    }
  }
  if (!expertTensor) return;
  const std::string used = gguf ? "'" + m.architecture + ".expert_used_count'" : "num_experts_per_tok";
  if (gguf && m.numExperts <= 0)
    sink.add("WS-M005", "the file holds routed experts but '" + m.architecture + ".expert_count' is missing or 0", expertTensor->name);
  else if (gguf && m.expertsPerToken <= 0)
    sink.add("WS-M005", used + " is missing or 0: a router with experts must pick at least one", expertTensor->name);
  else if (m.numExperts > 0 && m.expertsPerToken > m.numExperts)  // HF configs without the key leave it unknown (-1)
    sink.add("WS-M005", used + " is " + std::to_string(m.expertsPerToken) + ", more than the " + std::to_string(m.numExperts) + " experts a layer has",
             expertTensor->name);
}


// WS-M007: the files of a checkpoint giving the same special token role ids that have none in
// common. What each engine stops on: llama.cpp the GGUF's end-of-generation ids; vLLM 0.11.0 the
// tokenizer's eos_token_id and generation_config's eos_token_id ids (v1/engine/processor.py,
// SamplingParams.update_from_generation_config; config.json's only without a
// generation_config.json: transformers_utils/config.py try_get_generation_config); transformers'
// generate generation_config's. So config.json against the tokenizer is left out where a
// generation_config.json stands between them (Qwen2.5-Instruct's config.json keeps the base
// model's <|endoftext|>, its generation_config lists both). pad is left out: an unused pad id
// disagreeing stops nothing. `texts`: token texts by id, the GGUF's first for its own ids.
void specialTokenAgreementRule(const std::vector<SpecialTokenSource>& sources, const std::map<int64_t, std::string>& ggufTexts,
                               const std::map<int64_t, std::string>& hfTexts, Sink& sink) {
  bool haveGeneration = false;
  for (const auto& s : sources) haveGeneration |= s.name == "generation_config.json";
  auto said = [&](const SpecialTokenSource& s, const std::set<int64_t>& ids) {
    std::string out;
    for (int64_t id : ids) {
      out += (out.empty() ? "" : ", ") + std::to_string(id);
      for (const auto* texts : {s.gguf ? &ggufTexts : &hfTexts, s.gguf ? &hfTexts : &ggufTexts})
        if (auto it = texts->find(id); it != texts->end()) {
          out += " '" + it->second + "'";
          break;
        }
    }
    return out;
  };
  auto isPair = [](const SpecialTokenSource& a, const SpecialTokenSource& b, const char* x, const char* y) {
    return (a.name == x && b.name == y) || (a.name == y && b.name == x);
  };
  for (const char* role : {"bos", "eos"})
    for (size_t i = 0; i < sources.size(); ++i)
      for (size_t j = i + 1; j < sources.size(); ++j) {
        const SpecialTokenSource &a = sources[i], &b = sources[j];
        if (haveGeneration && isPair(a, b, "config.json", "tokenizer_config.json")) continue;
        auto ia = a.ids.find(role), ib = b.ids.find(role);
        if (ia == a.ids.end() || ib == b.ids.end()) continue;
        bool common = false;
        for (int64_t id : ia->second) common |= ib->second.count(id) > 0;
        if (!common)
          sink.add("WS-M007", std::string(role) + ": " + a.name + " gives " + said(a, ia->second) + ", " + b.name + " gives " + said(b, ib->second) + " - none in common",
                   {}, a.file);
      }
}

}  // namespace

void metadataRules(const Checkpoint& c, Sink& sink) {
  utf8Rule(c, sink);
  modelKeysRule(c, sink);
  // Each side file read once: the configs' ids, then the tokenizer with those ids' texts.
  const fs::path folder = sideFolder(c);
  std::vector<SpecialTokenSource> configs = configTokenSources(folder.string());
  std::set<int64_t> wanted;
  for (const auto& s : configs)
    for (const auto& [role, ids] : s.ids) wanted.insert(ids.begin(), ids.end());
  const TokenizerInfo tok = tokenizerInfo(c, wanted);
  const TensorRecord* embed = firstOfRole(c, Role::Embedding);
  const TensorRecord* head = firstOfRole(c, Role::LmHead);
  const bool gguf = c.format == "gguf";
  // WS-M001: GGUF needs exactly as many tokens as rows (llama.cpp checks token_embd against
  // n_vocab); an HF table may be padded past the vocabulary, never short of it.
  if (tok.present && tok.vocabSize) {
    std::string tables, first;  // one finding for the checkpoint, on the first table that does not fit
    for (const TensorRecord* t : {embed, head}) {
      if (!t || (gguf ? t->shape[0] == tok.vocabSize : t->shape[0] >= tok.vocabSize)) continue;
      tables += (tables.empty() ? "" : ", ") + t->name + " has " + std::to_string(t->shape[0]) + " rows";
      if (first.empty()) first = t->name;
    }
    if (!first.empty()) sink.add("WS-M001", "the tokenizer has " + std::to_string(tok.vocabSize) + " tokens (" + tok.source + "); " + tables, first);
  }
  // WS-M002: special ids against the vocabulary and the table they index.
  const uint64_t rows = embed ? embed->shape[0] : 0;
  auto check = [&](const std::string& what, int64_t id) {
    const uint64_t limit = gguf && tok.vocabSize ? std::min<uint64_t>(tok.vocabSize, rows ? rows : UINT64_MAX) : rows;
    if (id >= 0 && limit && uint64_t(id) >= limit)
      sink.add("WS-M002", what + " is " + std::to_string(id) + ", past the " + std::to_string(limit) + (gguf && tok.vocabSize ? " tokens" : " embedding rows"),
               embed ? embed->name : std::string());
  };
  if (gguf) {
    for (const auto& s : tok.special) check("tokenizer " + s.role + " token id", s.id);
  } else if (embed) {
    for (const auto& s : configs)
      for (const auto& [role, ids] : s.ids)
        for (int64_t id : ids) check(s.name + " " + role + "_token_id", id);
  }
  // WS-M007: the GGUF (with the HF tokenizer beside it, if any), the HF tokenizer, the configs.
  std::vector<SpecialTokenSource> sources;
  TokenizerInfo hfBeside;
  if (gguf) {
    for (const auto& s : tok.special) wanted.insert(s.id);
    hfBeside = hfTokenizerInfo(folder.string(), wanted);
    if (!c.files.empty())  // a GGUF that could not be opened has none
      sources.push_back(tokenizerTokenSource(tok, c.files.front().path, fs::path(c.files.front().path).filename().string(), true));
  }
  const TokenizerInfo& hf = gguf ? hfBeside : tok;
  sources.push_back(tokenizerTokenSource(hf, (folder / "tokenizer_config.json").string(), "tokenizer_config.json", false));
  sources.insert(sources.end(), configs.begin(), configs.end());
  std::erase_if(sources, [](const SpecialTokenSource& s) { return s.ids.empty(); });
  specialTokenAgreementRule(sources, gguf ? tok.texts : std::map<int64_t, std::string>{}, hf.texts, sink);
  chatTemplateRule(c, sink);
  // WS-M003: a chat model without a template.
  if (tok.present && tok.chatTemplates.empty()) {
    const std::string name = modelName(c);
    if (looksLikeChatModel(name))
      sink.add("WS-M003", "'" + name + "' reads as a chat model, and its tokenizer (" + tok.source + ") has no chat template", {},
               gguf ? c.files.front().path : (fs::path(sideFolder(c)) / tok.source).string());
  }
}

}  // namespace ws::val
