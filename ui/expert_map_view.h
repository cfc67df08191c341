// The per-expert memory map: layers x experts, each cell the bytes that expert holds in that layer
// (a slice of a fused or stacked tensor counts its share). Column -1 holds the layer's shared
// experts, or its dense MLP in a dense layer - the tooltip says which. A click asks for the cell's
// first tensor, which the main window selects in the tree.
#pragma once

#include <QWidget>
#include <vector>

#include "core/model/checkpoint.h"

class QLabel;

namespace ws::ui {

class HeatmapPlot;

class ExpertMapView : public QWidget {
  Q_OBJECT
 public:
  explicit ExpertMapView(QWidget* parent = nullptr);
  void setCheckpoint(const Checkpoint* c);
  HeatmapPlot* plot() const { return plot_; }
  // The catalog index of the first tensor in a cell (row = layer, col = expert + 1), or -1.
  int64_t firstTensor(int row, int col) const;

 signals:
  void tensorRequested(uint32_t tensorIndex);

 private:
  struct Cell {
    double bytes = 0;
    int64_t first = -1;
    int tensors = 0;
    bool dense = false;
  };
  HeatmapPlot* plot_;
  QLabel* caption_;
  std::vector<Cell> cells_;
  int rows_ = 0, cols_ = 0;
};

}  // namespace ws::ui
