// Scale histograms: the magnitudes of a checkpoint's quantization scales (FP8 block scales,
// NVFP4/MXFP4 block scales, integer group scales, GGUF d / dmin / sub-block scales) per tensor,
// layer, projection, expert or for the whole checkpoint, on linear or log axes. Bins far from the
// group's typical scale are drawn red (the validator's outlier test: 3 octaves and 6 robust
// deviations from the median); zero, NaN and infinite scales are counted beside the plot; the
// validation findings about these scales are listed under it and lead to their tensor.
// The scales are read once (ScalePass, shared with the expert map), off the GUI thread with
// progress and cancel, when the view is first shown for a checkpoint; every grouping is regrouped
// from that pass without reading again.
#pragma once

#include <QWidget>
#include <atomic>
#include <memory>

#include "core/numerics/scale_stats.h"
#include "core/validate/finding.h"
#include "ui/checkpoint_view.h"
#include "ui/job_runner.h"
#include "ui/scale_pass.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;
class QTreeWidget;

namespace ws::ui {

class ScaleHistogramView : public QWidget, public CheckpointView {
  Q_OBJECT
 public:
  explicit ScaleHistogramView(ScalePass* scales, QWidget* parent = nullptr);
  ~ScaleHistogramView() override;
  void setCheckpoint(std::shared_ptr<const Checkpoint> c) override;
  // The findings of the last validation; the ones about scales are listed with their groups.
  void setFindings(const std::vector<val::Finding>& findings);
  // The histogram of one tensor's scales (grouping by tensor).
  void showTensor(uint32_t tensorIndex);
  void cancel();

  QComboBox* groupingBox() const { return grouping_; }
  QComboBox* groupBox() const { return group_; }
  QComboBox* kindBox() const { return kind_; }
  QCheckBox* logX() const { return logX_; }
  QCheckBox* logY() const { return logY_; }
  QCustomPlot* plot() const { return plot_; }
  QTreeWidget* findingsList() const { return findings_; }
  QLabel* caption() const { return caption_; }
  const num::ScaleReport* report() const { return report_.get(); }
  // What is drawn: the bins of the current group and kind, and which are outliers.
  const num::Histogram& histogram() const { return hist_; }
  const std::vector<bool>& outlierBins() const { return outliers_; }

 signals:
  void computed();  // report() is current, or the run failed or was cancelled
  void tensorRequested(uint32_t tensorIndex);

 protected:
  void showEvent(QShowEvent* e) override;

 private:
  struct Outcome {
    std::shared_ptr<const Checkpoint> ckpt;  // what it was computed for
    std::shared_ptr<num::ScaleReport> report;
  };
  void compute();
  void onComputed(Outcome o);
  void onScales();
  void showWaiting(bool on);  // the progress of the scale pass, and its cancel
  void fillGroups();
  void fillKinds();
  void draw();
  void listFindings();

  ScalePass* scales_;
  QComboBox *grouping_, *group_, *kind_;
  QCheckBox *logX_, *logY_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  QTimer* poll_;
  QCustomPlot* plot_;
  QLabel* caption_;
  QTreeWidget* findings_;
  JobRunner jobs_;
  std::shared_ptr<const Checkpoint> ckpt_;
  std::shared_ptr<num::ScaleReport> report_;
  bool waiting_ = false;  // for the scale pass
  std::vector<val::Finding> allFindings_;
  num::Histogram hist_;
  std::vector<bool> outliers_;
  QString wantedGroup_;
};

}  // namespace ws::ui
