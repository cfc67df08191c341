// WS-V013: routed experts that are copies of each other. validate --values fingerprints every
// routed expert's stored bytes (each projection: its codes, scales and zero points, as written)
// while it reads them; experts of one layer whose every projection has the same fingerprint were
// copied by an upcycling or merge script, never trained apart.
//
// The fingerprint the pass takes hashes a sample of each slice (4 windows of 4 KiB, the slice
// whole when it is smaller): hashing every byte through the mapping cost the warm pass 56-84%
// (docs/benchmarks.md), the page-table work of mapping what the pass had read with pread. Experts
// whose samples agree are then hashed whole, and only those whose every byte agrees are reported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/numerics/dequant.h"
#include "core/validate/sink.h"

namespace ws::val {

// One projection of one routed expert, fingerprinted.
struct ExpertPrint {
  int32_t layer = -1;
  int64_t expert = -1;
  std::string projection;  // projectionName, e.g. "gate_proj", "gate_up_proj"
  std::string tensor;      // the stored weight holding it (a stacked tensor: all experts')
  uint32_t logical = 0;    // the logical tensor, and the expert's slice of its `slices`
  uint64_t slice = 0, slices = 1;
  uint64_t hash = 0;       // of the sample
  // The expert's sampled values (expert_samples.h): their random projection and sum of squares,
  // for WS-V015 and WS-V016; empty / 0 where those rules do not run.
  std::vector<float> sketch;
  double sampleSquares = 0;
  uint64_t sampleCount = 0, valueCount = 0;  // values sampled, values of the expert's projection
};

// The 64-bit hash (xxHash's XXH3 where built with it) of slice `e` of the `slices` experts stacked
// in `l` (1: the tensor is one expert's): each member's slice in member order, sampled or `whole`;
// a member that does not split into equal slices (a global scale) is taken whole. Sampled, its
// windows are read with pread and added to `counter` (the pass's count of what it read, which the
// kernel's is held to); `whole` reads through the files' mappings, so the caller holds a
// MappedReadGuard and checks it. nullopt when a member has no local mapping; a failed read throws
// CoreError naming file and offset.
std::optional<uint64_t> fingerprintExpert(const Checkpoint& c, const LogicalTensor& l, uint64_t e, uint64_t slices, bool whole,
                                          num::ByteCounter* counter = nullptr);

// One WS-V013 error per set of experts of a layer whose every projection's bytes are the same
// (samples first, then every byte of the candidates; a remote checkpoint's candidates are fetched
// first), naming the layer, the experts and the projections, on the copy's first weight.
void judgeDuplicateExperts(const Checkpoint& c, std::vector<ExpertPrint> prints, Sink& sink);

}  // namespace ws::val
