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
};

// ggml ids whose name in GGUF differs from the safetensors spelling of the same storage.
constexpr int kGgmlTypeCount = 43;

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

std::string ggmlIdProblem(int64_t id) {
  if (id < 0 || id >= kGgmlTypeCount)
    return "ggml type id " + std::to_string(id) + " is out of range [0, " + std::to_string(kGgmlTypeCount) + ")";
  return "ggml type id " + std::to_string(id) + " was removed from the format and has no defined size";
}

const DType* dtypeByName(std::string_view name) {
  for (const auto& t : kTypes)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace ws
