#include "ui/open_progress.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>

namespace ws::ui {

OpenProgress::OpenProgress(QWidget* parent)
    : QWidget(parent), label_(new QLabel), bar_(new QProgressBar), cancel_(new QPushButton(tr("Cancel"))), poll_(new QTimer(this)) {
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(label_);
  row->addWidget(bar_);
  row->addWidget(cancel_);
  bar_->setMaximumWidth(160);
  bar_->setTextVisible(false);
  cancel_->setToolTip(tr("Stop opening (Esc): the checkpoint shown stays as it is"));
  connect(cancel_, &QPushButton::clicked, this, &OpenProgress::cancelRequested);
  connect(poll_, &QTimer::timeout, this, &OpenProgress::refresh);
  hide();
}

void OpenProgress::start(std::shared_ptr<const JobState> state) {
  state_ = std::move(state);
  refresh();
  poll_->start(100);
  show();
}

void OpenProgress::stop() {
  poll_->stop();
  state_.reset();
  hide();
}

QString OpenProgress::text() const { return label_->text(); }

void OpenProgress::refresh() {
  if (!state_) return;
  const uint64_t total = state_->total, done = state_->done;
  if (total == 0) {
    bar_->setRange(0, 0);  // busy: nothing counted yet (listing the files, or a local open)
    label_->clear();       // the summary beside it says what is opening
    return;
  }
  state_->showOn(bar_);
  label_->setText(tr("%1: %2 of %3").arg(QString::fromLatin1(state_->phase.load())).arg(done).arg(total));
}

}  // namespace ws::ui
