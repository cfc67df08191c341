#include "core/util/error.h"

namespace ws {

const char* errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::Io: return "IO";
    case ErrorCode::NotACheckpoint: return "NOT_A_CHECKPOINT";
    case ErrorCode::HeaderTooSmall: return "HEADER_TOO_SMALL";
    case ErrorCode::HeaderTooLarge: return "HEADER_TOO_LARGE";
    case ErrorCode::InvalidHeaderLength: return "INVALID_HEADER_LENGTH";
    case ErrorCode::InvalidHeaderUtf8: return "INVALID_HEADER_UTF8";
    case ErrorCode::InvalidHeaderJson: return "INVALID_HEADER_JSON";
    case ErrorCode::UnknownDtype: return "UNKNOWN_DTYPE";
    case ErrorCode::InvalidOffset: return "INVALID_OFFSET";
    case ErrorCode::ValidationOverflow: return "VALIDATION_OVERFLOW";
    case ErrorCode::MisalignedSlice: return "MISALIGNED_SLICE";
    case ErrorCode::TensorInvalidInfo: return "TENSOR_INVALID_INFO";
    case ErrorCode::MetadataIncompleteBuffer: return "METADATA_INCOMPLETE_BUFFER";
    case ErrorCode::DuplicateTensor: return "DUPLICATE_TENSOR";
    case ErrorCode::DuplicateKey: return "DUPLICATE_KEY";
    case ErrorCode::GgufBadMagic: return "GGUF_BAD_MAGIC";
    case ErrorCode::GgufBadVersion: return "GGUF_BAD_VERSION";
    case ErrorCode::GgufTruncated: return "GGUF_TRUNCATED";
    case ErrorCode::GgufBadValue: return "GGUF_BAD_VALUE";
    case ErrorCode::GgufBadTensorInfo: return "GGUF_BAD_TENSOR_INFO";
    case ErrorCode::MissingShard: return "MISSING_SHARD";
    case ErrorCode::InconsistentSplit: return "INCONSISTENT_SPLIT";
    case ErrorCode::InconsistentRanks: return "INCONSISTENT_RANKS";
    case ErrorCode::Remote: return "REMOTE";
    case ErrorCode::IndexTensorAbsent: return "INDEX_TENSOR_ABSENT";
    case ErrorCode::IndexTensorUnlisted: return "INDEX_TENSOR_UNLISTED";
    case ErrorCode::IndexTensorMisplaced: return "INDEX_TENSOR_MISPLACED";
    case ErrorCode::IndexTotalSize: return "INDEX_TOTAL_SIZE";
    case ErrorCode::FormatMismatch: return "FORMAT_MISMATCH";
    case ErrorCode::Usage: return "USAGE";
  }
  return "UNKNOWN";
}

std::string Error::describe() const {
  std::string s;
  if (!file.empty()) s += file + ": ";
  if (offset) s += "offset " + std::to_string(*offset) + ": ";
  if (!tensor.empty()) s += "tensor '" + tensor + "': ";
  s += message;
  s += " [";
  s += errorCodeName(code);
  s += "]";
  return s;
}

}  // namespace ws
