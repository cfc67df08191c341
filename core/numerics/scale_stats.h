// Scale statistics: for every logical tensor, the values of its scales (FP8 scale tensors, NVFP4
// block and global scales, E8M0 exponents, integer group scales, GGUF per-block d / dmin and
// sub-block scales), aggregated per layer, projection, expert or for the whole checkpoint. Only
// scale bytes are read; the counter proves it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>
#include <string>

#include "core/model/checkpoint.h"
#include "core/numerics/dequant.h"
#include "core/numerics/stats.h"

namespace ws::num {

enum class ScaleGrouping { Tensor, Layer, Projection, Expert, Checkpoint };

struct ScaleGroup {
  Stats stats;
  Histogram hist = Histogram::log2Fine();
  uint64_t tensors = 0;
};

struct ScaleReport {
  // group key ("layer 3", "gate", "expert 7", "checkpoint", or a tensor name) -> scale kind
  // ("scale", "global_scale", "d", "dmin", "sub_scale") -> statistics
  std::map<std::string, std::map<std::string, ScaleGroup>> groups;
  uint64_t bytesRead = 0;
  uint64_t logicalTensors = 0;  // logical tensors that have scales
};

// The group a logical tensor (with weight w) falls in: the keys of ScaleReport::groups.
std::string scaleGroupKey(const Checkpoint& c, const TensorRecord& w, const LogicalTensor& l, ScaleGrouping by);

// The typical magnitude of a group's scales: the geometric mean of |x| as a log2 value, from the
// fine histogram (bin centres weighted by count); NaN when it holds no nonzero value.
double typicalLog2(const Histogram& h);

// Where a set of log2 magnitudes sits, robustly: the upper weighted median and the median
// absolute deviation from it, scaled by 1.4826 (a standard deviation for normal data).
struct RobustSpread {
  double median = 0, deviation = 0;
};
// (value, weight) pairs; weights are counts (1 for plain values). Empty: {0, 0}.
RobustSpread robustSpread(std::vector<std::pair<double, uint64_t>> values);
// The scale-outlier test (validation rule WS-V007, and the red bins of the GUI's histograms): at
// least 3 octaves (8x) and 6 robust deviations away from the median.
bool farFromPeers(double log2Value, const RobustSpread& s);

// One logical tensor's scales by kind, as the scale statistics read them.
struct TensorScales {
  std::map<std::string, ScaleGroup> kinds;
  uint64_t bytesRead = 0;
};
// Reads them on the calling thread, with its own buffers (validate --values reads each tensor's
// scales this way just before its weights, so the two reads are one pass over the file).
// With `keep`, the group scales (up to kKeptBytes) are read whole and left there for the
// weights' decode, which then does not read them again; otherwise `keep` is left empty.
// Throws CoreError when a read fails. A cut tensor has no bytes to read: do not ask.
constexpr uint64_t kKeptBytes = uint64_t(16) << 20;
TensorScales scalesOfTensor(const Checkpoint& c, const LogicalTensor& l, ExtentScratch::Kept* keep = nullptr);
// Merges one tensor's scales into `rep` under its group; in catalog order, the report is the
// one scaleStatistics gives (a tensor's group by itself is its statistics exactly).
void addTensorScales(const Checkpoint& c, ScaleGrouping by, const LogicalTensor& l, TensorScales&& t, ScaleReport& rep);

// progress(done, total) is called between logical tensors, from one thread at a time but not
// necessarily the caller's, in bytes of the tensors the scales are read from (scale_sources.h),
// and once more at the end with done == total; returning false cancels. `logical`:
// only the logical tensors [first, second) (a rank's share of a distributed scan).
Result<ScaleReport> scaleStatistics(const Checkpoint& c, ScaleGrouping by, const std::function<bool(uint64_t, uint64_t)>& progress = {},
                                    std::pair<size_t, size_t> logical = {0, SIZE_MAX});

// A report grouped per tensor, regrouped by `by` without reading anything again: counts and
// histograms are exactly those of a direct pass; moments are merged (Chan), so the mean and
// standard deviation may differ from a direct pass in the last bits.
ScaleReport regroupScales(const Checkpoint& c, const ScaleReport& byTensor, ScaleGrouping by);

}  // namespace ws::num
