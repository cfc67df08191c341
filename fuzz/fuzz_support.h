// Shared by the libFuzzer targets: invariant checks that turn a silent wrong answer into a crash
// the fuzzer reports, and a helper that cuts one input into parts.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace wsfuzz {

// Not assert(): it must hold in every build type the fuzzers use.
inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

// Splits `in` at the first NUL: [head, rest). No NUL: all of it is head.
inline std::pair<std::string_view, std::string_view> splitAtNul(std::string_view in) {
  size_t z = in.find('\0');
  if (z == std::string_view::npos) return {in, {}};
  return {in.substr(0, z), in.substr(z + 1)};
}

}  // namespace wsfuzz
