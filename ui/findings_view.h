// The validation panel: runs every validation rule on the open checkpoint off the GUI thread
// (progress and cancel), lists the findings with a severity filter, goes to a finding's tensor on
// a click, and exports the report as JSON, Markdown, HTML or JUnit (by the file's suffix).
#pragma once

#include <QWidget>
#include <atomic>
#include <memory>

#include "core/validate/validator.h"
#include "ui/checkpoint_view.h"
#include "ui/job_runner.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;
class QTimer;

namespace ws::ui {

class FindingsModel;

class FindingsView : public QWidget, public CheckpointView {
  Q_OBJECT
 public:
  explicit FindingsView(QWidget* parent = nullptr);
  ~FindingsView() override;
  void setCheckpoint(std::shared_ptr<const Checkpoint> c) override;
  void run();
  // The open checkpoint's files against the Hub's record of hf://ORG/REPO[@REV] (validate --hub).
  void runAgainstHub(const QString& location);
  void cancel();
  // Writes the report; the format follows the suffix (.json, .md, .html, .xml for JUnit).
  // Returns an empty string or the error.
  QString exportTo(const QString& path) const;
  void setMinimumSeverity(val::Severity s);

  FindingsModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QComboBox* severityBox() const { return severity_; }
  QPushButton* runButton() const { return run_; }
  QLabel* summary() const { return summary_; }
  // The deployment the run is held to: the runtime (empty: none), and for vLLM / SGLang the
  // layout and GPU; the verdict line of the last run with an engine.
  QComboBox* runtimeBox() const { return runtime_; }
  QSpinBox* tpBox() const { return tp_; }
  QSpinBox* dpBox() const { return dp_; }
  QSpinBox* epBox() const { return ep_; }
  QComboBox* gpuBox() const { return gpu_; }
  QLabel* verdict() const { return verdict_; }
  // The options the Validate button runs with (the deployment row's choices).
  val::ValidateOptions options() const;
  const val::ValidationReport* report() const;

 signals:
  void finished();  // report() is current, or the run failed or was cancelled
  void tensorRequested(uint32_t tensorIndex);

 private:
  void start(val::ValidateOptions opt);
  void onFinished(std::shared_ptr<val::ValidationReport> rep);
  void showIdle();
  void updateDeploymentControls();

  FindingsModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QComboBox* severity_;
  QPushButton *run_, *cancel_, *export_;
  QProgressBar* progress_;
  QLabel* summary_;
  QComboBox *runtime_, *gpu_;
  QSpinBox *tp_, *dp_, *ep_;
  QLabel* verdict_;
  QTimer* poll_;
  JobRunner jobs_;
  std::shared_ptr<JobState> job_;
  std::shared_ptr<const Checkpoint> ckpt_;
};

}  // namespace ws::ui
