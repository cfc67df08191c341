// A cursor over a byte span that knows how many bytes remain and refuses to read past them.
// Every length read from a file is checked against remaining() before anything is allocated.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "core/util/error.h"

namespace ws {

class BoundedReader {
 public:
  BoundedReader(std::span<const uint8_t> bytes, std::string file) : bytes_(bytes), file_(std::move(file)) {}

  uint64_t position() const { return pos_; }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  const std::string& file() const { return file_; }

  template <class T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));  // little-endian host assumed (x86-64, aarch64)
    pos_ += sizeof(T);
    return v;
  }

  std::string_view readBytes(uint64_t n, const char* what) {
    need(n, what);
    std::string_view s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }

  void skip(uint64_t n, const char* what) {
    need(n, what);
    pos_ += n;
  }

  void need(uint64_t n, const char* what) const {
    if (n > remaining())
      fail(ErrorCode::GgufTruncated,
           std::string(what) + " needs " + std::to_string(n) + " bytes but only " + std::to_string(remaining()) +
               " remain",
           file_, pos_);
  }

 private:
  std::span<const uint8_t> bytes_;
  std::string file_;
  uint64_t pos_ = 0;
};

}  // namespace ws
