// What a loader must put on a rank, worked out by the tests themselves from the file's bytes and
// the CPU dequantizer - never from the loader's or the planner's code - so that tst_load (the host
// stand-in) and tst_gpu (the device) both hold a load to something that could disagree with it.
// Plain C++: tst_gpu has no Qt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/load/loader.h"

namespace wstest {

// The tensor's bytes in the mapped file.
const uint8_t* fileBytes(const ws::Checkpoint& c, const ws::TensorRecord& t);

// The bytes the loader copies for `t` on `o.epRank`: the file's, or for a stacked expert tensor the
// rank's experts' slices in placement order (whole on every rank where the rules say so).
std::vector<uint8_t> expectedCopy(const ws::Checkpoint& c, const ws::TensorRecord& t, const ws::load::LoadOptions& o);

struct DerivedReference {
  std::vector<uint8_t> bytes;
  std::string problem;  // not empty: the buffer's sources are not what its kind says
};

// A derived buffer as it must be: a fused gate_up is gate's then up's bytes (the buffer's expert of
// stacked ones); a transpose swaps the last two dimensions of the rank's copy; a BF16 twin is the
// CPU dequantizer's value of every element (the rank's experts of a stacked tensor, in index order)
// rounded to nearest even.
DerivedReference derivedReference(const ws::Checkpoint& c, const ws::load::DerivedBuffer& db, const ws::load::LoadOptions& o);

}  // namespace wstest
