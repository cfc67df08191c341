// The activation and KV-cache scales: input_scale and input_global_scale on quantized linear
// layers, k_scale / v_scale (and q_scale, prob_scale, kv_scale) on attention layers. Engines
// multiply activations by them at every step, so one NaN or zero scale - what a calibration that
// routed no token to an expert leaves behind (llm-compressor PR #2826) - corrupts every token.
#pragma once

#include "core/model/checkpoint.h"
#include "core/validate/sink.h"

namespace ws::val {

// The values family: each stored activation or KV scale under WS-V001..V005, and each against its
// peers (the same kind and projection among one layer's experts) under WS-V007 / WS-V011. Reads
// only those tensors (fetched first when remote): a local read that fails is WS-I024 on its
// tensor; a remote fetch that fails throws CoreError, as the rest of the value pass does.
void activationScaleValueRules(const Checkpoint& c, Sink& sink);

// The completeness family: what the quantization config declares against what is stored.
// WS-C011: static activation scales declared, a quantized linear weight without its input scale;
// WS-C012: dynamic activations declared, input scales stored; WS-C013: a quantized KV cache
// declared, an attention layer without its k_scale and v_scale.
void activationScaleDeclarationRules(const Checkpoint& c, Sink& sink);

}  // namespace ws::val
