// `inspect` output: the versioned JSON document (schema weightscope.inspect/1, documented in
// docs/inspect-schema.md) and the human summary + tensor tree.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include <vector>

#include "core/model/checkpoint.h"
#include "core/validate/expert_health.h"
#include "core/validate/finding.h"

namespace ws {

struct InspectOptions {
  std::string filter;  // shell glob over tensor names; empty = all
  bool flat = false;   // text: one line per tensor instead of the grouped tree
  // What opening found wrong (a cut file, a missing part): validate's integrity findings, listed
  // in the text and as the document's "findings".
  std::vector<val::Finding> problems;
  // inspect --health: the value pass's sampled expert health (core/validate/expert_health.h), shown
  // in the experts grid; empty where it was not computed.
  std::vector<val::ExpertHealthCell> health;
};

// The document as text, one tensor entry per line (what `inspect --json` prints), and parsed.
std::string inspectJsonText(const Checkpoint& c, const InspectOptions& opt);
nlohmann::json inspectJson(const Checkpoint& c, const InspectOptions& opt);
std::string inspectText(const Checkpoint& c, const InspectOptions& opt);

}  // namespace ws
