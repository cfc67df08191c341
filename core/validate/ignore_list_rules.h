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
// no group), or stored unquantized where the config quantizes it, or (FP8, ModelOpt, GPTQ) the
// shards vLLM fuses into qkv_proj / gate_up_proj left out unevenly; WS-S010: a list entry that
// matches no module of the checkpoint. compressed-tensors' targets and ignore as compressed-tensors
// matches them; the other writers' lists (FP8 ignored_layers / modules_to_not_convert, AWQ
// modules_to_not_convert, bitsandbytes llm_int8_skip_modules, ModelOpt exclude_modules, GPTQ
// modules_in_block_to_quantize and dynamic "-:") as vLLM 0.11.0 matches each (the .cpp says how).
void ignoreListRules(const Checkpoint& c, Sink& sink);

}  // namespace ws::val
