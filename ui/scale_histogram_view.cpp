#include "ui/scale_histogram_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "ui/remembered.h"

#include <cmath>

namespace ws::ui {

namespace {

constexpr int kBins = 96;

// The validator's outlier test (num::farFromPeers) applied to the bins of one histogram, each
// bin's log2 centre weighted by its count.
std::vector<bool> findOutlierBins(const num::Histogram& h) {
  std::vector<bool> out(h.counts.size(), false);
  const double width = (h.hi - h.lo) / double(std::max<size_t>(h.counts.size(), 1));
  auto centre = [&](size_t i) { return h.lo + width * (double(i) + 0.5); };
  std::vector<std::pair<double, uint64_t>> bins;
  for (size_t i = 0; i < h.counts.size(); ++i)
    if (h.counts[i]) bins.push_back({centre(i), h.counts[i]});
  if (bins.empty()) return out;
  const num::RobustSpread spread = num::robustSpread(std::move(bins));
  for (size_t i = 0; i < h.counts.size(); ++i) out[i] = h.counts[i] && num::farFromPeers(centre(i), spread);
  return out;
}

bool isScaleFinding(const val::Finding& f) {
  static const char* codes[] = {"WS-V001", "WS-V002", "WS-V003", "WS-V004", "WS-V005", "WS-V006", "WS-V007"};
  return std::find(std::begin(codes), std::end(codes), f.code) != std::end(codes);
}

}  // namespace

ScaleHistogramView::ScaleHistogramView(ScalePass* scales, QWidget* parent)
    : QWidget(parent),
      scales_(scales),
      grouping_(new QComboBox),
      group_(new QComboBox),
      kind_(new QComboBox),
      logX_(new QCheckBox(tr("log &x"))),
      logY_(new QCheckBox(tr("log &y"))),
      progress_(new QProgressBar),
      cancel_(new QPushButton(tr("Cancel"))),
      poll_(new QTimer(this)),
      plot_(new QCustomPlot),
      caption_(new QLabel),
      findings_(new QTreeWidget),
      jobs_(this) {
  grouping_->addItem(tr("whole checkpoint"), int(num::ScaleGrouping::Checkpoint));
  grouping_->addItem(tr("per layer"), int(num::ScaleGrouping::Layer));
  grouping_->addItem(tr("per projection"), int(num::ScaleGrouping::Projection));
  grouping_->addItem(tr("per expert"), int(num::ScaleGrouping::Expert));
  grouping_->addItem(tr("per tensor"), int(num::ScaleGrouping::Tensor));
  group_->setMinimumContentsLength(32);
  group_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  logX_->setChecked(true);
  logX_->setToolTip(tr("Scale magnitude on a logarithmic axis: the bins are quarter octaves, so they are evenly spaced"));
  remember(grouping_, "scales/grouping");
  remember(logX_, "scales/logX");
  remember(logY_, "scales/logY");
  progress_->setVisible(false);
  cancel_->setVisible(false);
  caption_->setWordWrap(true);
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  findings_->setHeaderLabels({tr("finding"), tr("tensor"), tr("message")});
  findings_->setRootIsDecorated(false);
  findings_->header()->setSectionResizeMode(2, QHeaderView::Stretch);
  plot_->xAxis->setLabel(tr("|scale|"));
  plot_->yAxis->setLabel(tr("scales"));
  plot_->setMinimumSize(400, 260);
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);

  auto* top = new QHBoxLayout;
  auto* groupLabel = new QLabel(tr("&Group:"));
  groupLabel->setBuddy(grouping_);
  top->addWidget(groupLabel);
  top->addWidget(grouping_);
  top->addWidget(group_, 1);
  top->addWidget(kind_);
  top->addWidget(logX_);
  top->addWidget(logY_);
  top->addWidget(progress_);
  top->addWidget(cancel_);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(plot_);
  split->addWidget(findings_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(caption_);
  layout->addWidget(split, 1);

  connect(grouping_, &QComboBox::currentIndexChanged, this, &ScaleHistogramView::compute);
  connect(group_, &QComboBox::currentIndexChanged, this, [this] {
    fillKinds();
    listFindings();
  });
  connect(kind_, &QComboBox::currentIndexChanged, this, &ScaleHistogramView::draw);
  connect(logX_, &QCheckBox::toggled, this, &ScaleHistogramView::draw);
  connect(logY_, &QCheckBox::toggled, this, &ScaleHistogramView::draw);
  connect(cancel_, &QPushButton::clicked, this, &ScaleHistogramView::cancel);
  connect(poll_, &QTimer::timeout, this, [this] { scales_->job().showOn(progress_); });
  connect(scales_, &ScalePass::finished, this, &ScaleHistogramView::onScales);
  connect(findings_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
    if (!ckpt_) return;
    if (const TensorRecord* t = ckpt_->find(item->text(1).toStdString())) emit tensorRequested(uint32_t(t - ckpt_->tensors.data()));
  });
}

ScaleHistogramView::~ScaleHistogramView() = default;  // a regrouping still running is dropped

void ScaleHistogramView::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  jobs_.drop(0);
  showWaiting(false);
  ckpt_ = std::move(c);
  report_.reset();
  allFindings_.clear();
  group_->clear();
  // Reading every scale of a large checkpoint takes a while: only when someone looks.
  if (isVisible()) compute();
}

void ScaleHistogramView::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  if (ckpt_ && !report_ && !jobs_.running(0) && !waiting_) compute();
}

void ScaleHistogramView::setFindings(const std::vector<val::Finding>& findings) {
  allFindings_.clear();
  for (const auto& f : findings)
    if (isScaleFinding(f)) allFindings_.push_back(f);
  listFindings();
}

void ScaleHistogramView::cancel() {
  if (waiting_) scales_->cancel();
}

void ScaleHistogramView::showWaiting(bool on) {
  waiting_ = on;
  progress_->setVisible(on);
  cancel_->setVisible(on);
  if (on) poll_->start(100);
  else poll_->stop();
}

void ScaleHistogramView::onScales() {
  if (!waiting_ || scales_->checkpoint() != ckpt_) return;  // another view's request, or another checkpoint
  showWaiting(false);
  if (scales_->result()) {
    compute();
    return;
  }
  report_.reset();
  group_->clear();
  caption_->setText(tr("Scale statistics stopped: %1").arg(scales_->error().toHtmlEscaped()));
  emit computed();
}

void ScaleHistogramView::showTensor(uint32_t tensorIndex) {
  if (!ckpt_ || tensorIndex >= ckpt_->tensors.size()) return;
  wantedGroup_ = QString::fromStdString(ckpt_->logical[ckpt_->tensors[tensorIndex].logical].name);
  const int tensorGrouping = grouping_->findData(int(num::ScaleGrouping::Tensor));
  if (grouping_->currentIndex() != tensorGrouping) grouping_->setCurrentIndex(tensorGrouping);  // recomputes, then selects
  else if (report_ && !jobs_.running(0)) fillGroups();
}

void ScaleHistogramView::compute() {
  if (!ckpt_ || waiting_) return;
  if (!scales_->result() || scales_->checkpoint() != ckpt_) {  // the one read of the scales first
    showWaiting(true);
    scales_->request();
    return;
  }
  auto ckpt = ckpt_;
  const auto by = num::ScaleGrouping(grouping_->currentData().toInt());
  const ScalePass::Report byTensor = scales_->result();
  // The newest grouping wins: a regrouping for an older choice is dropped.
  jobs_.start(
      0,
      [ckpt, by, byTensor](JobState&) -> Outcome {
        auto grouped = by == num::ScaleGrouping::Tensor ? std::make_shared<num::ScaleReport>(*byTensor)
                                                       : std::make_shared<num::ScaleReport>(num::regroupScales(*ckpt, *byTensor, by));
        return {ckpt, grouped};
      },
      [this](Outcome o) { onComputed(std::move(o)); });
}

void ScaleHistogramView::onComputed(Outcome o) {
  if (o.ckpt != ckpt_) return;  // finished for the checkpoint open before this one
  report_ = o.report;
  fillGroups();
  emit computed();
}

void ScaleHistogramView::fillGroups() {
  const QSignalBlocker block(group_);
  group_->clear();
  if (report_)
    for (const auto& [key, kinds] : report_->groups)
      if (!kinds.empty()) group_->addItem(QString::fromStdString(key));
  if (!wantedGroup_.isEmpty()) {
    if (int i = group_->findText(wantedGroup_); i >= 0) group_->setCurrentIndex(i);
    wantedGroup_.clear();
  }
  fillKinds();
  listFindings();
}

void ScaleHistogramView::fillKinds() {
  const QString was = kind_->currentText();
  {
    const QSignalBlocker block(kind_);
    kind_->clear();
    if (report_) {
      auto g = report_->groups.find(group_->currentText().toStdString());
      if (g != report_->groups.end())
        for (const auto& [kind, sg] : g->second) kind_->addItem(QString::fromStdString(kind));
    }
    if (int i = kind_->findText(was); i >= 0) kind_->setCurrentIndex(i);
  }
  draw();
}

void ScaleHistogramView::draw() {
  plot_->clearGraphs();
  hist_ = num::Histogram{};
  outliers_.clear();
  const num::ScaleGroup* sg = nullptr;
  if (report_) {
    auto g = report_->groups.find(group_->currentText().toStdString());
    if (g != report_->groups.end()) {
      auto k = g->second.find(kind_->currentText().toStdString());
      if (k != g->second.end()) sg = &k->second;
    }
  }
  if (!sg) {
    caption_->setText(report_ ? tr("This checkpoint has no quantization scales (its weights are stored plainly).") : QString());
    plot_->replot();
    return;
  }
  hist_ = sg->hist.coarsened(kBins);
  outliers_ = findOutlierBins(hist_);
  // Each bin drawn as a step from its left edge; outlier bins again in red on top.
  auto* normal = plot_->addGraph();
  auto* flagged = plot_->addGraph();
  normal->setName(tr("scales"));
  flagged->setName(tr("outliers"));
  normal->setLineStyle(QCPGraph::lsStepLeft);
  flagged->setLineStyle(QCPGraph::lsStepLeft);
  normal->setPen(QPen(QColor(40, 90, 160)));
  normal->setBrush(QColor(40, 90, 160, 110));
  flagged->setPen(QPen(QColor(200, 30, 30), 2));
  flagged->setBrush(QColor(200, 30, 30, 150));
  const size_t n = hist_.counts.size();
  uint64_t most = 1, outlierCount = 0;
  for (size_t i = 0; i <= n; ++i) {
    const double x = std::exp2(hist_.edge(i));
    const double c = i < n ? double(hist_.counts[i]) : 0.0;
    const double shown = logY_->isChecked() && c == 0 ? qQNaN() : c;
    normal->addData(x, shown);
    flagged->addData(x, i < n && outliers_[i] ? shown : (i > 0 && outliers_[i - 1] ? 0.0 : qQNaN()));
    if (i < n) {
      most = std::max<uint64_t>(most, hist_.counts[i]);
      if (outliers_[i]) outlierCount += hist_.counts[i];
    }
  }
  plot_->xAxis->setScaleType(logX_->isChecked() ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  plot_->yAxis->setScaleType(logY_->isChecked() ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (logX_->isChecked()) plot_->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  else plot_->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  if (logY_->isChecked()) plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  else plot_->yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  const double lo = std::exp2(hist_.edge(0)), hi = std::exp2(hist_.edge(n));
  plot_->xAxis->setRange(logX_->isChecked() ? lo / 1.5 : 0, hi * (logX_->isChecked() ? 1.5 : 1.05));
  plot_->yAxis->setRange(logY_->isChecked() ? 0.8 : 0, double(most) * (logY_->isChecked() ? 2.0 : 1.1));
  plot_->replot();

  const num::Stats& s = sg->stats;
  auto warn = [](uint64_t v) { return v ? QString("<b style='color:#c00'>%1</b>").arg(v) : QString::number(v); };
  // GGUF's d, dmin and sub-block values are signed and may be zero by design (as the validator
  // treats them); only stored scale tensors must be positive normal numbers.
  const bool stored = kind_->currentText() == "scale" || kind_->currentText() == "global_scale";
  auto warnStored = [&](uint64_t v) { return stored ? warn(v) : QString::number(v); };
  caption_->setText(tr("%1 values from %2 tensor(s); min %3, max %4, mean %5. Zero %6, negative %7, subnormal %8, NaN %9, "
                       "Inf %10. %11 value(s) in outlier bins (drawn red: 3 octaves and 6 robust deviations from the median).")
                        .arg(s.count)
                        .arg(sg->tensors)
                        .arg(s.min(), 0, 'g', 6)
                        .arg(s.max(), 0, 'g', 6)
                        .arg(s.mean(), 0, 'g', 5)
                        .arg(warnStored(s.zero))
                        .arg(warnStored(s.negative))
                        .arg(warnStored(s.subnormal))
                        .arg(warn(s.nan))
                        .arg(warn(s.inf))
                        .arg(warn(outlierCount)));
}

void ScaleHistogramView::listFindings() {
  findings_->clear();
  if (!ckpt_) return;
  const auto by = num::ScaleGrouping(grouping_->currentData().toInt());
  const std::string group = group_->currentText().toStdString();
  for (const auto& f : allFindings_) {
    const TensorRecord* t = ckpt_->find(f.tensor);
    if (!t) continue;
    const LogicalTensor& l = ckpt_->logical[t->logical];
    if (l.weight < 0 || num::scaleGroupKey(*ckpt_, ckpt_->tensors[uint32_t(l.weight)], l, by) != group) continue;
    auto* item = new QTreeWidgetItem(findings_, {QString::fromStdString(f.code + " " + f.rule), QString::fromStdString(f.tensor), QString::fromStdString(f.message)});
    item->setForeground(0, f.severity == val::Severity::Error ? QColor(200, 0, 0) : QColor(180, 110, 0));
  }
  if (findings_->topLevelItemCount() == 0) {
    auto* none = new QTreeWidgetItem(findings_, {allFindings_.empty() ? tr("No scale findings (Tools > Validate checks every scale).") : tr("No scale findings in this group.")});
    none->setFirstColumnSpanned(true);
  }
}

}  // namespace ws::ui
