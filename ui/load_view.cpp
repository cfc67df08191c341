#include "ui/load_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QSplitter>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "core/load/backend_registry.h"
#include "core/util/format_bytes.h"
#include "ui/byte_axis.h"
#include "ui/placement_controls.h"
#include "ui/remembered.h"

namespace ws::ui {

namespace {

QString bytesText(uint64_t b) { return QString::fromStdString(formatBytes(b)); }
QString categoryText(int c) { return QString::fromLatin1(plan::categoryName(c)).replace('_', ' '); }
QString duration(double s) { return s < 90 ? QString::number(s, 'f', 0) + " s" : QString::number(s / 60, 'f', 1) + " min"; }

}  // namespace

LoadView::LoadView(QWidget* parent)
    : QWidget(parent),
      device_(new QComboBox),
      epSize_(new QSpinBox),
      epRank_(new QSpinBox),
      placement_(new PlacementControls(this, "load/remainder")),
      fusedGateUp_(new QCheckBox(tr("fused gate+up"))),
      transpose_(new QCheckBox(tr("transposed copies"))),
      bf16_(new QCheckBox(tr("BF16 copies"))),
      freeGlob_(new QLineEdit),
      start_(new QPushButton(tr("&Start Load"))),
      cancel_(new QPushButton(tr("Cancel"))),
      progress_(new QProgressBar),
      status_(new QLabel),
      plot_(new QCustomPlot),
      residency_(new QTreeWidget),
      poll_(new QTimer(this)),
      jobs_(this),
      factory_(load::makeBackend),
      job_(std::make_shared<JobState>()) {
  device_->addItem(tr("host memory (stands in for a GPU)"), "host");
  if (load::cudaBackendBuilt()) {
    // Offer the GPU only when one answers; otherwise say why it is not there.
    auto probe = load::makeBackend("cuda:0");
    device_->addItem(probe ? QString::fromStdString(probe.value()->name()) : tr("CUDA: %1").arg(QString::fromStdString(probe.error().message)), "cuda:0");
    if (probe) device_->setCurrentIndex(1);
    else if (auto* item = qobject_cast<QStandardItemModel*>(device_->model())->item(1)) item->setEnabled(false);
  }
  epSize_->setRange(1, 1);
  epRank_->setRange(0, 0);
  connect(epSize_, &QSpinBox::valueChanged, this, [this](int n) { epRank_->setMaximum(n - 1); });
  fusedGateUp_->setToolTip(tr("Build one [2I, H] buffer per expert from its gate and up projections"));
  transpose_->setToolTip(tr("Build a transposed copy of each expert weight"));
  bf16_->setToolTip(tr("Build a BF16 dequantized copy of each quantized expert weight"));
  remember(fusedGateUp_, "load/deriveFusedGateUp");
  remember(transpose_, "load/deriveTranspose");
  remember(bf16_, "load/deriveBf16");
  freeGlob_->setPlaceholderText(tr("none (a glob, e.g. * (bf16) or *.experts.0.*)"));
  freeGlob_->setToolTip(tr("Right after the load, free the tensors and derived buffers whose names match, and show what came back to the device"));
  freeGlob_->setClearButtonEnabled(true);
  freeGlob_->setMinimumWidth(freeGlob_->fontMetrics().horizontalAdvance(freeGlob_->placeholderText()) + 40);
  cancel_->setEnabled(false);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  status_->setText(tr("Loads the checkpoint (one EP rank of it) onto the device and measures what it takes."));
  residency_->setHeaderLabels({tr("residency"), tr("measured"), tr("predicted"), tr("difference")});
  residency_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  plot_->setMinimumSize(360, 240);
  barsGroup_ = new QCPBarsGroup(plot_);  // predicted and measured side by side, for every load
  plot_->xAxis->setTickLabelRotation(30);

  auto* derive = new QHBoxLayout;
  derive->addWidget(fusedGateUp_);
  derive->addWidget(transpose_);
  derive->addWidget(bf16_);
  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::FieldsStayAtSizeHint);
  form->addRow(tr("&Device"), device_);
  form->addRow(tr("EP si&ze"), epSize_);
  form->addRow(tr("EP &rank"), epRank_);
  form->addRow(tr("Pl&acement"), placement_->placementBox());
  form->addRow(tr("Rema&inder"), placement_->remainderBox());
  form->addRow(tr("Derive"), derive);
  form->addRow(tr("Free after loa&d"), freeGlob_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(start_);
  buttons->addWidget(cancel_);
  buttons->addWidget(progress_, 1);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(residency_);
  split->addWidget(plot_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(status_);
  layout->addWidget(split, 1);

  connect(start_, &QPushButton::clicked, this, &LoadView::start);
  connect(cancel_, &QPushButton::clicked, this, &LoadView::cancel);
  connect(poll_, &QTimer::timeout, this, &LoadView::updateProgress);
}

// A load still running is cancelled (it frees what it allocated on its own thread); nothing waits.
LoadView::~LoadView() = default;

bool LoadView::running() const { return jobs_.running(0); }

void LoadView::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  jobs_.drop(0);  // a load of the previous checkpoint stops, and its report is dropped
  poll_->stop();
  cancel_->setEnabled(false);
  ckpt_ = std::move(c);
  report_.reset();
  residency_->clear();
  plot_->clearPlottables();
  plot_->replot();
  const int experts = ckpt_ ? int(std::clamp<int64_t>(ckpt_->model.numExperts, 1, 4096)) : 1;
  epSize_->setRange(1, experts);
  epSize_->setValue(1);
  start_->setEnabled(bool(ckpt_));
}

void LoadView::start() {
  if (!ckpt_ || running()) return;
  report_.reset();
  error_.clear();
  load::LoadOptions opt;
  auto placement = placement_->spec().build(epSize_->value(), ckpt_->model.numExperts);
  if (!placement) {
    error_ = QString::fromStdString(placement.error().describe());
    status_->setText(tr("<b>Cannot load:</b> %1").arg(error_.toHtmlEscaped()));
    emit finished();
    return;
  }
  opt.plan.placement = placement.value();
  opt.epRank = epRank_->value();
  opt.plan.deriveFusedGateUp = fusedGateUp_->isChecked();
  opt.plan.deriveTranspose = transpose_->isChecked();
  opt.plan.deriveBf16 = bf16_->isChecked();
  start_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setValue(0);
  status_->setText(tr("Starting ..."));
  clock_.start();
  poll_->start(100);
  auto ckpt = ckpt_;
  const std::string device = device_->currentData().toString().toStdString();
  const std::string freeGlob = freeGlob_->text().trimmed().toStdString();
  BackendFactory factory = factory_;
  job_ = jobs_.start(0, [ckpt, opt, device, factory, freeGlob](JobState& job) mutable -> Outcome {
    Outcome o;
    o.ckpt = ckpt;
    o.freeGlob = freeGlob;
    auto backend = factory(device);
    if (!backend) {
      o.error = QString::fromStdString(backend.error().describe());
      return o;
    }
    opt.cancel = &job.cancel;
    opt.progress = [&job](const char* phase, uint64_t done, uint64_t total) {
      job.phase = phase;
      job.done = done;
      job.total = total;
    };
    auto r = load::loadCheckpoint(*ckpt, *backend.value(), opt);
    if (!r) {
      o.error = QString::fromStdString(r.error().describe());
    } else {
      for (const auto& d : r.value().store->derived()) o.derived.push_back({d.name + " (" + d.kind + ")", d.buffer.bytes});
      for (const auto& d : r.value().store->deferred()) o.deferred.push_back({d.name, d.reason});
      if (!freeGlob.empty()) {
        o.freed = r.value().store->freeMatching(freeGlob);
        o.freeAfterFreeing = backend.value()->memory().free;
      }
      o.report = std::make_shared<load::LoadReport>(std::move(r.value().report));
      r.value().store->release();  // measured: give the device back
    }
    o.liveAfter = backend.value()->liveAllocations();
    return o;
  }, [this](Outcome o) { onFinished(std::move(o)); });
}

void LoadView::cancel() {
  job_->cancel = true;
  if (running()) status_->setText(tr("Cancelling ..."));
}

void LoadView::updateProgress() {
  const uint64_t done = job_->done, total = job_->total;
  if (total == 0) return;
  job_->showOn(progress_);
  const double seconds = std::max(clock_.elapsed(), qint64(1)) / 1000.0;
  const double rate = double(done) / seconds;
  status_->setText(tr("%1: %2 of %3, %4 GB/s, about %5 left")
                       .arg(QString::fromLatin1(job_->phase.load()))
                       .arg(bytesText(done))
                       .arg(bytesText(total))
                       .arg(rate / 1e9, 0, 'f', 2)
                       .arg(rate > 0 ? duration(double(total - done) / rate) : tr("?")));
}

void LoadView::onFinished(Outcome o) {
  poll_->stop();
  cancel_->setEnabled(false);
  start_->setEnabled(bool(ckpt_));
  if (o.ckpt != ckpt_) return;  // a load of the checkpoint open before this one
  report_ = o.report;
  error_ = o.error;
  if (!report_) {
    progress_->setValue(0);
    status_->setText(tr("<b>Load stopped:</b> %1<br>Allocations left on the device: %2.").arg(error_.toHtmlEscaped()).arg(o.liveAfter));
  } else {
    progress_->setMaximum(1);
    progress_->setValue(1);
    double seconds = 0;
    uint64_t bytes = 0;
    for (const auto& p : report_->phases)
      if (p.phase == "read+upload") seconds = p.seconds, bytes = p.bytes;
    status_->setText(tr("Loaded %1 onto %2 in %3 s (%4 GB/s), EP rank %5 of %6; released afterwards (allocations left: %7).")
                         .arg(bytesText(report_->resident))
                         .arg(QString::fromStdString(report_->device).toHtmlEscaped())
                         .arg(seconds, 0, 'f', 2)
                         .arg(seconds > 0 ? double(bytes) / seconds / 1e9 : 0.0, 0, 'f', 2)
                         .arg(report_->epRank)
                         .arg(report_->epSize)
                         .arg(o.liveAfter));
  }
  showResidency(o);
  emit finished();
}

void LoadView::showResidency(const Outcome& o) {
  residency_->clear();
  plot_->clearPlottables();
  if (!report_) {
    plot_->legend->setVisible(false);
    plot_->replot();
    return;
  }
  const load::LoadReport& r = *report_;
  auto signedText = [](int64_t d) { return d == 0 ? QStringLiteral("0") : (d < 0 ? "-" : "+") + bytesText(uint64_t(d < 0 ? -d : d)); };
  auto* total = new QTreeWidgetItem(residency_, {tr("resident on %1").arg(QString::fromStdString(r.device)), bytesText(r.resident), bytesText(r.predicted.resident), signedText(r.residentDifference)});
  for (int k = 0; k < plan::kCategories; ++k)
    if (k != plan::Deferred && (r.bytes[size_t(k)] || r.predicted.bytes[size_t(k)]))
      new QTreeWidgetItem(total, {categoryText(k), bytesText(r.bytes[size_t(k)]), bytesText(r.predicted.bytes[size_t(k)]),
                                  signedText(int64_t(r.bytes[size_t(k)]) - int64_t(r.predicted.bytes[size_t(k)]))});
  total->setExpanded(true);
  // Built from the planner's own list of them: their bytes agree by construction, so no difference.
  auto* derived = new QTreeWidgetItem(residency_, {tr("%n derived buffer(s)", nullptr, int(o.derived.size())), bytesText(r.derivedBytes), bytesText(r.predicted.derived)});
  for (const auto& [name, bytes] : o.derived) new QTreeWidgetItem(derived, {QString::fromStdString(name), bytesText(bytes)});
  auto* deferred = new QTreeWidgetItem(residency_, {tr("%n deferred tensor(s), left on disk", nullptr, int(o.deferred.size())), bytesText(r.bytes[plan::Deferred])});
  for (const auto& [name, reason] : o.deferred) new QTreeWidgetItem(deferred, {QString::fromStdString(name), QString::fromStdString(reason)});
  auto* device = new QTreeWidgetItem(residency_, {tr("device %1").arg(QString::fromStdString(r.device))});
  const load::Residency& res = r.residency;
  auto* used = new QTreeWidgetItem(device, {res.measured ? tr("used by the load (measured)") : tr("used by the load (stand-in's count)"),
                                            signedText(res.used), bytesText(res.predictedFootprint), signedText(res.difference)});
  used->setToolTip(0, tr("The fall in the device's free memory against the predicted footprint: %1 allocation(s) of %2, each rounded to %3; tolerance %4.%5")
                          .arg(res.arenas)
                          .arg(bytesText(res.reserved), bytesText(res.granularity), bytesText(res.tolerance))
                          .arg(res.measured ? QString() : tr(" The host stand-in's free memory is its own bookkeeping, not a measurement.")));
  if (res.mismatch)
    for (int col = 0; col < 4; ++col) used->setForeground(col, QBrush(Qt::red));
  new QTreeWidgetItem(device, {tr("free before the load"), bytesText(r.before.free)});
  new QTreeWidgetItem(device, {tr("free after the load"), bytesText(r.after.free)});
  if (!o.freeGlob.empty()) {
    auto* freed = new QTreeWidgetItem(device, {tr("freed %1: %n tensor(s)/buffer(s)", nullptr, int(o.freed.views)).arg(QString::fromStdString(o.freeGlob)), bytesText(o.freed.bytes)});
    new QTreeWidgetItem(freed, {tr("%n arena(s) back to the device", nullptr, int(o.freed.arenas)), bytesText(o.freed.arenaBytes)});
    new QTreeWidgetItem(freed, {tr("free after freeing"), bytesText(o.freeAfterFreeing)});
    freed->setExpanded(true);
  }
  new QTreeWidgetItem(device, {tr("total"), bytesText(r.before.total)});
  device->setExpanded(true);
  auto* phases = new QTreeWidgetItem(residency_, {tr("phases")});
  for (const auto& p : r.phases)
    new QTreeWidgetItem(phases, {QString::fromStdString(p.phase), tr("%1 s").arg(p.seconds, 0, 'f', 3), bytesText(p.bytes)});
  for (const auto& n : r.notes) new QTreeWidgetItem(residency_, {QString::fromStdString(n)});
  residency_->resizeColumnToContents(1);
  residency_->resizeColumnToContents(2);

  // Predicted beside measured, per category.
  QVector<double> keys, measured, predicted;
  QVector<QString> labels;
  double largest = 0;
  for (int k = 0; k < plan::kCategories; ++k)
    if (k != plan::Deferred && (r.bytes[size_t(k)] || r.predicted.bytes[size_t(k)])) {
      keys << double(keys.size());
      labels << categoryText(k);
      largest = std::max({largest, double(r.bytes[size_t(k)]), double(r.predicted.bytes[size_t(k)])});
    }
  const ByteUnit unit = byteUnitFor(largest);
  for (int k = 0; k < plan::kCategories; ++k)
    if (k != plan::Deferred && (r.bytes[size_t(k)] || r.predicted.bytes[size_t(k)])) {
      measured << double(r.bytes[size_t(k)]) / unit.divisor;
      predicted << double(r.predicted.bytes[size_t(k)]) / unit.divisor;
    }
  auto* p = new QCPBars(plot_->xAxis, plot_->yAxis);
  auto* m = new QCPBars(plot_->xAxis, plot_->yAxis);
  p->setName(tr("predicted"));
  m->setName(tr("measured"));
  p->setBrush(QColor(150, 170, 200));
  m->setBrush(QColor(40, 90, 160));
  for (auto* b : {p, m}) {
    b->setWidth(0.35);
    b->setBarsGroup(barsGroup_);
  }
  plot_->legend->setVisible(true);
  p->setData(keys, predicted, true);
  m->setData(keys, measured, true);
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  ticker->addTicks(keys, labels);
  plot_->xAxis->setTicker(ticker);
  plot_->xAxis->setRange(-0.7, double(keys.size()) - 0.3);
  plot_->yAxis->setLabel(tr("bytes (%1)").arg(unit.name));
  plot_->yAxis->setRange(0, largest / unit.divisor * 1.15 + 1e-9);
  plot_->replot();
}

}  // namespace ws::ui
