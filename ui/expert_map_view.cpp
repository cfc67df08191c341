#include "ui/expert_map_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>

#include "core/util/format_bytes.h"
#include "ui/heatmap_plot.h"
#include "ui/remembered.h"

namespace ws::ui {

namespace {

const char* kMetricLegend[] = {"bytes", "parameters", "tensors", "scale bytes", "log2 typical |scale|", "octaves from the layer's median norm", "cosine to the nearest expert"};

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
  metric_->addItem(tr("norm against the layer's median (validation)"), NormOctaves);
  metric_->addItem(tr("nearest expert's cosine (validation)"), NearestCosine);
  remember(metric_, "experts/metric");
  plot_->setAxisLabels(tr("expert  (-1: shared experts, or the dense MLP)"), tr("layer"), tr("bytes"));
  plot_->setGradient(magnitudeGradient());
  plot_->setTooltip([this](int row, int col, double v) {
    const ExpertCell& c = grid_.at(row, col - 1);
    const bool dense = grid_.isDense(row);
    if (!c.tensors) return dense ? tr("layer %1: a dense layer, no routed experts").arg(row) : tr("layer %1: nothing here").arg(row);
    const QString what = col == 0 ? (dense ? tr("dense MLP") : tr("shared experts")) : tr("expert %1").arg(col - 1);
    const bool stacked = scaleCells_[size_t(row) * size_t(grid_.columns()) + size_t(col)].stacked;
    QString scale = std::isfinite(v) && metric_->currentData().toInt() == TypicalScale
                        ? tr("\ntypical |scale| 2^%1 = %2%3").arg(v, 0, 'f', 2).arg(std::exp2(v), 0, 'g', 4).arg(stacked ? tr(" (the whole stacked tensor's)") : QString())
                        : QString();
    QString health;
    if (const val::ExpertHealthCell* h = healthCells_.empty() ? nullptr : healthCells_[size_t(row) * size_t(grid_.columns()) + size_t(col)]) {
      if (std::isfinite(h->normOctaves)) health += tr("\nnorm %1 octaves %2 the layer's median (sampled)").arg(std::abs(h->normOctaves), 0, 'f', 2).arg(h->normOctaves < 0 ? tr("below") : tr("above"));
      if (h->nearest >= 0) health += tr("\nnearest expert %1, cosine %2 (sampled)").arg(h->nearest).arg(h->nearestCosine, 0, 'f', 4);
    }
    return tr("layer %1, %2\n%3 in %4 tensors, %5 parameters%6%7\n(a fused or stacked tensor counts its share)\nclick to select it in the tree")
        .arg(row)
        .arg(what)
        .arg(QString::fromStdString(formatBytes(c.bytes)))
        .arg(c.tensors)
        .arg(QString::fromStdString(formatCount(c.parameters)))
        .arg(scale)
        .arg(health);
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
    if (w.layer < 0 || w.layer >= grid_.layers) continue;
    const double n = double(k->second.stats.count);
    auto add = [&](int64_t expert, bool stacked) {
      ScaleCell& c = scaleCells_[size_t(w.layer) * size_t(grid_.columns()) + size_t(expert + 1)];
      c.log2Sum += centre * n;
      c.log2Count += n;
      c.stacked |= stacked;
    };
    const bool routed = w.role == Role::RoutedExpert || (w.role == Role::Mtp && w.expert >= 0);
    if (w.role == Role::SharedExpert || w.role == Role::DenseMlp) add(-1, false);
    else if (routed && w.expert >= 0 && w.expert < grid_.experts) add(w.expert, false);
    else if (routed && !w.shape.empty())
      for (int64_t e = 0; e < std::min<int64_t>(int64_t(w.shape[0]), grid_.experts); ++e) add(e, true);
  }
  draw();
}

int64_t ExpertMapView::firstTensor(int row, int col) const {
  if (row < 0 || col < 0 || row >= grid_.layers || col >= grid_.columns()) return -1;
  return grid_.at(row, col - 1).firstTensor;
}

void ExpertMapView::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  waiting_ = false;
  poll_->stop();
  progress_->setVisible(false);
  cancel_->setVisible(false);
  ckpt_ = std::move(c);
  grid_ = ckpt_ ? expertGrid(*ckpt_) : ExpertGrid{};
  scaleCells_.assign(grid_.cells.size(), ScaleCell{});
  health_.clear();
  healthCells_.clear();
  scalesGathered_ = false;
  if (!ckpt_) return;
  if (grid_.layers <= 0) {
    caption_->setText(tr("No expert or MLP tensors in this checkpoint."));
    plot_->clearItems();
    plot_->setMatrix({}, 0, 0);
    return;
  }
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

void ExpertMapView::setHealth(std::vector<val::ExpertHealthCell> cells) {
  health_ = std::move(cells);
  healthCells_.assign(grid_.cells.size(), nullptr);
  for (const auto& h : health_)
    if (h.layer >= 0 && h.layer < grid_.layers && h.expert >= 0 && h.expert < grid_.experts)
      healthCells_[size_t(h.layer) * size_t(grid_.columns()) + size_t(h.expert + 1)] = &h;
  if (ckpt_ && grid_.layers > 0) draw();
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

double ExpertMapView::cellValue(int layer, int64_t expert) const {
  const ExpertCell& c = grid_.at(layer, expert);
  if (!c.tensors) return NAN;
  switch (metric_->currentData().toInt()) {
    case Parameters: return double(c.parameters);
    case Tensors: return c.tensors;
    case ScaleBytes: return c.scaleBytes > 0 ? double(c.scaleBytes) : NAN;
    case TypicalScale: {
      const ScaleCell& s = scaleCells_[size_t(layer) * size_t(grid_.columns()) + size_t(expert + 1)];
      return s.log2Count > 0 ? s.log2Sum / s.log2Count : NAN;
    }
    case NormOctaves:
    case NearestCosine: {
      const val::ExpertHealthCell* h = healthCells_.empty() ? nullptr : healthCells_[size_t(layer) * size_t(grid_.columns()) + size_t(expert + 1)];
      if (!h) return NAN;
      return metric_->currentData().toInt() == NormOctaves ? h->normOctaves : h->nearestCosine;
    }
    default: return double(c.bytes);
  }
}

void ExpertMapView::draw() {
  plot_->clearItems();
  const int rows = grid_.layers, cols = int(grid_.columns());
  if (rows <= 0) return;
  const int metric = metric_->currentData().toInt();
  std::vector<double> values(grid_.cells.size(), NAN);
  bool any = false;
  for (int r = 0; r < rows; ++r)
    for (int64_t e = -1; e < grid_.experts; ++e) {
      double& v = values[size_t(r) * size_t(cols) + size_t(e + 1)];
      v = cellValue(r, e);
      any |= std::isfinite(v);
    }
  plot_->setAxisLabels(tr("expert  (-1: shared experts, or the dense MLP)"), tr("layer"), tr(kMetricLegend[metric]));
  plot_->setMatrix(values, rows, cols, -1);
  // Column -1 set off from the routed experts; dense layers hatched across the expert columns.
  auto* separator = new QCPItemLine(plot_);
  separator->start->setCoords(-0.5, -0.5);
  separator->end->setCoords(-0.5, rows - 0.5);
  separator->setPen(QPen(Qt::black, 3));
  for (int r : grid_.denseLayers) {
    auto* hatch = new QCPItemRect(plot_);
    hatch->topLeft->setCoords(-0.5, r - 0.5);
    hatch->bottomRight->setCoords(cols - 1.5, r + 0.5);
    hatch->setPen(Qt::NoPen);
    hatch->setBrush(QBrush(QColor(110, 110, 110), Qt::BDiagPattern));
    auto* label = new QCPItemText(plot_);
    label->position->setCoords((cols - 2) / 2.0, r);
    label->setText(tr("dense layer: its MLP is in column -1"));
    label->setBrush(QColor(255, 255, 255, 220));
  }
  plot_->replot();
  QString text = tr("%1 layers x %2 routed experts; colour: %3 per expert and layer. Hover for details, click to find it in the tree.")
                     .arg(rows)
                     .arg(grid_.experts)
                     .arg(tr(kMetricLegend[metric]));
  const bool health = metric == NormOctaves || metric == NearestCosine;
  if (health && any)
    text += tr(" Sampled by the last validation's value pass (1,024 values a projection; WS-V015 and WS-V016 judge their candidates exactly): %1")
                .arg(metric == NormOctaves ? tr("an expert 3 octaves (8x) from its layer's median is an outlier.") : tr("1.0 is a copy, 0.99 or more a near-duplicate."));
  if (!any) text = health ? tr("Press Validate (F5): this map is drawn from the value pass's samples of each routed expert.")
                          : tr("No cell has a value for this statistic (the checkpoint stores no scales there).");
  caption_->setText(text);
  emit drawn();
}

}  // namespace ws::ui
