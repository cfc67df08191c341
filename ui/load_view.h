// The full load: choose the device, EP size and rank and the derived buffers to build, then
// stream the checkpoint (that rank of it) onto the device with progress, GB/s, ETA and cancel.
// The residency view follows: bytes per category predicted by the planner beside what the load
// measured, the device's memory before and after, the derived buffers and the deferred tensors.
// An optional glob frees the matching tensors and derived buffers right after the load (the seed
// runtime's free_matching), and the view says what came back. The load is then released, so the
// device is free again.
#pragma once

#include <QElapsedTimer>
#include <QWidget>
#include <atomic>
#include <functional>
#include <memory>

#include "core/load/loader.h"
#include "ui/checkpoint_view.h"
#include "ui/job_runner.h"

class QCheckBox;
class QComboBox;
class QCPBarsGroup;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTimer;
class QTreeWidget;

namespace ws::ui {

class PlacementControls;

class LoadView : public QWidget, public CheckpointView {
  Q_OBJECT
 public:
  using BackendFactory = std::function<Result<std::unique_ptr<load::DeviceBackend>>(const std::string& device)>;

  explicit LoadView(QWidget* parent = nullptr);
  ~LoadView() override;
  void setCheckpoint(std::shared_ptr<const Checkpoint> c) override;
  // Where backends come from: load::makeBackend unless a test hands in its own.
  void setBackendFactory(BackendFactory f) { factory_ = std::move(f); }
  void start();
  void cancel();
  bool running() const;

  QComboBox* deviceBox() const { return device_; }
  QSpinBox* epSizeBox() const { return epSize_; }
  QSpinBox* epRankBox() const { return epRank_; }
  PlacementControls* placement() const { return placement_; }
  QCheckBox* fusedGateUpBox() const { return fusedGateUp_; }
  QLineEdit* freeGlobEdit() const { return freeGlob_; }
  QPushButton* startButton() const { return start_; }
  QPushButton* cancelButton() const { return cancel_; }
  QLabel* status() const { return status_; }
  QTreeWidget* residency() const { return residency_; }
  QCustomPlot* plot() const { return plot_; }
  // The last load's report (null before one finished; after a failure or cancel, too).
  const load::LoadReport* report() const { return report_.get(); }
  QString error() const { return error_; }

 signals:
  void finished();  // report() is set, or error() says why not

 private:
  struct Outcome {
    std::shared_ptr<const Checkpoint> ckpt;  // what was loaded
    std::shared_ptr<load::LoadReport> report;
    std::vector<std::pair<std::string, uint64_t>> derived;          // name (kind), bytes
    std::vector<std::pair<std::string, std::string>> deferred;      // name, reason
    QString error;
    std::string freeGlob;    // what was freed after the load (empty: nothing)
    load::Freed freed;
    uint64_t freeAfterFreeing = 0;
    uint64_t liveAfter = 0;  // allocations left on the device after release (must be 0)
  };
  void onFinished(Outcome o);
  void updateProgress();
  void showResidency(const Outcome& o);

  QComboBox* device_;
  QSpinBox *epSize_, *epRank_;
  PlacementControls* placement_;
  QCheckBox *fusedGateUp_, *transpose_, *bf16_;
  QLineEdit* freeGlob_;
  QPushButton *start_, *cancel_;
  QProgressBar* progress_;
  QLabel* status_;
  QCustomPlot* plot_;
  QCPBarsGroup* barsGroup_;
  QTreeWidget* residency_;
  QTimer* poll_;
  QElapsedTimer clock_;
  JobRunner jobs_;
  BackendFactory factory_;
  std::shared_ptr<const Checkpoint> ckpt_;
  std::shared_ptr<load::LoadReport> report_;
  QString error_;
  std::shared_ptr<JobState> job_;
};

}  // namespace ws::ui
