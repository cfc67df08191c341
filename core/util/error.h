// Errors carried out of the core: a stable code, a message, and where (file, byte offset, tensor).
// Inside the core, parsers throw CoreError; every public entry point catches it and returns a
// Result, so no exception crosses a thread or library boundary.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace ws {

enum class ErrorCode {
  Io,                      // open/stat/mmap failed
  NotACheckpoint,          // path holds nothing we can read
  HeaderTooSmall,          // safetensors: file shorter than 8 bytes
  HeaderTooLarge,          // safetensors: header length over 100 MB
  InvalidHeaderLength,     // safetensors: header runs past the end of file
  InvalidHeaderUtf8,       // safetensors: header is not UTF-8
  InvalidHeaderJson,       // safetensors / index / config: not the JSON we expect
  UnknownDtype,            // a dtype string or ggml type id we do not know
  InvalidOffset,           // safetensors: data_offsets not contiguous from 0
  ValidationOverflow,      // a size product overflowed
  MisalignedSlice,         // sub-byte tensor whose bit count is not a whole number of bytes
  TensorInvalidInfo,       // byte length differs from elements x dtype size
  MetadataIncompleteBuffer,// data does not fill the file exactly
  DuplicateTensor,         // the same tensor name twice
  DuplicateKey,            // the same key twice in a JSON object or GGUF KV section
  GgufBadMagic,
  GgufBadVersion,
  GgufTruncated,           // a declared length runs past the end of file
  GgufBadValue,            // a KV value of the wrong type or out of range
  GgufBadTensorInfo,       // dims, type or offset of a tensor info are invalid
  MissingShard,            // index.json or a split set names a file that is not there
  InconsistentSplit,       // a GGUF split set disagrees with itself
  IndexTensorAbsent,       // index.json maps a tensor to a shard that does not hold it
  IndexTensorUnlisted,     // a shard holds a tensor index.json does not map
  IndexTensorMisplaced,    // index.json maps a tensor to another shard than the one holding it
  IndexTotalSize,          // metadata.total_size disagrees with the tensors' bytes
  FormatMismatch,          // the bytes are another format than the file name says (GGUF named .safetensors)
  InconsistentRanks,       // a pre-partitioned checkpoint's ranks hold different tensor sets or shapes
  Remote,                  // a remote read failed: the server's answer, or no answer, named with the URL
  Usage,                   // bad command-line usage
};

const char* errorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::Io;
  std::string message;
  std::string file;                 // empty when not tied to a file
  std::optional<uint64_t> offset;   // byte offset in `file`, when known
  std::string tensor;               // tensor name, when known

  // One line for a terminal: "file: offset N: tensor 'x': message [CODE]".
  std::string describe() const;
};

class CoreError : public std::runtime_error {
 public:
  explicit CoreError(Error e) : std::runtime_error(e.describe()), error_(std::move(e)) {}
  const Error& error() const { return error_; }

 private:
  Error error_;
};

[[noreturn]] inline void fail(ErrorCode code, std::string message, std::string file = {},
                              std::optional<uint64_t> offset = std::nullopt, std::string tensor = {}) {
  throw CoreError(Error{code, std::move(message), std::move(file), offset, std::move(tensor)});
}

// A value or an Error; the minimal std::expected we need until the toolchain has C++23.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Runs fn() and turns a CoreError (or any std::exception) into an Error.
template <class F>
auto capture(F&& fn) -> Result<decltype(fn())> {
  try {
    return fn();
  } catch (const CoreError& e) {
    return e.error();
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::Io, "out of memory", {}, std::nullopt, {}};
  } catch (const std::exception& e) {
    return Error{ErrorCode::Io, e.what(), {}, std::nullopt, {}};
  }
}

}  // namespace ws
