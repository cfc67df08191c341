// The quantization config's own list of what it quantizes, held to the tensors: compressed-tensors'
// config groups (targets) and its ignore list decide, module by module, whether a linear weight is
// stored quantized. An ignore list written in another naming than the checkpoint's matches nothing
// and leaves modules quantized that the writer meant to keep (vllm#45102, sglang#36596); a module
// quantized against the list, or left unquantized outside it, is misread by a loader that follows
// the config.
#pragma once

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val {

// WS-S009: a linear weight stored quantized where the config leaves it out (ignored, or targeted by
// no group), or stored unquantized where the config quantizes it; WS-S010: an ignore entry that
// matches no module of the checkpoint. compressed-tensors configs only: other writers' lists
// (ModelOpt exclude_modules, FP8 ignored_layers, modules_to_not_convert) are matched by each
// engine its own way, which is not settled here.
void ignoreListRules(const Checkpoint& c, Sink& sink);

}  // namespace ws::val
