// The status bar's part while a checkpoint opens: what the open is doing (a remote one: the
// headers fetched so far, "3 of 163"), a bar, and Cancel. It shows only while an open runs; a
// local open is over before anyone could read it, a remote one of many shards is not.
#pragma once

#include <QWidget>
#include <memory>

#include "ui/job_state.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTimer;

namespace ws::ui {

class OpenProgress : public QWidget {
  Q_OBJECT
 public:
  explicit OpenProgress(QWidget* parent = nullptr);
  // Shows the progress of the open `state` describes (its phase, done and total), until stop().
  void start(std::shared_ptr<const JobState> state);
  void stop();
  QPushButton* cancelButton() const { return cancel_; }
  QString text() const;  // what the label says now

 signals:
  void cancelRequested();

 private:
  void refresh();

  QLabel* label_;
  QProgressBar* bar_;
  QPushButton* cancel_;
  QTimer* poll_;
  std::shared_ptr<const JobState> state_;
};

}  // namespace ws::ui
