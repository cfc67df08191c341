// WS-M008: a GGUF's chat templates against those of the HF files beside it, which an engine
// serving the GGUF with its HF tokenizer applies (vLLM serves a GGUF so), where llama.cpp applies
// the GGUF's own.
#pragma once

#include <map>
#include <string>

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val {

// The HF folder's chat templates by name ("default" for a lone one), as llama.cpp's converter
// takes them (gguf-py/gguf/vocab.py SpecialVocab._try_load_from_tokenizer_json at 0c1e57098):
// tokenizer_config.json's chat_template (a string, or a list of {name, template}); without one,
// chat_template.jinja (with additional_chat_templates/*.jinja by stem), else chat_template.json's.
// `from` gets the file they came from; empty when the folder has none.
std::map<std::string, std::string> hfChatTemplates(const std::string& folder, std::string& from);

void chatTemplateRule(const Checkpoint& c, Sink& sink);

}  // namespace ws::val
