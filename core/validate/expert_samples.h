// WS-V015 near-duplicate experts and WS-V016 expert-norm outliers, from a sample of each routed
// expert's values taken in the value pass: the kSampleRows first rows of each projection,
// kSampleCols columns of each at an even stride, decoded. The sample's random
// projection (kSketchDims Rademacher directions, the same for every expert) estimates the cosine
// between two experts' sampled values, and its sum of squares their RMS. Both only pick
// candidates: a pair whose estimated cosine passes kSketchCandidate in every projection, an expert
// whose sampled RMS is near kNormOctaves octaves from the layer's median, is decoded whole and
// reported on exact figures.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/numerics/dequant.h"
#include "core/validate/expert_fingerprints.h"
#include "core/validate/expert_health.h"
#include "core/validate/sink.h"

namespace ws::val {

inline constexpr int kSketchDims = 64;
inline constexpr uint64_t kSampleRows = 4, kSampleCols = 256;
// Estimated cosine a pair must reach in every projection to be decoded whole; the estimate of 1024
// sampled values through 64 directions errs by about 1/sqrt(64) for unrelated experts (cosine
// near 0), so 0.9 lets none of them through and every pair whose true cosine is near 1.
inline constexpr double kSketchCandidate = 0.9;
// Exact cosine, in every projection, from which two experts are reported as near-duplicates: a
// copy with noise of a hundredth of its values' spread stays above 0.9999, trained experts sit
// near 0.
inline constexpr double kNearDuplicateCosine = 0.99;
// An expert projection's Frobenius norm this many octaves (8x) or more above or below the median of
// the layer's experts (an expert scaled by a merge or a bad export).
inline constexpr double kNormOctaves = 3;

// Fills p.sketch, p.sampleSquares and p.sampleCount from expert `e` of the `experts` stacked in
// the decoder's rows (1: the tensor is one expert's). Leaves them empty when the sample holds a
// NaN or infinity (WS-V008's). Decodes through the mapping: the caller guards the reads.
void sampleExpert(const num::RowDecoder& d, uint64_t e, uint64_t experts, num::ExtentScratch& scratch, ExpertPrint& p);

// One WS-V015 warning per layer with pairs of experts whose exact cosine is at least
// kNearDuplicateCosine in every projection (byte-identical pairs are WS-V013's, not repeated).
void judgeNearDuplicateExperts(const Checkpoint& c, const std::vector<ExpertPrint>& prints, Sink& sink);

// One WS-V016 warning per expert projection whose exact Frobenius norm is kNormOctaves octaves or
// more from the median of its layer's experts (the median from the sampled RMS of each).
void judgeExpertNormOutliers(const Checkpoint& c, const std::vector<ExpertPrint>& prints, Sink& sink);

// Every sampled routed expert's health cell (expert_health.h), in layer and expert order.
std::vector<ExpertHealthCell> expertHealth(const Checkpoint& c, const std::vector<ExpertPrint>& prints);

}  // namespace ws::val
