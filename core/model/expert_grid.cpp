#include "core/model/expert_grid.h"

#include <algorithm>

namespace ws {

namespace {

bool inRoutedColumns(const TensorRecord& t) { return t.role == Role::RoutedExpert || (t.role == Role::Mtp && t.expert >= 0); }
bool inColumnMinusOne(const TensorRecord& t) { return t.role == Role::SharedExpert || t.role == Role::DenseMlp; }

// Part k of n equal parts of `total`, the first (total mod n) parts one larger.
uint64_t share(uint64_t total, uint64_t n, uint64_t k) { return total / n + (k < total % n ? 1 : 0); }

}  // namespace

bool ExpertGrid::isDense(int layer) const { return std::binary_search(denseLayers.begin(), denseLayers.end(), layer); }

ExpertGrid expertGrid(const Checkpoint& c) {
  ExpertGrid g;
  int maxLayer = -1;
  int64_t experts = std::max<int64_t>(0, c.model.numExperts);
  for (const auto& t : c.tensors) {
    if (t.layer < 0 || !(inRoutedColumns(t) || inColumnMinusOne(t))) continue;
    maxLayer = std::max(maxLayer, t.layer);
    if (inRoutedColumns(t)) experts = std::max<int64_t>(experts, t.expert + 1);
  }
  if (maxLayer < 0) return g;
  g.layers = maxLayer + 1;
  g.experts = experts;
  g.cells.assign(size_t(g.layers) * size_t(g.columns()), ExpertCell{});
  auto add = [&](const TensorRecord& t, uint32_t index, int64_t expert, uint64_t n, uint64_t k) {
    ExpertCell& cell = g.cells[size_t(t.layer) * size_t(g.columns()) + size_t(expert + 1)];
    cell.bytes += share(t.bytes, n, k);
    if (t.component == Component::Weight) cell.parameters += share(c.logical[t.logical].parameters, n, k);
    if (t.component == Component::Scale || t.component == Component::GlobalScale) cell.scaleBytes += share(t.bytes, n, k);
    if (cell.firstTensor < 0) cell.firstTensor = index;
    ++cell.tensors;
  };
  std::vector<bool> routed(size_t(g.layers), false), denseMlp(size_t(g.layers), false);
  for (uint32_t i = 0; i < c.tensors.size(); ++i) {
    const TensorRecord& t = c.tensors[i];
    if (t.layer < 0) continue;
    if (inColumnMinusOne(t)) {
      add(t, i, -1, 1, 0);
      denseMlp[size_t(t.layer)] = denseMlp[size_t(t.layer)] || t.role == Role::DenseMlp;
    } else if (inRoutedColumns(t)) {
      if (t.expert >= 0) {
        add(t, i, t.expert, 1, 0);
        routed[size_t(t.layer)] = true;
      } else if (!t.shape.empty() && t.shape[0] > 0) {  // fused or stacked: each expert its share
        const uint64_t n = t.shape[0];
        for (uint64_t k = 0; k < std::min<uint64_t>(n, uint64_t(experts)); ++k) add(t, i, int64_t(k), n, k);
        routed[size_t(t.layer)] = true;
      }
    }
  }
  for (int l = 0; l < g.layers; ++l)
    if (!routed[size_t(l)] && denseMlp[size_t(l)]) g.denseLayers.push_back(l);
  return g;
}

}  // namespace ws
