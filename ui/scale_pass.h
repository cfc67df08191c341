// The one read of every scale in the open checkpoint, grouped per tensor, shared by the views that
// need it (the Scales tab, the expert map's typical-scale statistic): reading them is the long part
// (minutes for the 63 GB of scales in Kimi-K2), so it happens once, off the GUI thread, when the
// first view asks, with progress and cancel; every grouping is regrouped from it.
#pragma once

#include <QObject>
#include <memory>

#include "core/numerics/scale_stats.h"
#include "ui/job_runner.h"

namespace ws::ui {

class ScalePass : public QObject {
  Q_OBJECT
 public:
  using Report = std::shared_ptr<const num::ScaleReport>;

  explicit ScalePass(QObject* parent = nullptr);
  ~ScalePass() override;
  // Forgets the last pass (cancelling one that runs) and waits for a request.
  void setCheckpoint(std::shared_ptr<const Checkpoint> c);
  // Starts the pass unless it is done or running; finished() follows either way once it is over.
  void request();
  void cancel() { jobs_.cancel(0); }
  bool running() const { return jobs_.running(0); }
  // The per-tensor report (null before the pass ends, or when it was cancelled or failed).
  Report result() const { return result_; }
  const std::shared_ptr<const Checkpoint>& checkpoint() const { return ckpt_; }
  const JobState& job() { return jobs_.state(0); }
  QString error() const { return error_; }

 signals:
  void finished();  // result() is set, or error() says why not

 private:
  struct Outcome {
    std::shared_ptr<const Checkpoint> ckpt;
    Report report;
    QString error;
  };
  JobRunner jobs_;
  std::shared_ptr<const Checkpoint> ckpt_;
  Report result_;
  QString error_;
};

}  // namespace ws::ui
