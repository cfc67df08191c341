// WS-R008: the tensors llama.cpp's model class for a GGUF's architecture creates, against the
// file's (core/validate/engines/llama_cpp_tensors.cpp, generated from llama.cpp's source).
#pragma once

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val {

void llamaCppTensorRules(const Checkpoint& c, Sink& sink);

}  // namespace ws::val
