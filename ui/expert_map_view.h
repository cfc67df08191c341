// The per-expert memory map: layers x experts, each cell a statistic of what that expert holds in
// that layer - bytes, parameters, tensors, scale bytes, or the typical magnitude of its scales
// (a slice of a fused or stacked tensor counts its share). Column -1, set off by a line, holds the
// layer's shared experts, or its dense MLP in a dense layer; dense layers are hatched across the
// expert columns. A click asks for the cell's first tensor, which the main window selects in the
// tree. The scale statistic is gathered off the GUI thread when first chosen, with progress and
// cancel (it reads every scale of the checkpoint).
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "core/model/checkpoint.h"
#include "ui/scale_pass.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace ws::ui {

class HeatmapPlot;

class ExpertMapView : public QWidget {
  Q_OBJECT
 public:
  enum Metric { Bytes, Parameters, Tensors, ScaleBytes, TypicalScale };

  // The typical-scale statistic comes from `scales`, the pass the main window shares.
  explicit ExpertMapView(ScalePass* scales, QWidget* parent = nullptr);
  void setCheckpoint(std::shared_ptr<const Checkpoint> c);
  void setMetric(Metric m);
  HeatmapPlot* plot() const { return plot_; }
  QComboBox* metricBox() const { return metric_; }
  void cancel() { scales_->cancel(); }
  // The catalog index of the first tensor in a cell (row = layer, col = expert + 1), or -1.
  int64_t firstTensor(int row, int col) const;
  // Layers drawn as dense (no routed experts; column -1 is their MLP).
  const std::vector<int>& denseLayers() const { return dense_; }

 signals:
  void tensorRequested(uint32_t tensorIndex);
  void drawn();  // the map shows the chosen metric

 private:
  struct Cell {
    double bytes = 0, parameters = 0, scaleBytes = 0;
    double log2Sum = 0, log2Count = 0;  // scale magnitudes, count-weighted
    bool stackedScales = false;         // the scale statistic is a whole stacked tensor's
    int64_t first = -1;
    int tensors = 0;
    bool dense = false;
  };
  void draw();
  void gatherScales();
  void onScales();
  double value(const Cell& c) const;

  ScalePass* scales_;
  HeatmapPlot* plot_;
  QComboBox* metric_;
  QLabel* caption_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  QTimer* poll_;
  bool waiting_ = false;  // for the scale pass
  std::shared_ptr<const Checkpoint> ckpt_;
  std::vector<Cell> cells_;
  std::vector<int> dense_;
  int rows_ = 0, cols_ = 0;
  int64_t experts_ = 0;
  bool scalesGathered_ = false;
};

}  // namespace ws::ui
