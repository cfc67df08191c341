#include "ui/heatmap_plot.h"

#include <QToolTip>

#include <cmath>

namespace ws::ui {

QCPColorGradient magnitudeGradient() {
  QCPColorGradient g;
  g.setColorStops({{0.0, QColor(20, 30, 90)}, {0.4, QColor(40, 160, 90)}, {0.7, QColor(240, 200, 40)}, {1.0, QColor(200, 30, 30)}});
  return g;
}

HeatmapPlot::HeatmapPlot(QWidget* parent) : QCustomPlot(parent), map_(new QCPColorMap(xAxis, yAxis)), scale_(new QCPColorScale(this)) {
  plotLayout()->addElement(0, 1, scale_);
  scale_->setType(QCPAxis::atRight);
  map_->setColorScale(scale_);
  setGradient(QCPColorGradient::gpThermal);
  map_->setInterpolate(false);
  auto* group = new QCPMarginGroup(this);
  axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  scale_->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  yAxis->setRangeReversed(true);  // row 0 at the top, like a matrix
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  setMouseTracking(true);
}

void HeatmapPlot::setMatrix(const std::vector<double>& values, int rows, int cols, int xFirst) {
  values_ = values;
  rows_ = rows;
  cols_ = cols;
  xFirst_ = xFirst;
  map_->data()->setSize(cols, rows);
  map_->data()->setRange(QCPRange(xFirst, xFirst + cols - 1), QCPRange(0, rows - 1));
  double lo = INFINITY, hi = -INFINITY;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      double v = values[size_t(r) * cols + c];
      if (log_) v = v > 0 ? std::log10(v) : NAN;
      map_->data()->setCell(c, r, v);
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (symmetric_) hi = std::max(std::fabs(lo), std::fabs(hi)), lo = -hi;
  if (lo == hi) hi = lo + 1;
  map_->setDataRange(QCPRange(lo, hi));
  // Whole-number ticks on small maps (layers, experts), the default ticker's on large ones.
  for (auto [axis, n] : {std::pair{xAxis, cols}, std::pair{yAxis, rows}}) {
    QSharedPointer<QCPAxisTickerFixed> fixed(new QCPAxisTickerFixed);
    fixed->setTickStep(n <= 16 ? 1 : std::pow(10.0, std::floor(std::log10(n / 4.0))));
    fixed->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    axis->setTicker(fixed);
  }
  xAxis->setRange(xFirst - 0.5, xFirst + cols - 0.5);
  yAxis->setRange(-0.5, rows - 0.5);
  replot();
}

void HeatmapPlot::setAxisLabels(const QString& x, const QString& y, const QString& legend) {
  xAxis->setLabel(x);
  yAxis->setLabel(y);
  scale_->axis()->setLabel(legend);
}

void HeatmapPlot::setLogScale(bool log) { log_ = log; }

double HeatmapPlot::valueAt(int row, int col) const {
  return row >= 0 && col >= 0 && row < rows_ && col < cols_ ? values_[size_t(row) * cols_ + col] : NAN;
}

QPoint HeatmapPlot::cellCentre(int row, int col) const {
  return QPoint(int(xAxis->coordToPixel(xFirst_ + col)), int(yAxis->coordToPixel(row)));
}

bool HeatmapPlot::cellAt(const QPoint& p, int* row, int* col) const {
  if (!axisRect()->rect().contains(p)) return false;
  const int c = int(std::lround(xAxis->pixelToCoord(p.x()))) - xFirst_, r = int(std::lround(yAxis->pixelToCoord(p.y())));
  if (r < 0 || c < 0 || r >= rows_ || c >= cols_) return false;
  *row = r;
  *col = c;
  return true;
}

void HeatmapPlot::mouseMoveEvent(QMouseEvent* e) {
  QCustomPlot::mouseMoveEvent(e);
  int r, c;
  if (!cellAt(e->pos(), &r, &c)) {
    QToolTip::hideText();
    return;
  }
  const double v = valueAt(r, c);
  emit cellHovered(r, c, v);
  QToolTip::showText(e->globalPosition().toPoint(), tooltip_ ? tooltip_(r, c, v) : QString::number(v, 'g', 6), this);
}

void HeatmapPlot::mouseReleaseEvent(QMouseEvent* e) {
  const bool dragged = (e->pos() - mMousePressPos).manhattanLength() > 3;
  QCustomPlot::mouseReleaseEvent(e);
  int r, c;
  if (!dragged && e->button() == Qt::LeftButton && cellAt(e->pos(), &r, &c)) emit cellClicked(r, c);
}

}  // namespace ws::ui
