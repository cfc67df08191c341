// The per-expert statistics the value pass samples for WS-V015 / WS-V016, kept for the Experts
// tab's health maps and the report's "expert_health" grid: how far each routed expert's sampled
// RMS sits from its layer's median, and how close its nearest sibling is. Estimates from each
// expert's sample (expert_samples.h: 1,024 values a projection, a 64-direction sketch), not the
// exact figures the rules report on their candidates.
#pragma once

#include <cstdint>

namespace ws::val {

struct ExpertHealthCell {
  int32_t layer = -1;
  int64_t expert = -1;
  // log2 of the sampled RMS over the median of the layer's experts, the projection furthest from
  // its median (signed: below the median is negative); NaN where no projection has 3 peers.
  double normOctaves = 0;
  // The estimated cosine to the layer's closest other expert: for each other expert the least over
  // the projections both have, the most over the experts; NaN for an expert alone in its layer.
  double nearestCosine = 0;
  int64_t nearest = -1;  // that expert
};

}  // namespace ws::val
