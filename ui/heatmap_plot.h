// A QCustomPlot colour map with a legend, the value under the cursor in a tooltip, and clicks
// reported in data coordinates; wheel zooms and dragging pans. Used for the diff error map, the
// per-expert memory map and the dequant previews.
#pragma once

#include <functional>
#include <vector>

#include <qcustomplot.h>

namespace ws::ui {

// Dark blue for the least, through green and yellow, to red for the most; no white end, so the
// largest cells never look empty against the background.
QCPColorGradient magnitudeGradient();

class HeatmapPlot : public QCustomPlot {
  Q_OBJECT
 public:
  explicit HeatmapPlot(QWidget* parent = nullptr);

  // Row-major values, rows along y (row 0 at the top), cols along x; NaN cells stay empty.
  // xFirst: the x value of column 0 (the diff map starts at -1 for the non-expert column).
  void setMatrix(const std::vector<double>& values, int rows, int cols, int xFirst = 0);
  void setAxisLabels(const QString& x, const QString& y, const QString& legend);
  void setLogScale(bool log);  // the legend and colours on log10 of the values
  // Empty (NaN) cells are transparent whatever the gradient.
  void setGradient(QCPColorGradient g) {
    g.setNanHandling(QCPColorGradient::nhTransparent);
    map_->setGradient(g);
  }
  void setSymmetric(bool s) { symmetric_ = s; }  // a colour range centred on 0 (differences)
  // Tooltip text for a cell (row, col index); empty: the value itself.
  void setTooltip(std::function<QString(int row, int col, double value)> fn) { tooltip_ = std::move(fn); }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  double valueAt(int row, int col) const;
  // The pixel centre of cell (row, col), for tests that click it.
  QPoint cellCentre(int row, int col) const;

 signals:
  void cellClicked(int row, int col);
  void cellHovered(int row, int col, double value);  // the cell under the cursor (for a readout)

 protected:
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;

 private:
  bool cellAt(const QPoint& p, int* row, int* col) const;

  QCPColorMap* map_;
  QCPColorScale* scale_;
  std::vector<double> values_;
  int rows_ = 0, cols_ = 0, xFirst_ = 0;
  bool log_ = false, symmetric_ = false;
  std::function<QString(int, int, double)> tooltip_;
};

}  // namespace ws::ui
