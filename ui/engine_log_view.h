// The EP Ranks tab's engine-log comparison (plan --engine-log): a vLLM, SGLang or llama.cpp
// start-up log, opened with its button or dropped on the tab, held to the prediction at the log's
// own settings - a row a printed figure with predicted, logged, the difference and the verdict
// (core/plan/engine_log_check), its explanation as the tooltip, a differing KV figure in red.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>

#include "core/model/checkpoint.h"
#include "core/plan/engine_log_check.h"

class QLabel;
class QPushButton;
class QTreeWidget;

namespace ws::ui {

class EngineLogView : public QWidget {
  Q_OBJECT
 public:
  explicit EngineLogView(QWidget* parent = nullptr);
  // What the prediction knows besides the log: the checkpoint, the tab's plan (rank 0's weights),
  // its budget's device total and its KV settings where the log states none. Reloads the log.
  void setContext(std::shared_ptr<const Checkpoint> c, const plan::LogCheckRequest& request);
  // Reads and compares a log; a file that is no engine's log is said in the status line.
  void load(const QString& path);
  QTreeWidget* table() const { return table_; }
  QLabel* status() const { return status_; }
  QPushButton* openButton() const { return open_; }

 private:
  void refresh();

  QPushButton* open_;
  QLabel* status_;
  QTreeWidget* table_;
  std::shared_ptr<const Checkpoint> ckpt_;
  plan::LogCheckRequest request_;
  QString path_;
};

}  // namespace ws::ui
