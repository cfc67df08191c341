// The rule registry: every rule's stable code, name, family, severity and a one-line summary.
// docs/rules.md documents each code with an example (a test keeps the two in step).
#pragma once

#include <string>
#include <vector>

#include "core/validate/finding.h"

namespace ws::val {

struct RuleInfo {
  const char* code;
  const char* name;
  const char* family;  // integrity, completeness, metadata, adapter, shapes, values, compatibility, load, diff
  Severity severity;
  const char* summary;
  const char* hint;
  // A runtime's refusal (core/validate/runtimes.h): the finding is an error when validate
  // --runtime names this runtime, and of `severity` otherwise. Null for every other rule.
  const char* runtime = nullptr;
};

const std::vector<RuleInfo>& rules();
const RuleInfo& rule(const std::string& code);  // throws std::out_of_range for an unknown code

// A finding for `code` with the rule's name, family severity and hint filled in.
Finding makeFinding(const std::string& code, std::string message, std::string tensor = {}, std::string file = {});

}  // namespace ws::val
