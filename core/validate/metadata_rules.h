// The metadata family: the tokenizer and the special token ids against the embedding the tensors
// hold, a chat model without a chat template, metadata strings that are not UTF-8.
#pragma once

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val {

void metadataRules(const Checkpoint& c, Sink& sink);

}  // namespace ws::val
