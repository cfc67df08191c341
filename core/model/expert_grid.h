// The per-expert memory map as data: layers x experts, each cell what that expert holds in that
// layer (bytes, parameters, tensors, scale bytes), with column -1 for the layer's shared experts,
// or its dense MLP in a dense layer. A fused or stacked tensor gives each expert an equal share
// (its bytes and parameters split exactly, the first experts taking the remainder, so every sum
// equals the catalog's). MTP layers' routed experts count like any layer's. One definition for
// the Experts tab, the HTML validation report and `inspect --json`'s "experts" section.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model/checkpoint.h"

namespace ws {

struct ExpertCell {
  uint64_t bytes = 0, parameters = 0, scaleBytes = 0;
  uint32_t tensors = 0;       // stored tensors touching the cell (a stacked tensor touches every expert's)
  int64_t firstTensor = -1;   // catalog index of the first of them
};

struct ExpertGrid {
  int layers = 0;             // rows: layers 0 .. layers-1
  int64_t experts = 0;        // routed expert columns 0 .. experts-1, after column -1
  std::vector<ExpertCell> cells;  // layers x (experts + 1), column -1 first
  std::vector<int> denseLayers;   // layers with no routed expert whose column -1 is a dense MLP

  int64_t columns() const { return experts + 1; }
  // expert -1: the shared experts / dense MLP column.
  const ExpertCell& at(int layer, int64_t expert) const { return cells[size_t(layer) * size_t(columns()) + size_t(expert + 1)]; }
  bool isDense(int layer) const;
};

ExpertGrid expertGrid(const Checkpoint& c);

}  // namespace ws
