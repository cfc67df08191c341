// The per-expert memory map: layers x experts, each cell a statistic of what that expert holds in
// that layer - bytes, parameters, tensors, scale bytes, or the typical magnitude of its scales
// (a slice of a fused or stacked tensor counts its share). Column -1, set off by a line, holds the
// layer's shared experts, or its dense MLP in a dense layer; dense layers are hatched across the
// expert columns. A click asks for the cell's first tensor, which the main window selects in the
// tree. The scale statistic is gathered off the GUI thread when first chosen, with progress and
// cancel (it reads every scale of the checkpoint). The health maps - each routed expert's norm
// against its layer's median, and its nearest sibling's cosine - come from the last validation's
// value pass (setHealth; core/validate/expert_health.h).
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/model/expert_grid.h"
#include "core/validate/expert_health.h"
#include "ui/checkpoint_view.h"
#include "ui/scale_pass.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace ws::ui {

class HeatmapPlot;

class ExpertMapView : public QWidget, public CheckpointView {
  Q_OBJECT
 public:
  enum Metric { Bytes, Parameters, Tensors, ScaleBytes, TypicalScale, NormOctaves, NearestCosine };

  // The typical-scale statistic comes from `scales`, the pass the main window shares.
  explicit ExpertMapView(ScalePass* scales, QWidget* parent = nullptr);
  void setCheckpoint(std::shared_ptr<const Checkpoint> c) override;
  void setMetric(Metric m);
  // The value pass's expert statistics of the last validation (empty: none ran, or for another
  // checkpoint); the health maps draw them.
  void setHealth(std::vector<val::ExpertHealthCell> cells);
  HeatmapPlot* plot() const { return plot_; }
  QComboBox* metricBox() const { return metric_; }
  void cancel() { scales_->cancel(); }
  // The catalog index of the first tensor in a cell (row = layer, col = expert + 1), or -1.
  int64_t firstTensor(int row, int col) const;
  // Layers drawn as dense (no routed experts; column -1 is their MLP).
  const std::vector<int>& denseLayers() const { return grid_.denseLayers; }
  // The grid drawn (core/model/expert_grid: the same as inspect --json's "experts"), and the value
  // the current metric gives a cell (NaN where the cell has none).
  const ExpertGrid& grid() const { return grid_; }
  double cellValue(int layer, int64_t expert) const;

 signals:
  void tensorRequested(uint32_t tensorIndex);
  void drawn();  // the map shows the chosen metric

 private:
  struct ScaleCell {
    double log2Sum = 0, log2Count = 0;  // scale magnitudes, count-weighted
    bool stacked = false;               // the scale statistic is a whole stacked tensor's
  };
  void draw();
  void gatherScales();
  void onScales();

  ScalePass* scales_;
  HeatmapPlot* plot_;
  QComboBox* metric_;
  QLabel* caption_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  QTimer* poll_;
  bool waiting_ = false;  // for the scale pass
  std::shared_ptr<const Checkpoint> ckpt_;
  ExpertGrid grid_;
  std::vector<ScaleCell> scaleCells_;  // parallel to grid_.cells
  bool scalesGathered_ = false;
  std::vector<const val::ExpertHealthCell*> healthCells_;  // parallel to grid_.cells, into health_
  std::vector<val::ExpertHealthCell> health_;
};

}  // namespace ws::ui
