#include "ui/diff_window.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>

#include "core/formats/open_checkpoint.h"
#include "ui/heatmap_plot.h"

namespace ws::ui {

namespace {

constexpr double kIdentical = 1e-9;  // drawn as the lowest colour, so identical cells are not blank
constexpr int kTile = 256;           // previews show the top-left tile of large matrices

QString percent(double v) { return v < 0 ? QStringLiteral("-") : QString::number(v * 100, 'f', 3) + "%"; }

std::vector<double> tile(const diff::Matrix& m, int rows, int cols) {
  std::vector<double> t(size_t(rows) * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) t[size_t(r) * cols + c] = m.values[size_t(r) * m.cols + c];
  return t;
}

}  // namespace

DiffWindow::DiffWindow(QWidget* parent)
    : QWidget(parent),
      header_(new QLabel),
      progress_(new QProgressBar),
      cancel_(new QPushButton(tr("Cancel"))),
      poll_(new QTimer(this)),
      map_(new HeatmapPlot),
      list_(new QTreeWidget),
      metadata_(new QTreeWidget),
      tabs_(new QTabWidget),
      previewA_(new HeatmapPlot),
      previewB_(new HeatmapPlot),
      previewD_(new HeatmapPlot),
      previewStats_(new QLabel),
      jobs_(this),
      job_(std::make_shared<JobState>()) {
  setWindowTitle(tr("Weightscope - compare checkpoints"));
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  header_->setWordWrap(true);
  map_->setLogScale(true);
  map_->setGradient(magnitudeGradient());  // identical dark blue ... worst red
  map_->setAxisLabels(tr("expert  (-1: the layer's other tensors)"), tr("layer + 1  (0: outside layers)"), tr("log10 worst relative error"));
  map_->setTooltip([this](int row, int col, double v) {
    const diff::DiffCell* cell = report_ ? cells_.find(row - 1, col - 1) : nullptr;
    if (!cell) return tr("no tensors");
    const auto& p = report_->pairs[cell->pairs.front()];
    return tr("layer %1, %2\nworst: %3\nrelative error %4, cosine %5")
        .arg(row - 1)
        .arg(col == 0 ? tr("non-expert tensors") : tr("expert %1").arg(col - 1))
        .arg(QString::fromStdString(p.pair.key))
        .arg(v <= kIdentical ? tr("0 (identical)") : QString::number(v, 'g', 4))
        .arg(p.metrics.cosine, 0, 'f', 6);
  });
  connect(map_, &HeatmapPlot::cellClicked, this, &DiffWindow::selectCell);

  list_->setColumnCount(6);
  list_->setHeaderLabels({tr("tensor"), tr("A"), tr("B"), tr("relative error"), tr("cosine"), tr("saturated (B)")});
  list_->setRootIsDecorated(false);
  list_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  connect(list_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
    if (item) showPair(item->data(0, Qt::UserRole).toInt());
  });

  metadata_->setColumnCount(4);
  metadata_->setHeaderLabels({tr("file"), tr("key"), tr("A"), tr("B")});
  metadata_->setRootIsDecorated(false);
  metadata_->setSortingEnabled(false);  // diff's order: by file, then key
  metadata_->header()->setSectionResizeMode(1, QHeaderView::Stretch);
  tabs_->addTab(list_, tr("&Tensors of the cell"));
  tabs_->addTab(metadata_, tr("&Metadata"));

  previewA_->setAxisLabels(tr("in"), tr("out"), tr("A"));
  previewB_->setAxisLabels(tr("in"), tr("out"), tr("B"));
  previewD_->setAxisLabels(tr("in"), tr("out"), tr("A - B"));
  previewD_->setGradient(QCPColorGradient::gpPolar);
  previewD_->setSymmetric(true);
  previewD_->setTooltip([](int r, int c, double v) { return QString("[%1, %2]  A - B = %3").arg(r).arg(c).arg(v, 0, 'g', 6); });
  auto* previews = new QWidget;
  auto* pl = new QVBoxLayout(previews);
  auto* plots = new QHBoxLayout;
  for (auto* p : {previewA_, previewB_, previewD_}) {
    p->setMinimumSize(220, 200);
    plots->addWidget(p);
  }
  pl->addLayout(plots);
  pl->addWidget(previewStats_);

  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(tabs_);
  right->addWidget(previews);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(map_);
  split->addWidget(right);
  split->setSizes({620, 880});
  right->setSizes({260, 560});

  auto* top = new QHBoxLayout;
  top->addWidget(progress_, 1);
  top->addWidget(cancel_);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(header_);
  layout->addLayout(top);
  layout->addWidget(split, 1);
  connect(cancel_, &QPushButton::clicked, this, &DiffWindow::cancel);
  connect(poll_, &QTimer::timeout, this, [this] { job_->showOn(progress_); });
  resize(1500, 900);
}

DiffWindow::~DiffWindow() = default;  // a comparison or preview still running is cancelled and dropped

namespace {
enum Jobs { Comparison, PairPreview };
}

void DiffWindow::start(const QString& pathA, const QString& pathB) {
  header_->setText(tr("Comparing %1 (A, the reference) with %2 (B)...").arg(pathA, pathB));
  progress_->setVisible(true);
  cancel_->setVisible(true);
  progress_->setFormat(tr("%v of %m tensors"));
  poll_->start(100);
  const std::string a = pathA.toStdString(), b = pathB.toStdString();
  job_ = jobs_.start(Comparison, [a, b](JobState& job) -> Outcome {
    auto ca = openCheckpoint(a);
    if (!ca) return Outcome{nullptr, nullptr, nullptr, QString::fromStdString(ca.error().describe()), {}};
    auto cb = openCheckpoint(b);
    if (!cb) return Outcome{nullptr, nullptr, nullptr, QString::fromStdString(cb.error().describe()), {}};
    diff::DiffOptions opt;
    opt.progress = [&](uint64_t d, uint64_t t) {
      job.done = d;
      job.total = t;
      return !job.cancel;
    };
    auto r = diff::diffCheckpoints(*ca.value(), *cb.value(), opt);
    if (!r) return Outcome{nullptr, nullptr, nullptr, QString::fromStdString(r.error().message), {}};
    return Outcome{ca.value(), cb.value(), std::make_shared<diff::DiffReport>(std::move(r.value())), {}, diff::diffMetadata(*ca.value(), *cb.value())};
  }, [this](Outcome o) { onFinished(std::move(o)); });
}

void DiffWindow::cancel() { job_->cancel = true; }

void DiffWindow::onFinished(Outcome o) {
  poll_->stop();
  progress_->setVisible(false);
  cancel_->setVisible(false);
  if (!o.report) {
    header_->setText(tr("Comparison stopped: %1").arg(o.error));
    emit finished();
    return;
  }
  a_ = o.a;
  b_ = o.b;
  report_ = o.report;
  uint64_t identical = 0;
  for (const auto& p : report_->pairs) identical += p.error.empty() && p.metrics.identical;
  header_->setText(tr("<b>A</b> %1<br><b>B</b> %2<br>%3 tensors matched (%4 identical), %5 only in A, %6 only in B, %7 shape mismatches; "
                      "dequantized on %8; %9 metadata keys differ (the Metadata tab). Click a cell for its tensors and previews.")
                       .arg(QString::fromStdString(report_->pathA).toHtmlEscaped(), QString::fromStdString(report_->pathB).toHtmlEscaped())
                       .arg(report_->pairs.size())
                       .arg(identical)
                       .arg(report_->onlyA.size())
                       .arg(report_->onlyB.size())
                       .arg(report_->shapeMismatches)
                       .arg(QString::fromStdString(report_->device))
                       .arg(o.metadata.size()));
  listMetadata(o.metadata);
  buildMap();
  emit finished();
}

void DiffWindow::buildMap() {
  cells_ = diff::diffCells(*report_);
  rows_ = cells_.maxLayer + 2;   // row 0: outside layers
  cols_ = cells_.maxExpert + 2;  // column 0 (x = -1): non-expert tensors of the layer
  std::vector<double> worst(size_t(rows_) * size_t(cols_), NAN);
  for (const auto& c : cells_.cells)  // an undecodable pair is drawn as relative error 1
    worst[size_t(c.layer + 1) * size_t(cols_) + size_t(c.expert + 1)] = std::max(kIdentical, std::isfinite(c.worst) ? c.worst : 1.0);
  map_->setMatrix(worst, rows_, cols_, -1);
}

void DiffWindow::listMetadata(const std::vector<diff::MetadataDifference>& differences) {
  metadata_->clear();
  const QString absent = tr("(absent)");
  for (const auto& d : differences) {
    auto* item = new QTreeWidgetItem(metadata_);
    item->setText(0, QString::fromStdString(d.source));
    item->setText(1, QString::fromStdString(d.key));
    item->setText(2, d.a ? QString::fromStdString(*d.a) : absent);
    item->setText(3, d.b ? QString::fromStdString(*d.b) : absent);
    for (int c = 1; c < 4; ++c) item->setToolTip(c, item->text(c));  // long values (templates, arrays) in full
  }
  tabs_->setTabText(1, differences.empty() ? tr("&Metadata (the same)") : tr("&Metadata (%1 differ)").arg(differences.size()));
}

QPoint DiffWindow::worstCell() const {
  if (!report_ || cells_.worstCell < 0) return {-1, -1};
  const diff::DiffCell& c = cells_.cells[size_t(cells_.worstCell)];
  return {c.expert + 1, c.layer + 1};  // x = column, y = row
}

void DiffWindow::selectCell(int row, int col) {
  if (!report_ || row < 0 || col < 0 || row >= rows_ || col >= cols_) return;
  tabs_->setCurrentWidget(list_);  // a click asks for the cell's tensors
  list_->clear();
  const diff::DiffCell* cell = cells_.find(row - 1, col - 1);
  for (size_t i : cell ? cell->pairs : std::vector<size_t>{}) {
    const auto& p = report_->pairs[i];
    auto* item = new QTreeWidgetItem(list_);
    item->setText(0, QString::fromStdString(p.pair.key));
    item->setText(1, QString::fromStdString(p.schemeA));
    item->setText(2, QString::fromStdString(p.schemeB));
    item->setText(3, !p.error.empty() ? tr("error") : !p.metrics.shapesAgree ? tr("shape differs") : p.metrics.identical ? tr("identical")
                                                                                                                        : QString::number(p.metrics.relFrobenius, 'g', 4));
    item->setText(4, QString::number(p.metrics.cosine, 'f', 6));
    item->setText(5, percent(p.saturatedB));
    item->setData(0, Qt::UserRole, int(i));
    item->setToolTip(0, QString::fromStdString(p.nameA + "  vs  " + p.nameB + (p.error.empty() ? "" : "\n" + p.error)));
  }
  if (list_->topLevelItemCount()) list_->setCurrentItem(list_->topLevelItem(0));
}

void DiffWindow::showPair(int pairIndex) {
  if (!report_) return;  // the newest pair wins: a preview still decoding is dropped
  const auto& p = report_->pairs[size_t(pairIndex)];
  auto a = a_, b = b_;
  const diff::Pair pair = p.pair;
  previewStats_->setText(tr("decoding %1...").arg(QString::fromStdString(pair.key)));
  jobs_.start(PairPreview, [a, b, pair](JobState&) -> Preview {
    Preview pv;
    pv.key = QString::fromStdString(pair.key);
    const auto device = num::deviceDequant().first;
    auto ma = diff::decodeUnit(*a, pair.a, device.get());
    auto mb = diff::decodeUnit(*b, pair.b, device.get());
    if (!ma || !mb) {
      pv.error = QString::fromStdString(!ma ? ma.error().describe() : mb.error().describe());
      return pv;
    }
    pv.a = std::move(ma.value());
    pv.b = std::move(mb.value());
    return pv;
  }, [this](Preview pv) { onPreview(std::move(pv)); });
}

void DiffWindow::onPreview(Preview pv) {
  previewKey_ = pv.key;
  if (!pv.error.isEmpty() || pv.a.rows != pv.b.rows || pv.a.cols != pv.b.cols) {
    previewStats_->setText(pv.error.isEmpty() ? tr("%1: shapes differ, nothing to preview").arg(pv.key) : pv.error);
    emit previewReady();
    return;
  }
  const int rows = int(std::min<uint64_t>(pv.a.rows, kTile)), cols = int(std::min<uint64_t>(pv.a.cols, kTile));
  std::vector<double> ta = tile(pv.a, rows, cols), tb = tile(pv.b, rows, cols), td(ta.size());
  double maxAbs = 0;
  for (size_t i = 0; i < td.size(); ++i) td[i] = ta[i] - tb[i], maxAbs = std::max(maxAbs, std::fabs(td[i]));
  previewA_->setMatrix(ta, rows, cols);
  previewB_->setMatrix(tb, rows, cols);
  previewD_->setMatrix(td, rows, cols);
  previewStats_->setText(tr("%1: [%2, %3], showing rows 0-%4 and columns 0-%5; largest |A - B| in the tile %6")
                             .arg(pv.key)
                             .arg(pv.a.rows)
                             .arg(pv.a.cols)
                             .arg(rows - 1)
                             .arg(cols - 1)
                             .arg(maxAbs, 0, 'g', 6));
  emit previewReady();
}

}  // namespace ws::ui
