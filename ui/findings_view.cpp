#include "ui/findings_view.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>


#include "core/io/atomic_file.h"
#include "core/plan/devices.h"
#include "core/report/validate_report.h"
#include "core/validate/engines/engine_rules.h"
#include "core/validate/runtimes.h"
#include "ui/findings_model.h"
#include "ui/remembered.h"

namespace ws::ui {

namespace {

// Keeps the findings at or above a severity.
class SeverityProxy : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;
  void setMinimum(int s) {
    min_ = s;
    invalidateRowsFilter();
  }

 protected:
  bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
    return sourceModel()->index(row, 0, parent).data(FindingsModel::SeverityRole).toInt() >= min_;
  }

 private:
  int min_ = 0;
};

}  // namespace

FindingsView::FindingsView(QWidget* parent)
    : QWidget(parent),
      model_(new FindingsModel(this)),
      proxy_(new SeverityProxy(this)),
      table_(new QTableView),
      severity_(new QComboBox),
      run_(new QPushButton(tr("&Validate"))),
      cancel_(new QPushButton(tr("Cancel"))),
      export_(new QPushButton(tr("E&xport Report..."))),
      progress_(new QProgressBar),
      summary_(new QLabel),
      runtime_(new QComboBox),
      gpu_(new QComboBox),
      tp_(new QSpinBox),
      dp_(new QSpinBox),
      ep_(new QSpinBox),
      verdict_(new QLabel),
      poll_(new QTimer(this)),
      jobs_(this),
      job_(std::make_shared<JobState>()) {
  proxy_->setSourceModel(model_);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(-1, Qt::AscendingOrder);  // the report's order: errors first
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setWordWrap(false);
  table_->verticalHeader()->setVisible(false);
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);  // one line a finding
  table_->horizontalHeader()->setStretchLastSection(true);
  severity_->addItem(tr("errors only"), int(val::Severity::Error));
  severity_->addItem(tr("warnings and errors"), int(val::Severity::Warning));
  severity_->addItem(tr("everything (infos too)"), int(val::Severity::Info));
  severity_->setCurrentIndex(2);
  remember(severity_, "findings/severity");
  progress_->setVisible(false);
  cancel_->setEnabled(false);
  export_->setEnabled(false);
  summary_->setWordWrap(true);
  summary_->setText(tr("Press Validate to run every rule on this checkpoint (integrity, completeness, shapes, scales, values)."));

  auto* top = new QHBoxLayout;
  top->addWidget(run_);
  top->addWidget(cancel_);
  top->addWidget(progress_, 1);
  top->addStretch();
  auto* sevLabel = new QLabel(tr("&Show:"));
  sevLabel->setBuddy(severity_);
  top->addWidget(sevLabel);
  top->addWidget(severity_);
  top->addWidget(export_);
  // The deployment: which runtime's refusals are errors, and for a serving engine its layout and
  // GPU (validate --runtime --tp --dp --ep --gpu).
  runtime_->addItem(tr("any runtime"), QString());
  for (const auto& r : val::runtimes())
    runtime_->addItem(QString::fromLatin1(r.title.data(), qsizetype(r.title.size())) + (r.version.empty() ? QString() : " " + QString::fromLatin1(r.version.data(), qsizetype(r.version.size()))),
                      QString::fromLatin1(r.name.data(), qsizetype(r.name.size())));
  for (QSpinBox* b : {tp_, dp_, ep_}) b->setRange(1, 1024);
  gpu_->addItem(tr("no GPU named"), QString());
  for (const auto& d : plan::deviceTable())
    gpu_->addItem(QString::fromLatin1(d.name.data(), qsizetype(d.name.size())) + " (" + QString::fromStdString(plan::capabilityName(d.computeCapability)) + ")",
                  QString::fromLatin1(d.name.data(), qsizetype(d.name.size())));
  remember(runtime_, "findings/runtime");
  remember(gpu_, "findings/gpu");
  auto* deploy = new QHBoxLayout;
  auto label = [&](const QString& text, QWidget* buddy) {
    auto* l = new QLabel(text);
    l->setBuddy(buddy);
    deploy->addWidget(l);
    deploy->addWidget(buddy);
  };
  label(tr("Deplo&y on:"), runtime_);
  label(tr("T&P"), tp_);
  label(tr("&DP"), dp_);
  label(tr("EP"), ep_);
  label(tr("&GPU"), gpu_);
  deploy->addStretch();
  verdict_->setWordWrap(true);
  verdict_->setVisible(false);
  verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addLayout(deploy);
  layout->addWidget(verdict_);
  layout->addWidget(summary_);
  layout->addWidget(table_, 1);

  connect(runtime_, &QComboBox::currentIndexChanged, this, &FindingsView::updateDeploymentControls);
  updateDeploymentControls();
  connect(run_, &QPushButton::clicked, this, &FindingsView::run);
  connect(cancel_, &QPushButton::clicked, this, &FindingsView::cancel);
  connect(severity_, &QComboBox::currentIndexChanged, this, [this] { static_cast<SeverityProxy*>(proxy_)->setMinimum(severity_->currentData().toInt()); });
  connect(export_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export validation report"), "weightscope-report.html",
                                                      tr("HTML (*.html);;JSON (*.json);;Markdown (*.md);;JUnit XML (*.xml)"));
    if (path.isEmpty()) return;
    if (QString err = exportTo(path); !err.isEmpty()) QMessageBox::warning(this, tr("Could not export the report"), err);
  });
  connect(table_, &QTableView::activated, this, [this](const QModelIndex& i) {
    const val::Finding* f = model_->finding(proxy_->mapToSource(i));
    const Checkpoint* c = ckpt_.get();
    if (!f || !c) return;
    if (const TensorRecord* t = c->find(f->tensor)) emit tensorRequested(uint32_t(t - c->tensors.data()));
  });
  connect(table_, &QTableView::clicked, table_, &QTableView::activated);  // one click goes there too
  connect(poll_, &QTimer::timeout, this, [this] {
    job_->showOn(progress_);
    progress_->setFormat(QString::fromLatin1(job_->phase.load()) + " %p%");
  });
}

FindingsView::~FindingsView() = default;  // the runner cancels a running validation; nothing waits

const val::ValidationReport* FindingsView::report() const { return model_->report(); }

void FindingsView::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  jobs_.drop(0);  // a validation of the previous checkpoint stops, and its report is dropped
  showIdle();
  ckpt_ = std::move(c);
  model_->setReport(nullptr);
  export_->setEnabled(false);
  run_->setEnabled(bool(ckpt_));
}

void FindingsView::setMinimumSeverity(val::Severity s) { severity_->setCurrentIndex(severity_->findData(int(s))); }

void FindingsView::updateDeploymentControls() {
  const bool engine = val::engines::isServingEngine(runtime_->currentData().toString().toStdString());
  for (QWidget* w : std::initializer_list<QWidget*>{tp_, dp_, ep_, gpu_}) w->setEnabled(engine);
}

val::ValidateOptions FindingsView::options() const {
  val::ValidateOptions opt;
  opt.runtime = runtime_->currentData().toString().toStdString();
  if (val::engines::isServingEngine(opt.runtime)) {
    opt.layout.tp = tp_->value(), opt.layout.dp = dp_->value(), opt.layout.ep = ep_->value();
    opt.layout.gpu = gpu_->currentData().toString().toStdString();
  }
  return opt;
}

void FindingsView::run() {
  if (!ckpt_ || jobs_.running(0)) return;
  val::ValidateOptions opt = options();
  // A layout the engine cannot be started with is said here, as the command line's usage error.
  std::optional<std::string> bad = val::engines::resolveGpu(opt.layout);
  if (!bad && val::engines::isServingEngine(opt.runtime)) bad = val::engines::layoutProblem(opt.runtime, opt.layout, ckpt_->model);
  if (bad) {
    verdict_->setVisible(true);
    verdict_->setText("<b style='color:#c00'>" + tr("Not a layout %1 starts with: %2").arg(runtime_->currentText(), QString::fromStdString(*bad).toHtmlEscaped()) + "</b>");
    return;
  }
  start(std::move(opt));
}

// Tools > Verify Against Hub: the hub rules alone, the Hub's record fetched in the job (a
// request, then every file hashed: progress and Cancel as for any validation).
void FindingsView::runAgainstHub(const QString& location) {
  if (!ckpt_ || jobs_.running(0)) return;
  val::ValidateOptions opt;
  opt.only = {"hub"};
  opt.hub = location.trimmed().toStdString();
  start(std::move(opt));
}

void FindingsView::start(val::ValidateOptions opt) {
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setVisible(true);
  progress_->setValue(0);
  summary_->setText(opt.hub.empty() ? tr("Validating ...") : tr("Asking the Hub for %1 ...").arg(QString::fromStdString(opt.hub)));
  poll_->start(100);
  auto ckpt = ckpt_;
  auto failure = std::make_shared<std::string>();  // why the run failed, said in the summary
  job_ = jobs_.start(
      0,
      [ckpt, opt, failure](JobState& job) mutable -> std::shared_ptr<val::ValidationReport> {
        opt.progress = [&](const char* stage, uint64_t d, uint64_t t) {
          job.phase = stage;
          job.done = d;
          job.total = t;
          return !job.cancel;
        };
        auto r = capture([&] {
          if (!opt.hub.empty()) opt.hubRecord = std::make_shared<const HubRecord>(hubRecord(opt.hub));
          return val::validateCheckpoint(ckpt, opt);
        });
        if (!r) *failure = r.error().describe();
        return r ? std::make_shared<val::ValidationReport>(std::move(r.value())) : nullptr;
      },
      [this, failure](std::shared_ptr<val::ValidationReport> rep) {
        const bool failed = !rep;
        onFinished(std::move(rep));
        if (failed && !job_->cancel && !failure->empty()) summary_->setText(tr("Validation failed: %1").arg(QString::fromStdString(*failure).toHtmlEscaped()));
      });
}

void FindingsView::cancel() { job_->cancel = true; }

void FindingsView::showIdle() {
  poll_->stop();
  progress_->setVisible(false);
  cancel_->setEnabled(false);
  run_->setEnabled(bool(ckpt_));
}

void FindingsView::onFinished(std::shared_ptr<val::ValidationReport> rep) {
  showIdle();
  if (rep && rep->checkpoint != ckpt_) return;  // the validation of the checkpoint open before this one
  model_->setReport(rep);
  export_->setEnabled(bool(rep));
  verdict_->setVisible(rep && !rep->verdict.empty());
  if (rep && !rep->verdict.empty())
    verdict_->setText(QString("<b style='color:%1'>%2</b>").arg(rep->verdict.find(": refuses") != std::string::npos ? "#c00" : "#080", QString::fromStdString(rep->verdict).toHtmlEscaped()));
  if (!rep) {
    summary_->setText(job_->cancel ? tr("Validation cancelled.") : tr("Validation failed."));
  } else {
    const size_t e = rep->count(val::Severity::Error), w = rep->count(val::Severity::Warning), i = rep->count(val::Severity::Info);
    summary_->setText(tr("%1 rules run in %2 s: <b style='color:%3'>%4 error(s)</b>, %5 warning(s), %6 info(s). Click a finding to see its tensor.")
                          .arg(rep->rulesRun.size())
                          .arg(rep->seconds, 0, 'f', 2)
                          .arg(e ? "#c00" : "#080")
                          .arg(e)
                          .arg(w)
                          .arg(i));
    table_->resizeColumnsToContents();
  }
  emit finished();
}

QString FindingsView::exportTo(const QString& path) const {
  const val::ValidationReport* rep = report();
  if (!rep) return tr("Nothing to export: run the validation first.");
  const std::string format = validateFormatFor(path.toLower().toStdString());
  if (format.empty()) return tr("Unknown report type '.%1': use .json, .md, .html or .xml (JUnit).").arg(QFileInfo(path).suffix());
  try {
    AtomicFile f(path.toStdString());
    f.write(validateReportText(*rep, val::Severity::Info, format));  // the file keeps every finding; the filter is a view
    f.commit();
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace ws::ui
