// Two checkpoints side by side: the per-layer x per-expert error map of weightscope diff (worst
// relative error of the cell's tensors; column -1 holds each layer's non-expert tensors, row 0
// the tensors outside layers), the tensors of a clicked cell, and previews of A, B and A - B;
// beside the cell's tensors, a Metadata tab: every key besides the tensors that differs (diff's
// own list, core/diff/metadata_diff). The comparison runs off the GUI thread with progress and cancel.
#pragma once

#include <QWidget>
#include <atomic>
#include <memory>

#include "core/diff/diff.h"
#include "core/diff/diff_cells.h"
#include "core/diff/metadata_diff.h"
#include "core/diff/unit_matrix.h"
#include "ui/job_runner.h"

class QLabel;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTimer;
class QTreeWidget;

namespace ws::ui {

class HeatmapPlot;

class DiffWindow : public QWidget {
  Q_OBJECT
 public:
  explicit DiffWindow(QWidget* parent = nullptr);
  ~DiffWindow() override;

  void start(const QString& pathA, const QString& pathB);
  void cancel();
  // Selects map cell (row, col) as a click would: lists its tensors and previews the worst.
  void selectCell(int row, int col);
  // The map cell (row, col) of the worst cell (diff::DiffCells::worstCell), or (-1, -1).
  QPoint worstCell() const;

  const diff::DiffReport* report() const { return report_.get(); }
  HeatmapPlot* errorMap() const { return map_; }
  QTreeWidget* cellList() const { return list_; }
  // The Metadata tab: one row a differing key (file, key, A, B), in diff's order.
  QTreeWidget* metadataList() const { return metadata_; }
  QTabWidget* lists() const { return tabs_; }
  HeatmapPlot* preview(int which) const { return which == 0 ? previewA_ : which == 1 ? previewB_ : previewD_; }
  QString previewKey() const { return previewKey_; }

 signals:
  void finished();             // the comparison is done (report() is set) or failed / was cancelled
  void previewReady();

 private:
  struct Outcome {
    std::shared_ptr<const Checkpoint> a, b;
    std::shared_ptr<diff::DiffReport> report;
    QString error;
    std::vector<diff::MetadataDifference> metadata;
  };
  struct Preview {
    QString key, error;
    diff::Matrix a, b;
  };
  void onFinished(Outcome o);
  void buildMap();
  void listMetadata(const std::vector<diff::MetadataDifference>& differences);
  void showPair(int pairIndex);
  void onPreview(Preview pv);

  QLabel* header_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  QTimer* poll_;
  HeatmapPlot* map_;
  QTreeWidget* list_;
  QTreeWidget* metadata_;
  QTabWidget* tabs_;
  HeatmapPlot *previewA_, *previewB_, *previewD_;
  QLabel* previewStats_;
  JobRunner jobs_;
  std::shared_ptr<JobState> job_;
  std::shared_ptr<const Checkpoint> a_, b_;
  std::shared_ptr<diff::DiffReport> report_;
  diff::DiffCells cells_;  // the map's cells (core/diff/diff_cells)
  int rows_ = 0, cols_ = 0;
  QString previewKey_;
};

}  // namespace ws::ui
