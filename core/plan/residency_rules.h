// Where serving runtimes differ on what an EP rank holds and what a load converts: one row per
// runtime, chosen with --runtime on plan and load (vLLM's rules are the default). Read from each
// runtime's loader (sources in the table); what a runtime refuses to load at all is another
// concept, core/validate/runtimes.h.
#pragma once

#include <string_view>
#include <vector>

#include "core/plan/placement.h"

namespace ws::plan {

struct ResidencyRules {
  std::string_view name;        // what --runtime takes
  Remainder remainder;          // who takes E mod EP experts (unless --remainder says otherwise)
  bool fusedWholeOnEveryRank;   // fused/stacked expert tensors (no expert index in the name): whole on every rank, or each rank its slice
  bool shardMtpUnderLayers;     // MTP layers stored under layers.N (GLM style): their experts sharded like routed ones, or replicated
  bool f16ToBf16;               // F16 tensors converted to BF16 at load (same size, other bits)
  // --skip-mtp / --skip-activation-scales as the runtime spells them: by name (the seed's
  // should_skip_tensor: a leading "mtp.", a trailing ".input_scale" - so GLM's layer-index MTP and
  // NVFP4's input_global_scale stay), or by what naming recognises (every MTP layer, every input scale).
  bool skipsByName;
  std::string_view source;
};

const std::vector<ResidencyRules>& residencyRulesTable();
const ResidencyRules& defaultResidencyRules();  // vLLM's
// The row named `name`, or nullptr.
const ResidencyRules* findResidencyRules(std::string_view name);
// The row named `name`; throws std::invalid_argument listing the known ones.
const ResidencyRules& residencyRules(std::string_view name);

}  // namespace ws::plan
