#include "ui/preview_view.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "core/numerics/dequant.h"
#include "core/numerics/mapped_reads.h"
#include "core/numerics/remote_reads.h"
#include "core/numerics/device_dequant.h"
#include "core/numerics/stats.h"
#include "core/util/format_bytes.h"
#include "ui/heatmap_plot.h"
#include "ui/remembered.h"

namespace ws::ui {

namespace {

enum Colormap { Diverging, Magnitude, Grayscale, Thermal };

QString number(double v) { return QString::number(v, 'g', 7); }

struct TileRequest {
  uint32_t tensor;
  int64_t expert;
  uint64_t row, col;
  int size;
  num::Numerics numerics;
};

// Decodes the tile's rows (whole rows: the decoders work by row), then keeps its columns.
auto decodeTile(const Checkpoint& c, const TileRequest& q) {
  struct Out {
    std::vector<float> values;
    int rows = 0, cols = 0;
    uint64_t selectionRows = 0, selectionCols = 0;
    std::string device;
  };
  return capture([&]() -> Out {
    MappedReadGuard guard;  // a file cut short under the preview is an error shown, not a crash
    const TensorRecord& rec = c.tensors[q.tensor];
    const bool weight = c.logical[rec.logical].weight == int32_t(q.tensor);
    // The selection's size from the headers; a stored companion (a scale, a bias) is small and
    // fetched whole from a remote checkpoint.
    if (!weight) num::fetchTensor(c, rec);
    auto dec = weight ? num::makeLayoutDecoder(c, rec.logical) : num::makeStoredDecoder(c, rec);
    if (!dec) throw CoreError(dec.error());
    num::DequantRequest all{rec.logical, q.expert, 0, UINT64_MAX};
    const num::Selection whole = num::selectRows(*dec.value(), all, rec.name);
    const uint64_t width = dec.value()->cols();
    Out out;
    out.selectionRows = whole.rows;
    out.selectionCols = width;
    out.device = "CPU reference (no GPU dequantizer in this build or on this machine)";
    if (whole.rows == 0 || width == 0) return out;
    const uint64_t row = std::min(q.row, whole.rows - 1), col = std::min(q.col, width - 1);
    const uint64_t rows = std::min<uint64_t>(uint64_t(q.size), whole.rows - row), cols = std::min<uint64_t>(uint64_t(q.size), width - col);
    if (weight && c.remote) {
      // A remote checkpoint: the bytes of the tile's rows come first, then the decoder that reads
      // them (of a local one, the layout decoder is that decoder: its bytes are all there).
      num::fetchForDecode(c, *dec.value(), {rec.logical, q.expert, row, row + rows});
      dec = num::makeDecoder(c, rec.logical);
      if (!dec) throw CoreError(dec.error());
    }
    const num::RowDecoder& d = *dec.value();
    std::vector<float> full;
    auto [device, name] = num::deviceDequant();
    if (weight && device) {
      auto r = (*device)(c, rec.logical, whole.firstRow + row, rows);
      if (!r) throw CoreError(r.error());
      full = std::move(r.value());
      out.device = name + " (GPU)";
    } else {
      full.resize(rows * d.cols());
      d.decode(whole.firstRow + row, rows, full.data());
    }
    if (weight) num::checkMappedReads(guard, c, c.logical[rec.logical]);
    else num::checkMappedReads(guard, c, rec);
    num::applyNumerics(q.numerics, d, whole.firstRow + row, rows, full.data());
    if (q.numerics != num::Numerics::Reference) out.device += ", numerics " + std::string(num::numericsName(q.numerics));
    out.rows = int(rows);
    out.cols = int(cols);
    out.values.resize(rows * cols);
    for (uint64_t r = 0; r < rows; ++r) std::copy_n(full.begin() + std::ptrdiff_t(r * d.cols() + col), cols, out.values.begin() + std::ptrdiff_t(r * cols));
    return out;
  });
}

}  // namespace

PreviewView::PreviewView(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel),
      expert_(new QSpinBox),
      row_(new QSpinBox),
      col_(new QSpinBox),
      size_(new QComboBox),
      colormap_(new QComboBox),
      numerics_(new QComboBox),
      resetZoom_(new QPushButton(tr("Reset &zoom"))),
      plot_(new HeatmapPlot),
      device_(new QLabel),
      value_(new QLabel),
      stats_(new QLabel),
      jobs_(this) {
  title_->setWordWrap(true);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  title_->setText(tr("Choose a tensor in the tree and press Ctrl+P (or right-click > Preview)."));
  expert_->setRange(-1, -1);
  expert_->setSpecialValueText(tr("(not stacked)"));
  row_->setRange(0, 0);
  col_->setRange(0, 0);
  for (int s : {64, 128, 256, 512}) size_->addItem(QString::number(s), s);
  size_->setCurrentIndex(2);
  colormap_->addItem(tr("diverging, centred on 0"), Diverging);
  colormap_->addItem(tr("magnitude"), Magnitude);
  colormap_->addItem(tr("grayscale"), Grayscale);
  colormap_->addItem(tr("thermal"), Thermal);
  // Whose arithmetic: the published formula, or what the KTransformers loader trains on.
  numerics_->addItem(tr("reference (f32)"), int(num::Numerics::Reference));
  numerics_->addItem(tr("KTransformers (bf16)"), int(num::Numerics::Kt));
  numerics_->setToolTip(tr("KTransformers dequantizes block FP8 as bf16(code x bf16(scale)) and turns everything else to bf16"));
  remember(colormap_, "preview/colormap");
  remember(numerics_, "preview/numerics");
  remember(size_, "preview/tileSize");
  plot_->setAxisLabels(tr("column (in)"), tr("row (out)"), tr("value"));
  plot_->setMinimumSize(360, 300);
  applyColormap();
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  stats_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  value_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  device_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* form = new QFormLayout;
  form->addRow(tr("E&xpert"), expert_);
  form->addRow(tr("First &row"), row_);
  form->addRow(tr("First co&lumn"), col_);
  form->addRow(tr("Tile &size"), size_);
  form->addRow(tr("&Colormap"), colormap_);
  form->addRow(tr("&Numerics"), numerics_);
  form->addRow(resetZoom_);
  auto* sidePanel = new QWidget;
  sidePanel->setMaximumWidth(380);  // the matrix gets the room
  auto* side = new QVBoxLayout(sidePanel);
  side->setContentsMargins(0, 0, 0, 0);
  side->addLayout(form);
  side->addWidget(device_);
  side->addWidget(value_);
  side->addWidget(stats_, 1);
  device_->setWordWrap(true);
  value_->setWordWrap(true);
  auto* body = new QHBoxLayout;
  body->addWidget(plot_, 1);
  body->addWidget(sidePanel);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(title_);
  layout->addLayout(body, 1);

  for (QSpinBox* s : {expert_, row_, col_}) connect(s, &QSpinBox::valueChanged, this, &PreviewView::refresh);
  connect(size_, &QComboBox::currentIndexChanged, this, &PreviewView::refresh);
  connect(numerics_, &QComboBox::currentIndexChanged, this, &PreviewView::refresh);
  connect(colormap_, &QComboBox::currentIndexChanged, this, [this] {
    applyColormap();
    onReady();  // redraw the current tile with the new colours
  });
  connect(resetZoom_, &QPushButton::clicked, this, [this] {
    plot_->xAxis->setRange(-0.5, tileCols_ - 0.5);
    plot_->yAxis->setRange(-0.5, tileRows_ - 0.5);
    plot_->replot();
  });
  connect(plot_, &HeatmapPlot::cellHovered, this, [this](int r, int c, double v) {
    value_->setText(tr("under the cursor: [%1, %2] = %3").arg(uint64_t(row_->value()) + uint64_t(r)).arg(uint64_t(col_->value()) + uint64_t(c)).arg(number(v)));
  });
}

void PreviewView::onTile(Tile t) {
  if (t.ckpt != ckpt_) return;  // a tile of the checkpoint open before this one
  error_ = t.error;
  tile_ = std::move(t.values);
  tileRows_ = t.rows;
  tileCols_ = t.cols;
  const QSignalBlocker b1(row_), b2(col_);
  row_->setRange(0, int(std::min<uint64_t>(t.selectionRows ? t.selectionRows - 1 : 0, INT32_MAX)));
  col_->setRange(0, int(std::min<uint64_t>(t.selectionCols ? t.selectionCols - 1 : 0, INT32_MAX)));
  device_->setText(t.error.isEmpty() ? tr("computed on: <b>%1</b>").arg(t.device.toHtmlEscaped()) : QString());
  onReady();
  emit previewReady();
}

PreviewView::~PreviewView() = default;  // a tile still decoding is dropped; nothing waits

void PreviewView::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  jobs_.drop(0);
  ckpt_ = std::move(c);
  tensor_ = -1;
  tile_.clear();
  tileRows_ = tileCols_ = 0;
  plot_->setMatrix({}, 0, 0);
}

void PreviewView::showTensor(uint32_t tensorIndex) {
  if (!ckpt_ || tensorIndex >= ckpt_->tensors.size()) return;
  tensor_ = int32_t(tensorIndex);
  const TensorRecord& t = ckpt_->tensors[tensorIndex];
  const QSignalBlocker b1(expert_), b2(row_), b3(col_);
  // Stacked and fused expert tensors are [E, rows, cols]: preview one expert at a time.
  const bool stacked = t.shape.size() >= 3 && t.shape[0] > 0;
  expert_->setRange(stacked ? 0 : -1, stacked ? int(std::min<uint64_t>(t.shape[0] - 1, INT32_MAX)) : -1);
  expert_->setValue(stacked ? 0 : -1);
  row_->setValue(0);
  col_->setValue(0);
  title_->setText(tr("<b>%1</b>  %2 %3, scheme %4")
                      .arg(QString::fromStdString(t.name).toHtmlEscaped())
                      .arg(QString::fromLatin1(t.dtype->name.data(), qsizetype(t.dtype->name.size())))
                      .arg(QString::fromStdString(formatShape(t.shape)))
                      .arg(QString::fromStdString(ckpt_->logical[t.logical].schemeName)));
  refresh();
}

void PreviewView::setTile(int64_t expert, uint64_t row, uint64_t col, int size) {
  const QSignalBlocker b1(expert_), b2(row_), b3(col_), b4(size_);
  if (expert_->minimum() >= 0) expert_->setValue(int(expert));
  row_->setRange(0, std::max(row_->maximum(), int(std::min<uint64_t>(row, INT32_MAX))));
  col_->setRange(0, std::max(col_->maximum(), int(std::min<uint64_t>(col, INT32_MAX))));
  row_->setValue(int(row));
  col_->setValue(int(col));
  if (int i = size_->findData(size); i >= 0) size_->setCurrentIndex(i);
  refresh();
}

void PreviewView::refresh() {
  if (!ckpt_ || tensor_ < 0) return;
  // The newest request wins: a tile still decoding for older settings is dropped.
  const TileRequest q{uint32_t(tensor_), expert_->value(), uint64_t(row_->value()), uint64_t(col_->value()), size_->currentData().toInt(),
                      num::Numerics(numerics_->currentData().toInt())};
  auto ckpt = ckpt_;
  jobs_.start(0, [ckpt, q](JobState&) -> Tile {
    auto r = decodeTile(*ckpt, q);
    Tile t;
    t.ckpt = ckpt;
    if (!r) {
      t.error = QString::fromStdString(r.error().describe());
      return t;
    }
    t.values = std::move(r.value().values);
    t.rows = r.value().rows;
    t.cols = r.value().cols;
    t.selectionRows = r.value().selectionRows;
    t.selectionCols = r.value().selectionCols;
    t.device = QString::fromStdString(r.value().device);
    return t;
  }, [this](Tile t) { onTile(std::move(t)); });
}

void PreviewView::applyColormap() {
  switch (colormap_->currentData().toInt()) {
    case Magnitude: plot_->setGradient(magnitudeGradient()); break;
    case Grayscale: plot_->setGradient(QCPColorGradient::gpGrayscale); break;
    case Thermal: plot_->setGradient(QCPColorGradient::gpThermal); break;
    default: plot_->setGradient(QCPColorGradient::gpPolar); break;
  }
  plot_->setSymmetric(colormap_->currentData().toInt() == Diverging);
}

void PreviewView::onReady() {
  if (!error_.isEmpty()) {
    plot_->setMatrix({}, 0, 0);
    stats_->setText(tr("<b>Cannot preview:</b><br>%1").arg(error_.toHtmlEscaped()));
    return;
  }
  if (tile_.empty()) {
    plot_->setMatrix({}, 0, 0);
    stats_->setText(tr("This tensor has no elements."));
    return;
  }
  plot_->setMatrix(std::vector<double>(tile_.begin(), tile_.end()), tileRows_, tileCols_);
  num::Stats s;
  s.add(tile_.data(), tile_.size());
  QString html = tr("<b>Tile</b> rows %1-%2, columns %3-%4<table>")
                     .arg(row_->value())
                     .arg(row_->value() + tileRows_ - 1)
                     .arg(col_->value())
                     .arg(col_->value() + tileCols_ - 1);
  auto line = [&html](const QString& k, const QString& v) { html += "<tr><td>" + k + "</td><td align=right>" + v + "</td></tr>"; };
  line(tr("min"), number(s.min()));
  line(tr("max"), number(s.max()));
  line(tr("mean"), number(s.mean()));
  line(tr("std"), number(s.stddev()));
  line(tr("absmax"), number(s.absmax()));
  line(tr("zero"), QString::number(s.zero));
  line(tr("subnormal"), QString::number(s.subnormal));
  line(tr("NaN"), QString::number(s.nan));
  line(tr("Inf"), QString::number(s.inf));
  stats_->setText(html + "</table>");
}

}  // namespace ws::ui
