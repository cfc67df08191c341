#include "ui/scale_pass.h"

namespace ws::ui {

ScalePass::ScalePass(QObject* parent) : QObject(parent), jobs_(this) {}

ScalePass::~ScalePass() = default;  // a pass still reading is cancelled and dropped; nothing waits

void ScalePass::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  jobs_.drop(0);  // the pass over the previous checkpoint stops, and its report is dropped
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
  auto ckpt = ckpt_;
  jobs_.start(
      0,
      [ckpt](JobState& job) -> Outcome {
        auto r = num::scaleStatistics(*ckpt, num::ScaleGrouping::Tensor, [&](uint64_t done, uint64_t total) {
          job.total = total;
          job.done = done;
          return !job.cancel;
        });
        if (!r) return {ckpt, nullptr, QString::fromStdString(r.error().message)};
        return {ckpt, std::make_shared<const num::ScaleReport>(std::move(r.value())), {}};
      },
      [this](Outcome o) {
        if (o.ckpt != ckpt_) return;  // the pass over the checkpoint open before this one
        result_ = o.report;
        error_ = o.error;
        emit finished();
      });
}

}  // namespace ws::ui
