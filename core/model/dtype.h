// The storage-type registry: one row per safetensors dtype and per ggml type id. A tensor's byte
// size is computed here and nowhere else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ws {

enum class DTypeFamily { Float, Int, Bool, Complex, Block };

struct DType {
  std::string_view name;      // the file's own spelling: "F8_E4M3", "Q4_K", ...
  uint32_t blockElems;        // elements per storage block (1 for plain types, 2 for F4, 4 for F6)
  uint32_t blockBytes;        // bytes per storage block
  DTypeFamily family;
  int ggmlId = -1;            // ggml type id when the type exists in GGUF, else -1
  bool inSafetensors = false; // a valid safetensors dtype string
  // Bytes each row carries before its blocks (ik_llama.cpp's row_meta_size: IQ4_KS keeps one float
  // scale a row); a GGUF tensor's size is rows x (this + its blocks).
  uint32_t rowMetaBytes = 0;
  // The id is ik_llama.cpp's (its fork of ggml numbers its own types from 133), not ggml's.
  bool ikLlama = false;
  // Rows stored interleaved in groups of this many (ik_llama.cpp's _R4 / _R8 / _R16 "repacked"
  // types): each group of rows is one run of bytes - the rows' meta, then for each column block the
  // group's blocks side by side - the size of as many plain rows.
  uint32_t rowInterleave = 1;

  bool isBlockQuant() const { return family == DTypeFamily::Block; }
  // Byte size of `elements` elements; nullopt when the count is not a whole number of blocks
  // or the size overflows.
  std::optional<uint64_t> bytesFor(uint64_t elements) const;
  // Byte size of `elements` elements in rows of `rowLength` (GGUF's ne[0]): bytesFor plus each
  // row's meta bytes; nullopt as bytesFor, or when the rows are not whole.
  std::optional<uint64_t> bytesForRows(uint64_t elements, uint64_t rowLength) const;
};

// safetensors dtype string -> type; nullptr when unknown.
const DType* dtypeFromSafetensors(std::string_view name);
// ggml type id -> type; nullptr when unknown or removed from the format.
const DType* dtypeFromGgml(int64_t id);
// Why a ggml id is not usable (removed, out of range), for error messages.
std::string ggmlIdProblem(int64_t id);
// Any registry name (either format) -> type.
const DType* dtypeByName(std::string_view name);

}  // namespace ws
