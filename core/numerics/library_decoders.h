// The decoders of the schemes that quantization libraries write into safetensors beside their
// own loaders: GPTQ (AutoGPTQ, GPTQModel, optimum), AWQ GEMM (AutoAWQ) and bitsandbytes (NF4, FP4,
// LLM.int8()). Each checks its companions against each other and the config, then decodes as the
// library's own dequantization does (docs/dequantization.md), rounding included.
#pragma once

#include <memory>

#include "core/model/checkpoint.h"
#include "core/numerics/dequant.h"

namespace ws::num {

// l.scheme is Gptq or Awq. Throws CoreError naming the tensor on companions that do not fit.
std::unique_ptr<RowDecoder> makeGptqAwqDecoder(const Checkpoint& c, const LogicalTensor& l);
// l.scheme is BnbNf4 or BnbFp4.
std::unique_ptr<RowDecoder> makeBnb4Decoder(const Checkpoint& c, const LogicalTensor& l);
// l.scheme is BnbInt8.
std::unique_ptr<RowDecoder> makeInt8RowsDecoder(const Checkpoint& c, const LogicalTensor& l);

}  // namespace ws::num
