// A validation finding: what is wrong, exactly where, and what to do about it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ws::val {

enum class Severity { Info = 0, Warning = 1, Error = 2 };
const char* severityName(Severity s);

struct Finding {
  Severity severity = Severity::Error;
  std::string code;     // stable rule code, e.g. WS-C001
  std::string rule;     // rule name, e.g. missing-experts
  std::string tensor;   // empty when the finding is not about one tensor
  std::string file;     // empty when not about one file
  std::optional<uint64_t> offset;
  std::string message;
  std::string hint;
};

}  // namespace ws::val
