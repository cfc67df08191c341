// The dequant preview: a tile of one tensor decoded to F32 and drawn as a heatmap (wheel zooms,
// drag pans, a colormap with its legend, the value under the cursor), with the tile's statistics
// beside it. Decoded on the GPU when kernels/ registered one (bit-identical to the CPU reference),
// else by the CPU reference; the device used is shown. Decoding runs off the GUI thread.
#pragma once

#include <QWidget>
#include <memory>
#include <vector>

#include "core/model/checkpoint.h"
#include "ui/checkpoint_view.h"
#include "ui/job_runner.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace ws::ui {

class HeatmapPlot;

class PreviewView : public QWidget, public CheckpointView {
  Q_OBJECT
 public:
  explicit PreviewView(QWidget* parent = nullptr);
  ~PreviewView() override;
  void setCheckpoint(std::shared_ptr<const Checkpoint> c) override;
  // Previews stored tensor `tensorIndex`: a weight decodes with its scales; a bias or scale named
  // on its own shows its own numbers.
  void showTensor(uint32_t tensorIndex);
  // The tile: expert (stacked or fused tensors; -1 otherwise), first row and column, tile size.
  void setTile(int64_t expert, uint64_t row, uint64_t col, int size);

  HeatmapPlot* plot() const { return plot_; }
  QLabel* deviceLabel() const { return device_; }
  QLabel* valueLabel() const { return value_; }
  QLabel* statsLabel() const { return stats_; }
  QComboBox* colormapBox() const { return colormap_; }
  QComboBox* numericsBox() const { return numerics_; }
  int32_t tensor() const { return tensor_; }
  // The decoded tile, row-major, tileRows() x tileCols(); its first row and column in the selection.
  const std::vector<float>& tileValues() const { return tile_; }
  int tileRows() const { return tileRows_; }
  int tileCols() const { return tileCols_; }
  QString error() const { return error_; }

 signals:
  void previewReady();  // the tile (or an error) is shown

 private:
  struct Tile {
    std::shared_ptr<const Checkpoint> ckpt;  // what it was decoded from
    std::vector<float> values;
    int rows = 0, cols = 0;
    uint64_t selectionRows = 0, selectionCols = 0;
    QString device, error;
  };
  void refresh();
  void onTile(Tile t);
  void onReady();
  void applyColormap();

  QLabel* title_;
  QSpinBox *expert_, *row_, *col_;
  QComboBox *size_, *colormap_, *numerics_;
  QPushButton* resetZoom_;
  HeatmapPlot* plot_;
  QLabel *device_, *value_, *stats_;
  JobRunner jobs_;
  std::shared_ptr<const Checkpoint> ckpt_;
  int32_t tensor_ = -1;
  std::vector<float> tile_;
  int tileRows_ = 0, tileCols_ = 0;
  QString error_;
};

}  // namespace ws::ui
