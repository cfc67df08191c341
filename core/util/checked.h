// Overflow-checked arithmetic for sizes read from untrusted headers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace ws {

inline std::optional<uint64_t> checkedMul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<uint64_t> checkedAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Product of all dims; nullopt on overflow. The empty shape (a scalar) has one element.
inline std::optional<uint64_t> checkedProduct(std::span<const uint64_t> dims) {
  uint64_t n = 1;
  for (uint64_t d : dims) {
    auto m = checkedMul(n, d);
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}

}  // namespace ws
