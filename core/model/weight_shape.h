// compressed-tensors' weight_shape companion: the unpacked shape of a packed integer weight, stored
// as a tiny I32/I64 tensor. Read in one place, because it is untrusted input that decides how many
// bytes a decoder reads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/model/checkpoint.h"

namespace ws {

// The entries, or nullopt when the tensor is not 1 to 8 I32/I64 values inside its file. From
// Checkpoint::weightShapes when the open cached them, else read from the file.
std::optional<std::vector<int64_t>> readWeightShape(const Checkpoint& c, const TensorRecord& t);

// Reads every weight_shape tensor of the catalog into Checkpoint::weightShapes, on all cores.
void cacheWeightShapes(Checkpoint& c);

// True when `dims` is a shape the packed tensor can hold: same rank, every dimension positive,
// leading dimensions equal to the packed ones, and the last within the packed row's
// `perWord` codes per stored element (but not a whole stored element short).
bool weightShapeFits(const std::vector<int64_t>& dims, const std::vector<uint64_t>& packedShape, uint64_t perWord);

}  // namespace ws
