// The per-EP-rank memory map: for an EP size, placement (linear, round-robin, or an EPLB map
// file), remainder policy and GPU budget chosen in its controls, what every rank holds - stacked
// bars by category, the runtime reserves and the KV cache for the requested concurrency at the
// chosen context length and KV dtype, the budget line, each rank's predicted load peak and
// headroom, the tokens that fit and the maximum concurrency per rank, the imbalance, and the
// fewest GPUs on which the requests fit (plan --fit). With a host offload chosen (llama.cpp
// --n-cpu-moe, --cpu-offload-gb, KTransformers), a panel beside the ranks shows the host memory it
// takes - by NUMA node for KTransformers and KT folders - against the host budget. A click on a
// rank lists its experts. The plan (core/plan) runs off the GUI thread and is redone whenever a
// control changes.
#pragma once

#include <QWidget>
#include <memory>

#include "core/plan/deployment_fit.h"
#include "core/plan/ep_plan.h"
#include "core/validate/engines/engine_rules.h"
#include "ui/checkpoint_view.h"
#include "ui/job_runner.h"

class QComboBox;
class QCPAxisRect;
class QCPBars;
class QCPLayoutGrid;
class QCustomPlot;
class QLabel;
class QSpinBox;
class QTreeWidget;
class QTreeWidgetItem;

namespace ws::ui {

class EngineLogView;
class HostOffloadControls;
class PlacementControls;

class RankMapView : public QWidget, public CheckpointView {
  Q_OBJECT
 public:
  explicit RankMapView(QWidget* parent = nullptr);
  ~RankMapView() override;
  void setCheckpoint(std::shared_ptr<const Checkpoint> c) override;

  QSpinBox* epSizeBox() const { return epSize_; }
  QComboBox* placementBox() const;
  QComboBox* remainderBox() const;
  QComboBox* budgetBox() const { return budget_; }
  QSpinBox* contextBox() const { return context_; }      // 0: the model's max_position_embeddings
  QComboBox* kvDtypeBox() const { return kvDtype_; }
  QSpinBox* requestsBox() const { return requests_; }
  // The serving engine whose refusals at this EP layout (on the budget's GPU) the caption shows:
  // plan --runtime vllm|sglang's engine rules. Its check of the latest plan, or null.
  QComboBox* engineBox() const { return engine_; }
  const val::engines::EngineCheck* engineCheck() const { return engineCheck_.get(); }
  // The KV cache and reserves of the latest plan, and (with a budget) the fewest-GPUs answer.
  const plan::KvBudget* kvBudget() const { return kv_.get(); }
  const plan::FitResult* fit() const { return fit_.get(); }
  const plan::PlanOptions* planOptions() const { return opt_.get(); }
  HostOffloadControls* hostOffload() const { return offload_; }
  QCustomPlot* plot() const { return plot_; }
  // The host panel's bars (null when nothing is in host memory) and the bytes they draw: one bar
  // of the ranks' host bytes together, or one a NUMA node.
  QCPBars* hostBars() const { return hostBars_; }
  const std::vector<uint64_t>& hostBytes() const { return hostBytes_; }
  QTreeWidget* rankDetails() const { return details_; }
  QLabel* caption() const { return caption_; }
  // The latest plan (null before the first one, or when the options were refused).
  const plan::PlanResult* result() const { return result_.get(); }
  // Places experts by an EPLB map file ({"physical_to_logical": [...]}, or one row per MoE layer),
  // as choosing "EPLB map file..." does after its dialog.
  void setMapFile(const QString& path);
  // Lists rank r's experts and bytes, as a click on its bar does.
  void selectRank(int rank);
  int selectedRank() const { return selected_; }
  QPoint barCentre(int rank) const;  // for tests that click a bar
  // An engine's start-up log held to this tab's prediction (plan --engine-log): opened with its
  // button, or dropped on the tab.
  EngineLogView* engineLog() const { return engineLog_; }

 signals:
  void planned();                          // result() is current (or the options were refused)
  void tensorRequested(uint32_t tensorIndex);

 public:
  struct Outcome {
    std::shared_ptr<plan::PlanResult> plan;
    QString error;
    std::shared_ptr<plan::PlanOptions> opt;
    std::shared_ptr<plan::KvBudget> kv;
    std::shared_ptr<plan::FitResult> fit;
    QString fitError;
    std::shared_ptr<val::engines::EngineCheck> engine;
    QString engineError;  // the layout is not one the engine forms
  };

 private:
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;
  void replan();
  void onPlanned(Outcome o);
  void draw();
  QString drawHost();  // the host panel; returns its caption line
  void fillTensors(QTreeWidgetItem* list);

  QSpinBox* epSize_;
  PlacementControls* placement_;
  QComboBox* budget_;
  QSpinBox *context_, *requests_;
  QComboBox *kvDtype_, *engine_;
  HostOffloadControls* offload_;
  QCustomPlot* plot_;
  QCPLayoutGrid* panels_;  // the ranks' axes, and the host panel beside them when shown
  QCPAxisRect* hostRect_ = nullptr;
  QCPBars* hostBars_ = nullptr;
  std::vector<uint64_t> hostBytes_;
  QTreeWidget* details_;
  QLabel* caption_;
  EngineLogView* engineLog_;
  JobRunner jobs_;
  std::shared_ptr<const Checkpoint> ckpt_;
  std::shared_ptr<plan::PlanResult> result_;
  std::shared_ptr<plan::PlanOptions> opt_;
  std::shared_ptr<plan::KvBudget> kv_;
  std::shared_ptr<plan::FitResult> fit_;
  QString fitError_;
  std::shared_ptr<val::engines::EngineCheck> engineCheck_;
  QString engineError_;
  int selected_ = -1;
};

}  // namespace ws::ui
