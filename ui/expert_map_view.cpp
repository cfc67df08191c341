#include "ui/expert_map_view.h"

#include <QLabel>
#include <QVBoxLayout>

#include <cmath>

#include "core/report/format_bytes.h"
#include "ui/heatmap_plot.h"

namespace ws::ui {

ExpertMapView::ExpertMapView(QWidget* parent) : QWidget(parent), plot_(new HeatmapPlot), caption_(new QLabel) {
  plot_->setAxisLabels(tr("expert  (-1: shared experts, or the dense MLP)"), tr("layer"), tr("bytes"));
  plot_->setGradient(magnitudeGradient());
  plot_->setTooltip([this](int row, int col, double) {
    const Cell& c = cells_[size_t(row) * cols_ + col];
    if (!c.tensors) return tr("layer %1: nothing here").arg(row);
    const QString what = col == 0 ? (c.dense ? tr("dense MLP") : tr("shared experts")) : tr("expert %1").arg(col - 1);
    return tr("layer %1, %2\n%3 in %4 tensors (a fused or stacked tensor counts its share)\nclick to select it in the tree")
        .arg(row)
        .arg(what)
        .arg(QString::fromStdString(formatBytes(uint64_t(c.bytes))))
        .arg(c.tensors);
  });
  connect(plot_, &HeatmapPlot::cellClicked, this, [this](int row, int col) {
    if (int64_t t = firstTensor(row, col); t >= 0) emit tensorRequested(uint32_t(t));
  });
  caption_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(caption_);
  layout->addWidget(plot_, 1);
}

int64_t ExpertMapView::firstTensor(int row, int col) const {
  if (row < 0 || col < 0 || row >= rows_ || col >= cols_) return -1;
  return cells_[size_t(row) * cols_ + col].first;
}

void ExpertMapView::setCheckpoint(const Checkpoint* c) {
  cells_.clear();
  rows_ = cols_ = 0;
  if (!c) return;
  int maxLayer = -1;
  int64_t experts = std::max<int64_t>(0, c->model.numExperts);
  for (const auto& t : c->tensors) {
    if (t.role != Role::RoutedExpert && t.role != Role::SharedExpert && t.role != Role::DenseMlp) continue;
    maxLayer = std::max(maxLayer, t.layer);
    experts = std::max<int64_t>(experts, t.expert + 1);
  }
  rows_ = maxLayer + 1;
  cols_ = int(experts) + 1;
  if (rows_ <= 0) {
    caption_->setText(tr("No expert or MLP tensors in this checkpoint."));
    plot_->setMatrix({}, 0, 0);
    return;
  }
  cells_.assign(size_t(rows_) * cols_, Cell{});
  auto add = [&](int layer, int col, double bytes, uint32_t tensor, bool dense) {
    Cell& cell = cells_[size_t(layer) * cols_ + col];
    cell.bytes += bytes;
    if (cell.first < 0) cell.first = tensor;
    ++cell.tensors;
    cell.dense |= dense;
  };
  for (uint32_t i = 0; i < c->tensors.size(); ++i) {
    const TensorRecord& t = c->tensors[i];
    if (t.layer < 0) continue;
    if (t.role == Role::SharedExpert || t.role == Role::DenseMlp) {
      add(t.layer, 0, double(t.bytes), i, t.role == Role::DenseMlp);
    } else if (t.role == Role::RoutedExpert) {
      if (t.expert >= 0) {
        add(t.layer, t.expert + 1, double(t.bytes), i, false);
      } else if (!t.shape.empty() && t.shape[0] > 0) {  // fused or stacked: each expert its share
        const uint64_t e = std::min<uint64_t>(t.shape[0], uint64_t(experts));
        for (uint64_t k = 0; k < e; ++k) add(t.layer, int(k) + 1, double(t.bytes) / double(t.shape[0]), i, false);
      }
    }
  }
  std::vector<double> values(cells_.size(), NAN);
  for (size_t k = 0; k < cells_.size(); ++k)
    if (cells_[k].tensors) values[k] = cells_[k].bytes;
  plot_->setMatrix(values, rows_, cols_, -1);
  caption_->setText(tr("%1 layers x %2 routed experts; colour: bytes per expert and layer. Hover for details, click to find it in the tree.")
                        .arg(rows_)
                        .arg(experts));
}

}  // namespace ws::ui
