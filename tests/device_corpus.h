// The real writers' checkpoints the device path is held to the CPU on, one row each: tst_gpu runs
// every kernel on each row's tensors on the GPU, and tst_decode_desc runs the same formulas and
// bodies over their grids on the CPU, so a row that cannot pass here is known before a device
// session is spent on it. Plain C++: tst_gpu has no Qt.
//
// Where a row lives decides what a device call must send (scripts/gpu-proof.sh --pack):
//  - carried: an entry of ../shared/fixtures, packed into gpu-carry. Only what the checked-in data
//    lacks: transformers' own FP8 block layout and ggml's own K-quants (the device tool sends at
//    most 64 MiB a call, and the GPU-proof issue keeps it under 48);
//  - tracked: a checked-in file or folder under tests/data, which every device call sends anyway.
#pragma once

#include <string_view>

namespace wstest {

struct DeviceCheckpoint {
  std::string_view path;  // under ../shared/fixtures when carried, else under tests/data
  bool carried;
  bool load;  // tst_gpu also loads it onto the device (EP 1 and 3, derived buffers, injected failures)
};

inline constexpr DeviceCheckpoint kDeviceCorpus[] = {
    {"hf/qwen3_moe_fp8", true, true},                        // transformers' FP8 block (weight_scale_inv)
    {"gguf/tiny-qwen3moe-kquants.gguf", true, true},         // ggml's K-quants, stacked experts
    {"compressed_tensors/source", false, true},              // transformers' BF16, what llmcompressor quantized
    {"compressed_tensors/w4a16", false, false},              // llmcompressor, one folder a scheme
    {"compressed_tensors/w4a16-asym", false, false},
    {"compressed_tensors/w4a16-g32-experts", false, true},
    {"compressed_tensors/w8a16", false, false},
    {"compressed_tensors/fp8-block", false, false},
    {"compressed_tensors/fp8-dynamic", false, false},
    {"compressed_tensors/nvfp4a16", false, false},
    {"compressed_tensors/mxfp4a16", false, false},
    {"llama_cpp/iquants/mixtral-iq1_s.gguf", false, false},  // llama-quantize's I-quants
    {"llama_cpp/iquants/mixtral-iq1_m.gguf", false, false},
    {"llama_cpp/iquants/mixtral-iq2_xxs.gguf", false, false},
    {"llama_cpp/iquants/mixtral-iq2_xs.gguf", false, false},
    {"llama_cpp/iquants/mixtral-iq2_s.gguf", false, false},
    {"llama_cpp/iquants/mixtral-iq3_xxs.gguf", false, false},
    {"llama_cpp/iquants/mixtral-iq3_s.gguf", false, false},
    {"llama_cpp/gpt-oss-q8_0.gguf", false, false},           // convert_hf_to_gguf's Q8_0
    {"llama_cpp/deepseek-v4-bf16.gguf", false, false},       // its MXFP4 experts
    {"ik_llama/ik-types.gguf", false, false},                // ik_llama.cpp's own types, _R4 / _R8 / _R16 included
    {"library_quant/gptq-2bit", false, false},               // GPTQModel, AutoAWQ, bitsandbytes
    {"library_quant/gptq-3bit", false, false},
    {"library_quant/gptq-4bit", false, true},
    {"library_quant/gptq-4bit-actorder", false, false},
    {"library_quant/gptq-4bit-v2", false, false},
    {"library_quant/gptq-8bit", false, false},
    {"library_quant/awq-gemm", false, false},
    {"library_quant/awq-gemv", false, false},
    {"library_quant/bnb-nf4", false, false},
    {"library_quant/bnb-nf4-nested", false, false},
    {"library_quant/bnb-fp4-nested-f16", false, false},
    {"library_quant/bnb-int8", false, false},
    {"deepseek_v4", false, true},                            // FP4 experts with E8M0 scales
};

// Pairs with the same tensor names, for diff on the device against diff on the CPU (tracked rows).
inline constexpr std::string_view kDeviceDiffPairs[][2] = {
    {"compressed_tensors/source", "compressed_tensors/fp8-block"},
    {"compressed_tensors/source", "compressed_tensors/nvfp4a16"},
    {"compressed_tensors/source", "compressed_tensors/w4a16-asym"},
};

}  // namespace wstest
