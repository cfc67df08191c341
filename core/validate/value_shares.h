// validate --distributed: the value rules' tensors shared out by bytes over the MPI ranks, each
// rank reading only its share, and the shares merged so the report is exactly one process's
// (docs/distributed.md). The header rules need no bytes and run on every rank alike.
#pragma once

#include <utility>
#include <vector>

#include "core/dist/communicator.h"
#include "core/numerics/scale_stats.h"
#include "core/validate/expert_fingerprints.h"
#include "core/validate/finding.h"
#include "core/validate/validator.h"

namespace ws::val {

// This rank's run [begin, end) of items weighted by `bytes`; all of them without --distributed.
std::pair<size_t, size_t> shareOf(const ValidateOptions& opt, const std::vector<uint64_t>& bytes);

// Every rank's per-tensor scale statistics, merged (at every rank), or the first rank's error;
// `byRank` gets the scale bytes each rank read.
Result<num::ScaleReport> gatherScaleShares(dist::Communicator& comm, const Result<num::ScaleReport>& mine, std::vector<uint64_t>& byRank);

// What one rank's value pass found and read.
struct ValueShare {
  std::vector<Finding> findings;
  uint64_t bytesRead = 0;
  bool cancelled = false;
  std::vector<uint64_t> bytesByRank;  // gathered: what each rank read
  int64_t kernelBytes = -1;            // the kernel's count of this rank's reads in the pass (-1: unknown)
  std::vector<int64_t> kernelBytesByRank;  // gathered
  std::vector<ExpertPrint> prints;         // WS-V013's fingerprints, every rank's once gathered
  uint64_t fingerprintBytes = 0;           // what WS-V013's windows read again
  std::vector<uint64_t> fingerprintBytesByRank;  // gathered
};
// Every rank's, in rank order (findings appended, bytes summed, cancelled if any rank was).
ValueShare gatherValueShares(dist::Communicator& comm, const ValueShare& mine);

}  // namespace ws::val
