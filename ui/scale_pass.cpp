#include "ui/scale_pass.h"

#include <QtConcurrent/QtConcurrentRun>

namespace ws::ui {

ScalePass::ScalePass(QObject* parent) : QObject(parent), watcher_(new QFutureWatcher<Outcome>(this)), job_(std::make_shared<JobState>()) {
  connect(watcher_, &QFutureWatcher<Outcome>::finished, this, [this] {
    Outcome o = watcher_->result();
    if (o.ckpt != ckpt_) return;  // the pass over the checkpoint open before this one
    result_ = o.report;
    error_ = o.error;
    emit finished();
  });
}

ScalePass::~ScalePass() {
  job_->cancel = true;
  watcher_->waitForFinished();
}

void ScalePass::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  job_->cancel = true;
  watcher_->waitForFinished();
  ckpt_ = std::move(c);
  result_.reset();
  error_.clear();
}

void ScalePass::request() {
  if (!ckpt_ || running()) return;
  if (result_) {
    emit finished();
    return;
  }
  job_ = std::make_shared<JobState>();
  job_->total = ckpt_->logical.size();
  auto ckpt = ckpt_;
  auto job = job_;
  watcher_->setFuture(QtConcurrent::run([ckpt, job]() -> Outcome {
    auto r = num::scaleStatistics(*ckpt, num::ScaleGrouping::Tensor, [&](uint64_t done, uint64_t) {
      job->done = done;
      return !job->cancel;
    });
    if (!r) return {ckpt, nullptr, QString::fromStdString(r.error().message)};
    return {ckpt, std::make_shared<const num::ScaleReport>(std::move(r.value())), {}};
  }));
}

}  // namespace ws::ui
