// The desktop main window: open a checkpoint (dialog, drag and drop, command line, recent files),
// browse its tensor tree with a filter, see the facts of the selected tensor (and the findings on
// it), and reach every view from its tabs: per-expert and per-EP-rank memory maps, scale
// histograms, dequant preview, validation findings, full load.
#pragma once

#include <QMainWindow>
#include <memory>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/util/error.h"
#include "ui/job_runner.h"  // and JobState

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QSortFilterProxyModel;
class QTabWidget;
class QTextBrowser;
class QTreeView;

namespace ws::ui {

class CheckpointView;
class ExpertMapView;
class FindingsView;
class LoadView;
class OpenProgress;
class PreviewView;
class RankMapView;
class ScaleHistogramView;
class ScalePass;
class TensorTreeModel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens off the GUI thread; checkpointOpened or openFailed follows, unless cancelOpen() comes
  // first (the status bar's Cancel, Esc): then nothing follows and the checkpoint shown stays.
  void openPath(const QString& path);
  void cancelOpen();
  bool opening() const { return bool(openState_); }
  OpenProgress* openProgress() const { return openProgress_; }
  const Checkpoint* checkpoint() const;
  TensorTreeModel* treeModel() const { return model_; }
  QTreeView* treeView() const { return tree_; }
  QLineEdit* filterEdit() const { return filter_; }
  // How the filter text matches full tensor names: substring, glob (* ? [...]) or regex.
  QComboBox* filterModeBox() const { return filterMode_; }
  QTabWidget* tabs() const { return tabs_; }
  ExpertMapView* expertMap() const { return experts_; }
  RankMapView* rankMap() const { return ranks_; }
  ScaleHistogramView* histograms() const { return histograms_; }
  ScalePass* scalePass() const { return scales_; }
  PreviewView* preview() const { return preview_; }
  FindingsView* findings() const { return findings_; }
  LoadView* loadView() const { return load_; }
  // The built-in views' tabs, in the order of the view table (ui/view_table).
  enum Tab { TensorsTab, ExpertsTab, RanksTab, ScalesTab, PreviewTab, FindingsTab, LoadTab, MetadataTab };
  void showTab(Tab t) { showTab(int(t)); }
  void showTab(int index);
  // The page of the Tensors tab (the filter and the tree), built by the view table.
  QWidget* makeTreePage();
  // The catalog index of the tensor selected in the tree, or -1.
  int64_t selectedTensor() const;

 public slots:
  // Shows tensor `tensorIndex` of the catalog in the tree and selects it (the filter is cleared).
  // (A slot: the view table's pages are connected to it by signal name.)
  void selectTensor(uint32_t tensorIndex);

 signals:
  void checkpointOpened();
  void openFailed(const QString& message);

 protected:
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;
  void closeEvent(QCloseEvent* e) override;

 private:
  using OpenResult = Result<std::shared_ptr<const Checkpoint>>;
  void buildMenus();
  void onOpened(OpenResult r);
  void showDetails(const QModelIndex& proxyIndex);
  void copySelectedName();
  void rememberRecent(const QString& path);
  void refreshRecentMenu();
  void applyFilter();
  void previewSelected();
  void histogramOfSelected();

  JobRunner jobs_;
  std::shared_ptr<JobState> openState_;  // the open running now: its progress and its cancel flag
  OpenProgress* openProgress_;
  QAction* cancelOpenAction_ = nullptr;
  TensorTreeModel* model_;
  QSortFilterProxyModel* proxy_;
  QTreeView* tree_;
  QLineEdit* filter_;
  QComboBox* filterMode_;
  QTextBrowser* details_;
  QLabel* summary_;
  QTabWidget* tabs_;
  ScalePass* scales_;  // before the views that share it
  std::vector<CheckpointView*> views_;  // every page of the view table that takes the checkpoint
  ExpertMapView* experts_ = nullptr;
  RankMapView* ranks_ = nullptr;
  ScaleHistogramView* histograms_ = nullptr;
  PreviewView* preview_ = nullptr;
  FindingsView* findings_ = nullptr;
  LoadView* load_ = nullptr;
  std::shared_ptr<const Checkpoint> ckpt_;
  QMenu* recentMenu_ = nullptr;
  QString pendingPath_;
};

}  // namespace ws::ui
