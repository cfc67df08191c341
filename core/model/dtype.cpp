#include "core/model/dtype.h"

#include <array>

#include "core/util/checked.h"

namespace ws {

namespace {

using F = DTypeFamily;

// Block sizes: safetensors bit sizes from the reference reader's Dtype::bitsize(); ggml sizes from
// ggml-common.h (formats.md 2.4, 2.5), checked against the fixtures written by ggml d99724f.
constexpr std::array kTypes = {
    // safetensors dtypes (ggml id where the same storage exists in GGUF)
    DType{"BOOL", 1, 1, F::Bool, -1, true},
    DType{"F4", 2, 1, F::Float, -1, true},
    DType{"F6_E2M3", 4, 3, F::Float, -1, true},
    DType{"F6_E3M2", 4, 3, F::Float, -1, true},
    DType{"U8", 1, 1, F::Int, -1, true},
    DType{"I8", 1, 1, F::Int, 24, true},
    DType{"F8_E5M2", 1, 1, F::Float, -1, true},
    DType{"F8_E4M3", 1, 1, F::Float, -1, true},
    DType{"F8_E8M0", 1, 1, F::Float, -1, true},
    DType{"F8_E4M3FNUZ", 1, 1, F::Float, -1, true},
    DType{"F8_E5M2FNUZ", 1, 1, F::Float, -1, true},
    DType{"I16", 1, 2, F::Int, 25, true},
    DType{"U16", 1, 2, F::Int, -1, true},
    DType{"F16", 1, 2, F::Float, 1, true},
    DType{"BF16", 1, 2, F::Float, 30, true},
    DType{"I32", 1, 4, F::Int, 26, true},
    DType{"U32", 1, 4, F::Int, -1, true},
    DType{"F32", 1, 4, F::Float, 0, true},
    DType{"C64", 1, 8, F::Complex, -1, true},
    DType{"F64", 1, 8, F::Float, 28, true},
    DType{"I64", 1, 8, F::Int, 27, true},
    DType{"U64", 1, 8, F::Int, -1, true},
    // ggml block types
    DType{"Q4_0", 32, 18, F::Block, 2},
    DType{"Q4_1", 32, 20, F::Block, 3},
    DType{"Q5_0", 32, 22, F::Block, 6},
    DType{"Q5_1", 32, 24, F::Block, 7},
    DType{"Q8_0", 32, 34, F::Block, 8},
    DType{"Q8_1", 32, 36, F::Block, 9},
    DType{"Q2_K", 256, 84, F::Block, 10},
    DType{"Q3_K", 256, 110, F::Block, 11},
    DType{"Q4_K", 256, 144, F::Block, 12},
    DType{"Q5_K", 256, 176, F::Block, 13},
    DType{"Q6_K", 256, 210, F::Block, 14},
    DType{"Q8_K", 256, 292, F::Block, 15},
    DType{"IQ2_XXS", 256, 66, F::Block, 16},
    DType{"IQ2_XS", 256, 74, F::Block, 17},
    DType{"IQ3_XXS", 256, 98, F::Block, 18},
    DType{"IQ1_S", 256, 50, F::Block, 19},
    DType{"IQ4_NL", 32, 18, F::Block, 20},
    DType{"IQ3_S", 256, 110, F::Block, 21},
    DType{"IQ2_S", 256, 82, F::Block, 22},
    DType{"IQ4_XS", 256, 136, F::Block, 23},
    DType{"IQ1_M", 256, 56, F::Block, 29},
    // 31..33 and 36..38 are repacked Q4_0/IQ4_NL layouts that older files may still carry;
    // their on-disk block is that of the base type.
    DType{"Q4_0_4_4", 32, 18, F::Block, 31},
    DType{"Q4_0_4_8", 32, 18, F::Block, 32},
    DType{"Q4_0_8_8", 32, 18, F::Block, 33},
    DType{"TQ1_0", 256, 54, F::Block, 34},
    DType{"TQ2_0", 256, 66, F::Block, 35},
    DType{"IQ4_NL_4_4", 32, 18, F::Block, 36},
    DType{"IQ4_NL_4_8", 32, 18, F::Block, 37},
    DType{"IQ4_NL_8_8", 32, 18, F::Block, 38},
    DType{"MXFP4", 32, 17, F::Block, 39},
    DType{"NVFP4", 64, 36, F::Block, 40},
    DType{"Q1_0", 128, 18, F::Block, 41},
    DType{"Q2_0", 64, 18, F::Block, 42},
    // ik_llama.cpp's own types (ggml/include/ggml.h enum ggml_type and ggml.c type_traits at
    // ik_llama.cpp 8337e4c: blck_size, type_size, row_meta_size; the sizes read back from its built
    // library by tests/scripts/ik_llama_types.py). Its ids 0-30, 39 and 41 are ggml's; these are its
    // own. The _R4 / _R8 / _R16 forms interleave 4, 8 or 16 rows ("repacked"; ik_llama-quantize
    // writes them to files), a group's row scales first.
    DType{"Q6_0", 32, 26, F::Block, 133, false, 0, true},
    DType{"IQ1_BN", 64, 13, F::Block, 134, false, 2, true},
    DType{"IQ2_BN", 64, 16, F::Block, 135, false, 4, true},
    DType{"IQ2_K", 256, 76, F::Block, 137, false, 0, true},
    DType{"IQ3_K", 256, 110, F::Block, 138, false, 0, true},
    DType{"IQ4_K", 256, 144, F::Block, 139, false, 0, true},
    DType{"IQ5_K", 256, 176, F::Block, 140, false, 0, true},
    DType{"IQ6_K", 256, 212, F::Block, 141, false, 0, true},
    DType{"IQ4_KS", 256, 136, F::Block, 144, false, 4, true},
    DType{"IQ2_KS", 256, 70, F::Block, 145, false, 2, true},
    DType{"IQ4_KSS", 256, 128, F::Block, 146, false, 4, true},
    DType{"IQ5_KS", 256, 168, F::Block, 152, false, 4, true},
    DType{"IQ2_KT", 256, 68, F::Block, 153, false, 4, true},
    DType{"IQ3_KT", 256, 100, F::Block, 154, false, 4, true},
    DType{"IQ4_KT", 256, 128, F::Block, 155, false, 4, true},
    DType{"IQ3_KS", 256, 102, F::Block, 156, false, 2, true},
    DType{"IQ2_KL", 256, 86, F::Block, 157, false, 2, true},
    DType{"IQ1_KT", 256, 56, F::Block, 158, false, 4, true},
    DType{"Q4_0_R8", 32, 18, F::Block, 202, false, 0, true, 8},
    DType{"Q5_0_R4", 32, 22, F::Block, 206, false, 0, true, 4},
    DType{"Q8_0_R8", 32, 34, F::Block, 208, false, 0, true, 8},
    DType{"Q2_K_R4", 256, 84, F::Block, 210, false, 0, true, 4},
    DType{"Q3_K_R4", 256, 110, F::Block, 211, false, 0, true, 4},
    DType{"Q4_K_R4", 256, 144, F::Block, 212, false, 0, true, 4},
    DType{"Q5_K_R4", 256, 176, F::Block, 213, false, 0, true, 4},
    DType{"Q6_K_R4", 256, 210, F::Block, 214, false, 0, true, 4},
    DType{"IQ2_XXS_R4", 256, 66, F::Block, 216, false, 0, true, 4},
    DType{"IQ2_XS_R4", 256, 74, F::Block, 217, false, 0, true, 4},
    DType{"IQ3_XXS_R4", 256, 98, F::Block, 218, false, 0, true, 4},
    DType{"IQ1_S_R4", 32, 6, F::Block, 219, false, 2, true, 4},
    DType{"IQ4_NL_R4", 32, 18, F::Block, 220, false, 0, true, 4},
    DType{"IQ3_S_R4", 256, 110, F::Block, 221, false, 0, true, 4},
    DType{"IQ2_S_R4", 256, 82, F::Block, 222, false, 0, true, 4},
    DType{"IQ4_XS_R8", 256, 136, F::Block, 223, false, 0, true, 8},
    DType{"IQ1_M_R4", 32, 7, F::Block, 229, false, 2, true, 4},
    DType{"BF16_R16", 1, 2, F::Block, 230, false, 0, true, 16},
    DType{"Q6_0_R4", 32, 26, F::Block, 233, false, 0, true, 4},
    DType{"IQ2_BN_R4", 64, 16, F::Block, 335, false, 4, true, 4},
    DType{"IQ2_K_R4", 256, 76, F::Block, 337, false, 0, true, 4},
    DType{"IQ3_K_R4", 256, 110, F::Block, 338, false, 0, true, 4},
    DType{"IQ4_K_R4", 256, 144, F::Block, 339, false, 0, true, 4},
    DType{"IQ5_K_R4", 256, 176, F::Block, 340, false, 0, true, 4},
    DType{"IQ4_KS_R4", 256, 136, F::Block, 344, false, 4, true, 4},
    DType{"IQ5_KS_R4", 256, 168, F::Block, 352, false, 4, true, 4},
    DType{"MXFP4_R8", 32, 17, F::Block, 353, false, 0, true, 8},
    DType{"Q8_K_R16", 256, 258, F::Block, 397, false, 0, true, 16},
    DType{"Q8_KV_R8", 32, 32, F::Block, 398, false, 4, true, 8},
    DType{"Q8_K_R8", 256, 258, F::Block, 399, false, 0, true, 8},
};

// ggml's type count (ids 0..42), and ik_llama.cpp's (GGML_TYPE_COUNT 400 at 8337e4c).
constexpr int kGgmlTypeCount = 43;
constexpr int kIkLlamaTypeCount = 400;

}  // namespace

std::optional<uint64_t> DType::bytesFor(uint64_t elements) const {
  if (elements % blockElems != 0) return std::nullopt;
  return checkedMul(elements / blockElems, blockBytes);
}

const DType* dtypeFromSafetensors(std::string_view name) {
  for (const auto& t : kTypes)
    if (t.inSafetensors && t.name == name) return &t;
  return nullptr;
}

const DType* dtypeFromGgml(int64_t id) {
  if (id < 0) return nullptr;
  for (const auto& t : kTypes)
    if (t.ggmlId == id) return &t;
  return nullptr;
}

std::optional<uint64_t> DType::bytesForRows(uint64_t elements, uint64_t rowLength) const {
  if (!rowMetaBytes) return bytesFor(elements);
  if (!rowLength || elements % rowLength || rowLength % blockElems) return std::nullopt;
  const auto blocks = checkedMul(rowLength / blockElems, blockBytes);
  const auto row = blocks ? checkedAdd(uint64_t(rowMetaBytes), *blocks) : std::nullopt;
  return row ? checkedMul(elements / rowLength, *row) : std::nullopt;
}

std::string ggmlIdProblem(int64_t id) {
  if (id < 0 || id >= kIkLlamaTypeCount)
    return "ggml type id " + std::to_string(id) + " is out of range: neither ggml's [0, " + std::to_string(kGgmlTypeCount) + ") nor ik_llama.cpp's [0, " +
           std::to_string(kIkLlamaTypeCount) + ")";
  if (id >= kGgmlTypeCount)
    return "ggml type id " + std::to_string(id) + " is not a type ggml or ik_llama.cpp (8337e4c) stores in files (an in-memory type, or one this build does not know)";
  return "ggml type id " + std::to_string(id) + " was removed from the format and has no defined size";
}

const DType* dtypeByName(std::string_view name) {
  for (const auto& t : kTypes)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace ws
