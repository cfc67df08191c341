// Which GPUs each engine runs each quantization on: refused below a minimum compute capability,
// a named fallback kernel between that and the native one. Read from the engines' code:
//   vLLM 0.11.0 (the PyPI wheel's vllm/ tree): the method's get_min_capability(), which
//     VllmConfig._get_quantization_config (vllm/config/__init__.py) holds the GPU to, and the
//     kernel choices in vllm/model_executor/layers/quantization (Q/ below);
//   SGLang 0.5.23 (the PyPI wheel, sha256 00b3cd5b...; its git commit is not recorded): the same
//     gate in srt/model_loader/loader.py _get_quantization_config, and srt/layers/quantization
//     (S/ below).
#include "core/validate/engines/engine_tables.h"

#include <iterator>

namespace ws::val::engines {

const std::vector<QuantKernelRow>& quantKernelTable() {
  static const std::vector<QuantKernelRow> t = {
      // vLLM 0.11.0
      {"vllm", "fp8", 80, 89, "Marlin weight-only FP8 (Fp8LinearMethod and Fp8MoEMethod set use_marlin below SM 8.9)",
       "The quantization method fp8 is not supported for the current GPU. Minimum capability: 80.",
       "Q/fp8.py Fp8Config.get_min_capability, Fp8LinearMethod.__init__, Fp8MoEMethod.__init__"},
      {"vllm", "ct-w8a8-fp8", 80, 89, "CompressedTensorsW8A16Fp8, Marlin weight-only (_get_scheme_from_parts)",
       "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "Q/compressed_tensors/compressed_tensors.py _get_scheme_from_parts; schemes/compressed_tensors_w8a16_fp8.py get_min_capability"},
      // The W8A16 fallback takes channel and tensor scales only: a block-quantized checkpoint
      // below SM 8.9 is refused by the fallback itself.
      {"vllm", "ct-w8a8-fp8-block", 89, 0, "",
       "Unsupported weight strategy=block, supported strategies are [channel, tensor] (the W8A16 fallback below SM 8.9)",
       "Q/compressed_tensors/schemes/compressed_tensors_w8a8_fp8.py get_min_capability; compressed_tensors_w8a16_fp8.py SUPPORTED_STRATEGIES"},
      {"vllm", "ct-w8a16-fp8", 80, 0, "", "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "Q/compressed_tensors/schemes/compressed_tensors_w8a16_fp8.py get_min_capability"},
      {"vllm", "ct-wna16", 80, 0, "", "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "Q/compressed_tensors/schemes/compressed_tensors_wNa16.py get_min_capability"},
      {"vllm", "ct-w8a8-int8", 75, 0, "", "Quantization scheme is not supported for the current GPU. Min capability: 75.",
       "Q/compressed_tensors/schemes/compressed_tensors_w8a8_int8.py get_min_capability"},
      // The native threshold is the C++ cutlass_scaled_mm_supports_fp4, outside the Python tree:
      // at 0.11.0 unknown; SM 10.0 is what the CUTLASS FP4 kernels are built for.
      {"vllm", "ct-w4a4-nvfp4", 80, 100,
       "CompressedTensorsW4A16Fp4, Marlin weight-only ('Current platform does not support cutlass NVFP4. Running CompressedTensorsW4A16Fp4.'); MoE: Marlin FP4",
       "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "Q/compressed_tensors/compressed_tensors.py _get_scheme_from_parts; Q/utils/nvfp4_moe_support.py detect_nvfp4_moe_support"},
      {"vllm", "ct-w4a16-nvfp4", 80, 0, "", "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "Q/compressed_tensors/schemes/compressed_tensors_w4a16_nvfp4.py get_min_capability"},
      {"vllm", "modelopt-fp8", 89, 0, "", "The quantization method modelopt is not supported for the current GPU. Minimum capability: 89.",
       "Q/modelopt.py ModelOptFp8Config.get_min_capability"},
      {"vllm", "modelopt-nvfp4", 80, 100,
       "FlashInfer's CUTLASS FP4 GEMM when flashinfer is installed (whether it runs below SM 10.0: unknown), else Marlin FP4 weight-only; MoE: Marlin FP4 ('Falling back to Marlin FP4 MoE kernel.')",
       "The quantization method modelopt_fp4 is not supported for the current GPU. Minimum capability: 80.",
       "Q/modelopt.py ModelOptNvFp4Config.get_min_capability, ModelOptNvFp4LinearMethod.__init__; Q/utils/nvfp4_moe_support.py"},
      {"vllm", "mxfp4", 80, 90, "Marlin MXFP4 MoE (get_mxfp4_backend: capability major below 9)",
       "The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 80.",
       "Q/mxfp4.py Mxfp4Config.get_min_capability, get_mxfp4_backend"},
      // awq becomes awq_marlin (min 80) where Marlin can run it: 4-bit, zero points, group
      // -1/32/64/128; below SM 8.0 it stays awq (min 75) on AWQ's own kernels.
      {"vllm", "awq-marlin", 75, 80, "AWQ's own GEMM kernels (awq.py), not Marlin",
       "The quantization method awq is not supported for the current GPU. Minimum capability: 75.",
       "Q/awq_marlin.py AWQMarlinConfig.override_quantization_method, is_awq_marlin_compatible; Q/awq.py AWQConfig.get_min_capability"},
      {"vllm", "awq", 75, 0, "", "The quantization method awq is not supported for the current GPU. Minimum capability: 75.",
       "Q/awq.py AWQConfig.get_min_capability"},
      // AWQ experts always go through Marlin (AWQMoEMethod), whose types are empty below SM 8.0.
      {"vllm", "awq-moe", 80, 0, "",
       "Marlin does not support weight_bits = uint4. Only types = [] are supported (for group_size = ..., device_capability = ...)",
       "Q/awq.py AWQConfig.get_quant_method (FusedMoE); Q/awq_marlin.py AWQMarlinConfig.__init__ verify_marlin_supported; Q/utils/marlin_utils.py query_marlin_supported_quant_types"},
      {"vllm", "gptq-marlin", 60, 80, "ExLlama GPTQ kernels (gptq.py); experts through the MoeWNA16 Triton kernel",
       "The quantization method gptq is not supported for the current GPU. Minimum capability: 60.",
       "Q/gptq_marlin.py GPTQMarlinConfig.override_quantization_method, is_gptq_marlin_compatible; Q/gptq.py GPTQConfig.get_min_capability"},
      {"vllm", "gptq", 60, 0, "", "The quantization method gptq is not supported for the current GPU. Minimum capability: 60.",
       "Q/gptq.py GPTQConfig.get_min_capability"},
      {"vllm", "bnb-4bit", 70, 0, "", "The quantization method bitsandbytes is not supported for the current GPU. Minimum capability: 70.",
       "Q/bitsandbytes.py BitsAndBytesConfig.get_min_capability"},
      {"vllm", "bnb-8bit", 70, 0, "", "The quantization method bitsandbytes is not supported for the current GPU. Minimum capability: 70.",
       "Q/bitsandbytes.py BitsAndBytesConfig.get_min_capability"},

      // SGLang 0.5.23
      {"sglang", "fp8", 80, 89,
       "FP8 Marlin weight-only for the linear layers (can_auto_enable_marlin_fp8: 80 <= SM < 89); what its FP8 MoE path does there: unknown",
       "The quantization method fp8 is not supported for the current GPU. Minimum capability: 80.",
       "S/fp8.py Fp8Config.get_min_capability, Fp8LinearMethod.__init__; S/fp8_utils.py can_auto_enable_marlin_fp8"},
      {"sglang", "ct-w8a8-fp8", 80, 89, "CompressedTensorsW8A16Fp8, weight-only (_get_scheme_from_parts)",
       "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "S/compressed_tensors/compressed_tensors.py _get_scheme_from_parts"},
      {"sglang", "ct-w8a8-fp8-block", 80, 89, "CompressedTensorsW8A16Fp8, weight-only (whether it takes block scales: unknown)",
       "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "S/compressed_tensors/compressed_tensors.py _get_scheme_from_parts"},
      {"sglang", "ct-w8a16-fp8", 80, 0, "", "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "S/compressed_tensors/schemes W8A16Fp8.get_min_capability"},
      {"sglang", "ct-wna16", 80, 0, "", "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "S/compressed_tensors/schemes WNA16.get_min_capability, WNA16MoE.get_min_capability"},
      {"sglang", "ct-w8a8-int8", 80, 0, "", "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "S/compressed_tensors/schemes W8A8Int8.get_min_capability"},
      {"sglang", "ct-w4a4-nvfp4", 80, 100,
       "CompressedTensorsW4A16Fp4, FP4 Marlin weight-only ('NVFP4 w4a4 requires compute capability >= 10.0; serving this checkpoint weight-only via FP4 Marlin instead.'), MoE too",
       "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "S/compressed_tensors/compressed_tensors.py _get_scheme_from_parts, get_moe_scheme"},
      {"sglang", "ct-w4a16-nvfp4", 80, 0, "", "Quantization scheme is not supported for the current GPU. Min capability: 80.",
       "S/compressed_tensors/schemes W4A16Fp4.get_min_capability"},
      {"sglang", "modelopt-fp8", 89, 0, "", "The quantization method modelopt_fp8 is not supported for the current GPU. Minimum capability: 89.",
       "S/modelopt_quant.py ModelOptFp8Config.get_min_capability"},
      {"sglang", "modelopt-nvfp4", 80, 100, "FP4 Marlin weight-only, linear and MoE (fp4_utils.initialize_fp4_gemm_config, ModelOptNvFp4FusedMoEMethod: 8.0 <= SM < 10.0)",
       "The quantization method modelopt_fp4 is not supported for the current GPU. Minimum capability: 80.",
       "S/modelopt_quant.py ModelOptFp4Config.get_min_capability; S/fp4_utils.py initialize_fp4_gemm_config"},
      {"sglang", "mxfp4", 80, 90, "unknown: its Marlin MXFP4 MoE refuses below SM 9.0 ('MXFP4 Marlin requires SM90+.'), the automatic choice there was not traced",
       "The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 80.",
       "S/mxfp4.py Mxfp4Config.get_min_capability, Mxfp4MoEMethod.process_weights_after_loading"},
      {"sglang", "awq-marlin", 75, 80, "AWQ's unoptimized kernels ('Falling back to unoptimized AWQ kernels.')",
       "The quantization method awq is not supported for the current GPU. Minimum capability: 75.",
       "S/awq/awq.py AWQMarlinConfig.override_quantization_method, AWQConfig.get_min_capability"},
      {"sglang", "awq", 75, 0, "", "The quantization method awq is not supported for the current GPU. Minimum capability: 75.",
       "S/awq/awq.py AWQConfig.get_min_capability"},
      // Plain gptq is registered for NPU, CPU and XPU only: on CUDA a GPTQ checkpoint runs as
      // gptq_marlin (SM 8.0+, symmetric 4/8-bit, group -1/32/64/128) or not at all.
      {"sglang", "gptq-marlin", 80, 0, "", "Unknown quantization method: gptq (below SM 8.0 Marlin supports no type, and plain gptq is not registered on CUDA)",
       "S/__init__.py BASE_QUANTIZATION_METHODS; S/gptq/gptq.py GPTQMarlinConfig.get_min_capability, is_gptq_marlin_compatible"},
      {"sglang", "gptq", kRefusedOnEveryGpu, 0, "", "Unknown quantization method: gptq (plain gptq is not registered on CUDA; this checkpoint is not Marlin-compatible)",
       "S/__init__.py BASE_QUANTIZATION_METHODS; srt/configs/model_config.py ModelConfig._verify_quantization"},
      {"sglang", "bnb-4bit", 70, 0, "", "The quantization method bitsandbytes is not supported for the current GPU. Minimum capability: 70.",
       "S/bitsandbytes.py BitsAndBytesConfig.get_min_capability"},
      {"sglang", "bnb-8bit", 70, 0, "", "The quantization method bitsandbytes is not supported for the current GPU. Minimum capability: 70.",
       "S/bitsandbytes.py BitsAndBytesConfig.get_min_capability"},
  };
  return t;
}

const QuantKernelRow* findQuantKernel(std::string_view engine, std::string_view method) {
  for (const auto& r : quantKernelTable())
    if (r.engine == engine && r.method == method) return &r;
  return nullptr;
}

std::string quantKernelMarkdown() {
  // One GPU per generation the table's thresholds separate.
  static constexpr struct {
    int cc;
    const char* name;
  } kGenerations[] = {{75, "SM 7.5 (T4)"}, {80, "SM 8.0 (A100)"}, {89, "SM 8.9 (L40S)"}, {90, "SM 9.0 (H100, H200)"}, {100, "SM 10.0 (B200)"}};
  std::string md = "| engine | quantization path |";
  for (const auto& g : kGenerations) md += std::string(" ") + g.name + " |";
  md += " source |\n|---|---|";
  for (size_t i = 0; i < std::size(kGenerations); ++i) md += "---|";
  md += "---|\n";
  for (const auto& r : quantKernelTable()) {
    md += "| " + std::string(r.engine) + " | `" + std::string(r.method) + "` |";
    for (const auto& g : kGenerations)
      md += g.cc < r.minCapability ? " refused |" : r.nativeCapability && g.cc < r.nativeCapability ? " fallback |" : " loads |";
    md += " " + std::string(r.source) + " |\n";
  }
  return md;
}

const std::vector<MoeRefusalRow>& moeRefusalTable() {
  static const std::vector<MoeRefusalRow> t = {
      {"vllm", "bnb-8bit", "Prequant BitsAndBytes 8bit models with FusedMoE is not supported yet.",
       "vllm/model_executor/model_loader/bitsandbytes_loader.py (0.11.0)"},
  };
  return t;
}

}  // namespace ws::val::engines
