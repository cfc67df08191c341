// Statistics sent between the ranks of a distributed scan (core/dist): every double as its bit
// pattern, so what a rank computed arrives unchanged (NaN and infinity included, which JSON
// numbers cannot carry) and the merged result is the one a single process gets, bit for bit.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "core/numerics/scale_stats.h"
#include "core/numerics/stats.h"

namespace ws::num {

nlohmann::json statsWire(const Stats& s);
Stats statsFromWire(const nlohmann::json& j);
nlohmann::json histogramWire(const Histogram& h);
Histogram histogramFromWire(const nlohmann::json& j);
nlohmann::json scaleReportWire(const ScaleReport& r);
// Adds the groups of `j` (a report of other logical tensors) to `into`: group keys are tensor
// names under ScaleGrouping::Tensor, so the ranks' keys never meet and nothing is merged twice.
void addScaleReportWire(ScaleReport& into, const nlohmann::json& j);

}  // namespace ws::num
