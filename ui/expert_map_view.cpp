#include "ui/expert_map_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "core/report/format_bytes.h"
#include "ui/heatmap_plot.h"
#include "ui/remembered.h"

namespace ws::ui {

namespace {

const char* kMetricLegend[] = {"bytes", "parameters", "tensors", "scale bytes", "log2 typical |scale|"};

}  // namespace

ExpertMapView::ExpertMapView(ScalePass* scales, QWidget* parent)
    : QWidget(parent),
      scales_(scales),
      plot_(new HeatmapPlot),
      metric_(new QComboBox),
      caption_(new QLabel),
      progress_(new QProgressBar),
      cancel_(new QPushButton(tr("Cancel"))),
      poll_(new QTimer(this)) {
  progress_->setVisible(false);
  cancel_->setVisible(false);
  connect(cancel_, &QPushButton::clicked, this, &ExpertMapView::cancel);
  connect(poll_, &QTimer::timeout, this, [this] { scales_->job().showOn(progress_); });
  metric_->addItem(tr("bytes"), Bytes);
  metric_->addItem(tr("parameters"), Parameters);
  metric_->addItem(tr("tensors"), Tensors);
  metric_->addItem(tr("scale bytes"), ScaleBytes);
  metric_->addItem(tr("typical |scale| (geometric mean)"), TypicalScale);
  remember(metric_, "experts/metric");
  plot_->setAxisLabels(tr("expert  (-1: shared experts, or the dense MLP)"), tr("layer"), tr("bytes"));
  plot_->setGradient(magnitudeGradient());
  plot_->setTooltip([this](int row, int col, double v) {
    const Cell& c = cells_[size_t(row) * cols_ + col];
    if (!c.tensors) return c.dense ? tr("layer %1: a dense layer, no routed experts").arg(row) : tr("layer %1: nothing here").arg(row);
    const QString what = col == 0 ? (c.dense ? tr("dense MLP") : tr("shared experts")) : tr("expert %1").arg(col - 1);
    QString scale = std::isfinite(v) && metric_->currentData().toInt() == TypicalScale
                        ? tr("\ntypical |scale| 2^%1 = %2%3").arg(v, 0, 'f', 2).arg(std::exp2(v), 0, 'g', 4).arg(c.stackedScales ? tr(" (the whole stacked tensor's)") : QString())
                        : QString();
    return tr("layer %1, %2\n%3 in %4 tensors, %5 parameters%6\n(a fused or stacked tensor counts its share)\nclick to select it in the tree")
        .arg(row)
        .arg(what)
        .arg(QString::fromStdString(formatBytes(uint64_t(c.bytes))))
        .arg(c.tensors)
        .arg(QString::fromStdString(formatCount(uint64_t(c.parameters))))
        .arg(scale);
  });
  connect(plot_, &HeatmapPlot::cellClicked, this, [this](int row, int col) {
    if (int64_t t = firstTensor(row, col); t >= 0) emit tensorRequested(uint32_t(t));
  });
  connect(metric_, &QComboBox::currentIndexChanged, this, [this] { setMetric(Metric(metric_->currentData().toInt())); });
  connect(scales_, &ScalePass::finished, this, &ExpertMapView::onScales);
  caption_->setWordWrap(true);
  auto* top = new QHBoxLayout;
  auto* label = new QLabel(tr("&Colour by:"));
  label->setBuddy(metric_);
  top->addWidget(label);
  top->addWidget(metric_);
  top->addWidget(caption_, 1);
  top->addWidget(progress_);
  top->addWidget(cancel_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(plot_, 1);
}

void ExpertMapView::onScales() {
  if (!waiting_ || scales_->checkpoint() != ckpt_) return;  // another view's request, or another checkpoint
  waiting_ = false;
  poll_->stop();
  progress_->setVisible(false);
  cancel_->setVisible(false);
  const ScalePass::Report rep = scales_->result();
  if (!rep) {  // cancelled: back to bytes, and the scales can be asked for again
    const QSignalBlocker block(metric_);
    metric_->setCurrentIndex(metric_->findData(Bytes));
    draw();
    caption_->setText(tr("Reading the scales stopped (%1); showing bytes.").arg(scales_->error()));
    return;
  }
  scalesGathered_ = true;
  // Each logical tensor's scales (the stored "scale", or GGUF's per-block "d") into its cell.
  for (const LogicalTensor& l : ckpt_->logical) {
    if (l.weight < 0) continue;
    auto g = rep->groups.find(l.name);
    if (g == rep->groups.end()) continue;
    auto k = g->second.count("scale") ? g->second.find("scale") : g->second.find("d");
    if (k == g->second.end()) continue;
    const double centre = num::typicalLog2(k->second.hist);
    if (!std::isfinite(centre)) continue;
    const TensorRecord& w = ckpt_->tensors[uint32_t(l.weight)];
    if (w.layer < 0 || w.layer >= rows_) continue;
    const double n = double(k->second.stats.count);
    auto add = [&](int col, bool stacked) {
      Cell& c = cells_[size_t(w.layer) * cols_ + col];
      c.log2Sum += centre * n;
      c.log2Count += n;
      c.stackedScales |= stacked;
    };
    if (w.role == Role::SharedExpert || w.role == Role::DenseMlp) add(0, false);
    else if (w.role == Role::RoutedExpert && w.expert >= 0 && w.expert < experts_) add(int(w.expert) + 1, false);
    else if (w.role == Role::RoutedExpert && !w.shape.empty())
      for (int64_t e = 0; e < std::min<int64_t>(int64_t(w.shape[0]), experts_); ++e) add(int(e) + 1, true);
  }
  draw();
}

int64_t ExpertMapView::firstTensor(int row, int col) const {
  if (row < 0 || col < 0 || row >= rows_ || col >= cols_) return -1;
  return cells_[size_t(row) * cols_ + col].first;
}

void ExpertMapView::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  waiting_ = false;
  poll_->stop();
  progress_->setVisible(false);
  cancel_->setVisible(false);
  ckpt_ = std::move(c);
  cells_.clear();
  dense_.clear();
  rows_ = cols_ = 0;
  scalesGathered_ = false;
  if (!ckpt_) return;
  int maxLayer = -1;
  int64_t experts = std::max<int64_t>(0, ckpt_->model.numExperts);
  for (const auto& t : ckpt_->tensors) {
    if (t.role != Role::RoutedExpert && t.role != Role::SharedExpert && t.role != Role::DenseMlp) continue;
    maxLayer = std::max(maxLayer, t.layer);
    experts = std::max<int64_t>(experts, t.expert + 1);
  }
  experts_ = experts;
  rows_ = maxLayer + 1;
  cols_ = int(experts) + 1;
  if (rows_ <= 0) {
    caption_->setText(tr("No expert or MLP tensors in this checkpoint."));
    plot_->clearItems();
    plot_->setMatrix({}, 0, 0);
    return;
  }
  cells_.assign(size_t(rows_) * cols_, Cell{});
  auto add = [&](int layer, int col, const TensorRecord& t, double share, uint32_t tensor) {
    Cell& cell = cells_[size_t(layer) * cols_ + col];
    cell.bytes += double(t.bytes) * share;
    if (t.component == Component::Weight) cell.parameters += double(ckpt_->logical[t.logical].parameters) * share;
    if (t.component == Component::Scale || t.component == Component::GlobalScale) cell.scaleBytes += double(t.bytes) * share;
    if (cell.first < 0) cell.first = tensor;
    ++cell.tensors;
    cell.dense |= t.role == Role::DenseMlp;
  };
  for (uint32_t i = 0; i < ckpt_->tensors.size(); ++i) {
    const TensorRecord& t = ckpt_->tensors[i];
    if (t.layer < 0) continue;
    if (t.role == Role::SharedExpert || t.role == Role::DenseMlp) {
      add(t.layer, 0, t, 1.0, i);
    } else if (t.role == Role::RoutedExpert) {
      if (t.expert >= 0) {
        add(t.layer, int(t.expert) + 1, t, 1.0, i);
      } else if (!t.shape.empty() && t.shape[0] > 0) {  // fused or stacked: each expert its share
        const uint64_t e = std::min<uint64_t>(t.shape[0], uint64_t(experts));
        for (uint64_t k = 0; k < e; ++k) add(t.layer, int(k) + 1, t, 1.0 / double(t.shape[0]), i);
      }
    }
  }
  for (int r = 0; r < rows_; ++r) {
    bool routed = false;
    for (int c = 1; c < cols_; ++c) routed |= cells_[size_t(r) * cols_ + c].tensors > 0;
    if (!routed && cells_[size_t(r) * cols_].dense) dense_.push_back(r);
  }
  for (int r : dense_)
    for (int c = 1; c < cols_; ++c) cells_[size_t(r) * cols_ + c].dense = true;
  if (metric_->currentData().toInt() == TypicalScale) gatherScales();
  draw();
}

void ExpertMapView::setMetric(Metric m) {
  if (metric_->currentData().toInt() != m) {
    metric_->setCurrentIndex(metric_->findData(m));  // comes back here through the signal
    return;
  }
  if (m == TypicalScale && !scalesGathered_) {
    gatherScales();
    return;  // drawn when the scales are in
  }
  draw();
}

void ExpertMapView::gatherScales() {
  if (!ckpt_ || waiting_) return;
  waiting_ = true;
  caption_->setText(tr("Reading the scales ..."));
  progress_->setVisible(true);
  cancel_->setVisible(true);
  poll_->start(100);
  scales_->request();
}

double ExpertMapView::value(const Cell& c) const {
  switch (metric_->currentData().toInt()) {
    case Parameters: return c.parameters;
    case Tensors: return c.tensors;
    case ScaleBytes: return c.scaleBytes > 0 ? c.scaleBytes : NAN;
    case TypicalScale: return c.log2Count > 0 ? c.log2Sum / c.log2Count : NAN;
    default: return c.bytes;
  }
}

void ExpertMapView::draw() {
  plot_->clearItems();
  if (rows_ <= 0) return;
  const int metric = metric_->currentData().toInt();
  std::vector<double> values(cells_.size(), NAN);
  bool any = false;
  for (size_t k = 0; k < cells_.size(); ++k)
    if (cells_[k].tensors) {
      values[k] = value(cells_[k]);
      any |= std::isfinite(values[k]);
    }
  plot_->setAxisLabels(tr("expert  (-1: shared experts, or the dense MLP)"), tr("layer"), tr(kMetricLegend[metric]));
  plot_->setMatrix(values, rows_, cols_, -1);
  // Column -1 set off from the routed experts; dense layers hatched across the expert columns.
  auto* separator = new QCPItemLine(plot_);
  separator->start->setCoords(-0.5, -0.5);
  separator->end->setCoords(-0.5, rows_ - 0.5);
  separator->setPen(QPen(Qt::black, 3));
  for (int r : dense_) {
    auto* hatch = new QCPItemRect(plot_);
    hatch->topLeft->setCoords(-0.5, r - 0.5);
    hatch->bottomRight->setCoords(cols_ - 1.5, r + 0.5);
    hatch->setPen(Qt::NoPen);
    hatch->setBrush(QBrush(QColor(110, 110, 110), Qt::BDiagPattern));
    auto* label = new QCPItemText(plot_);
    label->position->setCoords((cols_ - 2) / 2.0, r);
    label->setText(tr("dense layer: its MLP is in column -1"));
    label->setBrush(QColor(255, 255, 255, 220));
  }
  plot_->replot();
  QString text = tr("%1 layers x %2 routed experts; colour: %3 per expert and layer. Hover for details, click to find it in the tree.")
                     .arg(rows_)
                     .arg(experts_)
                     .arg(tr(kMetricLegend[metric]));
  if (!any) text = tr("No cell has a value for this statistic (the checkpoint stores no scales there).");
  caption_->setText(text);
  emit drawn();
}

}  // namespace ws::ui
