#include "ui/rank_map_view.h"

#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QMimeData>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSpinBox>
#include <QSplitter>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>

#include "core/plan/devices.h"
#include "core/plan/vllm_profile.h"
#include "core/validate/runtimes.h"
#include "core/util/format_bytes.h"
#include "ui/byte_axis.h"
#include "ui/engine_log_view.h"
#include "ui/host_offload_controls.h"
#include "ui/placement_controls.h"
#include "ui/remembered.h"

namespace ws::ui {

namespace {

// One colour per category, in the order of plan::Category; experts warm, the rest cool.
const QColor kCategoryColours[plan::kCategories] = {
    QColor(214, 96, 77), QColor(244, 165, 130), QColor(67, 147, 195), QColor(146, 197, 222), QColor(90, 174, 97),
    QColor(27, 120, 55), QColor(180, 180, 180), QColor(153, 112, 171), QColor(120, 120, 120), QColor(0, 0, 0)};

// Lists of a rank's tensors: which one an item is, and how many rows it shows at most.
constexpr int kListRole = Qt::UserRole + 1;
enum { kHeld, kSkipped };
constexpr size_t kMaxListed = 20000;

QString bytesText(uint64_t b) { return QString::fromStdString(formatBytes(b)); }
QString signedBytes(int64_t b) { return b < 0 ? "-" + bytesText(uint64_t(-b)) : bytesText(uint64_t(b)); }

}  // namespace

RankMapView::RankMapView(QWidget* parent)
    : QWidget(parent),
      epSize_(new QSpinBox),
      placement_(new PlacementControls(this, "ranks/remainder")),
      budget_(new QComboBox),
      context_(new QSpinBox),
      requests_(new QSpinBox),
      kvDtype_(new QComboBox),
      engine_(new QComboBox),
      offload_(new HostOffloadControls(this)),
      plot_(new QCustomPlot),
      details_(new QTreeWidget),
      caption_(new QLabel),
      engineLog_(new EngineLogView),
      jobs_(this) {
  setAcceptDrops(true);  // an engine's log dropped anywhere on the tab
  epSize_->setRange(1, 1);
  epSize_->setToolTip(tr("Expert-parallel size: how many ranks share the routed experts"));
  budget_->setEditable(true);
  budget_->addItem(tr("no budget"));
  for (const auto& d : plan::deviceTable()) budget_->addItem(QString::fromLatin1(d.name.data(), qsizetype(d.name.size())));
  budget_->setToolTip(tr("GPU memory per rank: a device, or a size such as 96GiB"));
  remember(budget_, "ranks/budget");
  context_->setRange(0, 100'000'000);
  context_->setSingleStep(1024);
  context_->setSpecialValueText(tr("the model's"));
  context_->setSuffix(tr(" tokens"));
  context_->setToolTip(tr("Tokens per request (vLLM --max-model-len); the model's max_position_embeddings by default"));
  remember(context_, "ranks/context");
  for (const char* d : {"auto", "bf16", "fp16", "fp8", "fp8_e5m2", "fp8_ds_mla", "f16", "q8_0", "q4_0"}) kvDtype_->addItem(QString::fromLatin1(d));
  kvDtype_->setToolTip(tr("KV cache dtype (vLLM --kv-cache-dtype; GGUF: llama.cpp's cache types f16, q8_0, q4_0)"));
  remember(kvDtype_, "ranks/kvDtype");
  requests_->setRange(1, 1'000'000);
  requests_->setValue(16);
  requests_->setToolTip(tr("Concurrent requests of that length the deployment should serve: the KV-cache bars show each rank's share, and with a budget the fewest GPUs that fit them are worked out (plan --fit)"));
  remember(requests_, "ranks/requests");

  engine_->addItem(tr("no engine"), QString());
  for (const char* e : {"vllm", "sglang"})
    if (const val::RuntimeInfo* r = val::findRuntime(e))
      engine_->addItem(QString::fromLatin1(r->title.data(), qsizetype(r->title.size())) + " " + QString::fromLatin1(r->version.data(), qsizetype(r->version.size())),
                       QString::fromLatin1(e));
  engine_->setToolTip(tr("What this engine refuses at this EP layout on the budget's GPU (plan --runtime; docs/rules.md, engine)"));
  remember(engine_, "ranks/engine");

  auto* controls = new QFormLayout;
  controls->addRow(tr("EP &size"), epSize_);
  controls->addRow(tr("&Placement"), placement_->placementBox());
  controls->addRow(tr("&Remainder"), placement_->remainderBox());
  controls->addRow(tr("GPU &budget"), budget_);
  controls->addRow(tr("&Context length"), context_);
  controls->addRow(tr("&KV cache dtype"), kvDtype_);
  controls->addRow(tr("Re&quests"), requests_);
  controls->addRow(tr("E&ngine"), engine_);
  offload_->addRows(controls);
  details_->setHeaderLabels({tr("rank contents"), tr("bytes")});
  details_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  details_->setRootIsDecorated(true);
  auto* side = new QWidget;
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(0, 0, 0, 0);
  sideLayout->addLayout(controls);
  sideLayout->addWidget(details_, 1);
  sideLayout->addWidget(engineLog_, 1);

  // The ranks' axes in a row of their own, where the host panel joins them (drawHost), so the
  // legend below keeps the plot's whole width.
  panels_ = new QCPLayoutGrid;
  QCPAxisRect* ranksRect = plot_->axisRect();
  plot_->plotLayout()->take(ranksRect);
  plot_->plotLayout()->addElement(0, 0, panels_);
  panels_->addElement(0, 0, ranksRect);
  plot_->yAxis->setLabel(tr("bytes per rank"));
  plot_->xAxis->setLabel(tr("EP rank (click one to list its experts)"));
  // The legend in a row of its own under the plot, so it never hides a bar.
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->take(plot_->legend);
  plot_->plotLayout()->addElement(1, 0, plot_->legend);
  plot_->legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot_->legend->setWrap(5);
  plot_->plotLayout()->setRowStretchFactor(1, 0.001);
  plot_->setMinimumSize(400, 300);
  caption_->setWordWrap(true);
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(plot_);
  split->addWidget(side);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setSizes({900, 420});
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(caption_);
  layout->addWidget(split, 1);

  connect(epSize_, &QSpinBox::valueChanged, this, &RankMapView::replan);
  connect(placement_, &PlacementControls::changed, this, &RankMapView::replan);
  connect(budget_, &QComboBox::currentTextChanged, this, &RankMapView::replan);
  connect(context_, &QSpinBox::valueChanged, this, &RankMapView::replan);
  connect(kvDtype_, &QComboBox::currentTextChanged, this, &RankMapView::replan);
  connect(requests_, &QSpinBox::valueChanged, this, &RankMapView::replan);
  connect(engine_, &QComboBox::currentIndexChanged, this, &RankMapView::replan);
  connect(offload_, &HostOffloadControls::changed, this, &RankMapView::replan);
  connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
    if (!result_ || !plot_->axisRect()->rect().contains(e->pos())) return QToolTip::hideText();
    const int r = int(std::lround(plot_->xAxis->pixelToCoord(e->pos().x())));
    if (r < 0 || r >= int(result_->ranks.size())) return QToolTip::hideText();
    const plan::RankPlan& p = result_->ranks[size_t(r)];
    QString tip = tr("rank %1: %2 resident, %3 experts\npredicted load peak %4").arg(r).arg(bytesText(p.resident)).arg(p.experts.size()).arg(bytesText(p.peak));
    if (p.fits) tip += (*p.fits ? tr("\nfits; headroom %1") : tr("\ndoes NOT fit; short by %1")).arg(bytesText(uint64_t(std::abs(p.headroom))));
    if (kv_ && kv_->cache && opt_ && opt_->capacity) {
      const plan::KvFit f = kv_->fit(*opt_, p);
      tip += tr("\nKV cache: %1 tokens fit, at most %2 requests of %3 tokens").arg(f.tokensFit).arg(f.maxConcurrency, 0, 'f', 2).arg(kv_->cache->maxModelLen);
    }
    QToolTip::showText(e->globalPosition().toPoint(), tip + tr("\nclick to list its experts"), plot_);
  });
  connect(plot_, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
    if (!result_ || !plot_->axisRect()->rect().contains(e->pos())) return;
    const int r = int(std::lround(plot_->xAxis->pixelToCoord(e->pos().x())));
    if (r >= 0 && r < int(result_->ranks.size())) selectRank(r);
  });
  connect(details_, &QTreeWidget::itemExpanded, this, &RankMapView::fillTensors);
  connect(details_, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
    const QVariant t = item->data(0, Qt::UserRole);
    if (t.isValid()) emit tensorRequested(t.toUInt());
  });
}

RankMapView::~RankMapView() = default;  // a plan still running is dropped; nothing waits

QComboBox* RankMapView::placementBox() const { return placement_->placementBox(); }
QComboBox* RankMapView::remainderBox() const { return placement_->remainderBox(); }

void RankMapView::setMapFile(const QString& path) { placement_->setMapFile(path); }

void RankMapView::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  ckpt_ = std::move(c);
  result_.reset();
  selected_ = -1;
  const int64_t experts = ckpt_ ? std::max<int64_t>(ckpt_->model.numExperts, 1) : 1;
  const QSignalBlocker block(epSize_);
  epSize_->setRange(1, int(std::min<int64_t>(experts, 4096)));
  epSize_->setValue(std::min(8, epSize_->maximum()));  // a typical node
  replan();
}

namespace {
RankMapView::Outcome failed(const QString& why) {
  RankMapView::Outcome o;
  o.error = why;
  return o;
}
}  // namespace

void RankMapView::replan() {
  if (!ckpt_) return;
  // The newest options (or checkpoint) win: a plan still running for older ones is dropped.
  const plan::PlacementSpec spec = placement_->spec();
  const int ep = epSize_->value();
  const QString budget = budget_->currentText() == budget_->itemText(0) ? QString() : budget_->currentText().trimmed();  // "no budget"
  plan::KvOptions kvOpt;
  kvOpt.maxModelLen = context_->value() > 0 ? context_->value() : -1;
  kvOpt.dtype = kvDtype_->currentText().toStdString();
  kvOpt.llamaCpp = ckpt_->format == "gguf";
  const double requests = requests_->value();
  const std::string engine = engine_->currentData().toString().toStdString();
  kvOpt.sglang = engine == "sglang";  // its own pools where it sizes them apart, as plan --runtime sglang
  const HostOffloadChoice host = offload_->choice();
  auto ckpt = ckpt_;
  jobs_.start(0, [ckpt, spec, ep, budget, kvOpt, requests, engine, host](JobState&) mutable -> Outcome {
    plan::PlanOptions opt;
    host.apply(opt);
    // SGLang (as plan --runtime sglang): its headroom from the budget's GPU at --tp-size EP, TP 1.
    kvOpt.sglangLaunch.tpSize = kvOpt.sglangLaunch.attnDpSize = ep;
    kvOpt.sglangLaunch.modelPath = ckpt->root;
    if (!budget.isEmpty()) {
      try {
        const plan::GpuBudget b = plan::budgetFor(budget.toStdString(), 1.0);
        opt.capacity = b.usable();
        kvOpt.sglangLaunch.gpuMemMiB = b.nvidiaSmiMiB, kvOpt.sglangLaunch.preLoadFreeBytes = b.usable();
        const plan::VllmServeDefaults d = plan::vllmServeDefaults(b.total, b.device);  // vLLM's for the device, as plan's
        kvOpt.maxNumBatchedTokens = d.maxNumBatchedTokens, kvOpt.defaultMaxNumSeqs = d.maxNumSeqs;
      } catch (const std::exception& e) {
        return failed(QObject::tr("GPU budget '%1': %2").arg(budget, QString::fromStdString(e.what())));
      }
    }
    auto placement = spec.build(ep, ckpt->model.numExperts);
    if (!placement) return failed(QString::fromStdString(placement.error().describe()));
    opt.placement = placement.value();
    auto r = plan::planCheckpoint(*ckpt, opt);
    if (!r) return failed(QString::fromStdString(r.error().describe()));
    Outcome o;
    o.plan = std::make_shared<plan::PlanResult>(std::move(r.value()));
    o.opt = std::make_shared<plan::PlanOptions>(opt);
    o.kv = std::make_shared<plan::KvBudget>(plan::kvBudgetFor(ckpt->model, kvOpt, 0));
    if (o.kv->cache && opt.capacity) {  // the fewest GPUs for the requests: plan --fit's search
      auto fit = plan::fitDeployment(*ckpt, opt, spec, kvOpt, 0, requests);
      if (fit) o.fit = std::make_shared<plan::FitResult>(std::move(fit.value()));
      else o.fitError = QString::fromStdString(fit.error().message);
    }
    if (!engine.empty()) {  // the engine at this layout (TP 1 within the EP group), on the budget's GPU
      val::engines::EngineLayout l;
      std::optional<std::string> bad = val::engines::layoutForPlan(engine, ep, 1, l);
      if (!bad && plan::findDevice(budget.toStdString())) l.gpu = budget.toStdString();
      if (!bad) bad = val::engines::resolveGpu(l);
      if (!bad) bad = val::engines::layoutProblem(engine, l, ckpt->model);
      if (bad) o.engineError = QString::fromStdString(*bad);
      else o.engine = std::make_shared<val::engines::EngineCheck>(val::engines::checkEngine(*ckpt, engine, l));
    }
    return o;
  }, [this](Outcome o) { onPlanned(std::move(o)); });
}

void RankMapView::onPlanned(Outcome o) {
  result_ = o.plan;
  opt_ = o.opt;
  kv_ = o.kv;
  fit_ = o.fit;
  fitError_ = o.fitError;
  engineCheck_ = o.engine;
  engineError_ = o.engineError;
  if (!result_) {
    caption_->setText(tr("<b>Cannot plan:</b> %1").arg(o.error.toHtmlEscaped()));
    plot_->clearPlottables();
    plot_->clearItems();
    hostBars_ = nullptr;
    hostBytes_.clear();
    plot_->replot();
    details_->clear();
    emit planned();
    return;
  }
  draw();
  selectRank(std::clamp(selected_, 0, int(result_->ranks.size()) - 1));
  // The engine-log comparison at this plan: rank 0's weights, the budget's device, the tab's KV
  // settings where a log states none.
  plan::LogCheckRequest req;
  if (kv_) req.fallback = kv_->options;
  if (!result_->ranks.empty()) req.weightsPerRank = result_->ranks.front().resident;
  const QString budget = budget_->currentText() == budget_->itemText(0) ? QString() : budget_->currentText().trimmed();
  try {
    if (!budget.isEmpty()) req.deviceTotal = plan::budgetFor(budget.toStdString(), 1.0).total;
  } catch (const std::exception&) {  // the caption already says the budget is not one
  }
  engineLog_->setContext(ckpt_, req);
  emit planned();
}

void RankMapView::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls() && e->mimeData()->urls().size() == 1 && e->mimeData()->urls().front().isLocalFile()) e->acceptProposedAction();
}

void RankMapView::dropEvent(QDropEvent* e) {
  engineLog_->load(e->mimeData()->urls().front().toLocalFile());
  e->acceptProposedAction();
}

void RankMapView::draw() {
  plot_->clearPlottables();
  plot_->clearItems();
  const QString hostLine = drawHost();
  const auto& ranks = result_->ranks;
  // Above the weights: the runtime reserves, and the KV cache of each rank's share of the requests
  // (each rank serves its own with attention data-parallel, as plan --fit counts them).
  const bool kv = kv_ && kv_->cache;
  const uint64_t reserves = kv_ ? kv_->reserveBytes() : 0;
  const uint64_t share = (uint64_t(requests_->value()) + ranks.size() - 1) / std::max<size_t>(1, ranks.size());
  const uint64_t kvBytes =
      kv ? share * (uint64_t(double(kv_->cache->maxModelLen) * (kv_->cache->poolBytesPerToken > 0 ? kv_->cache->poolBytesPerToken : double(kv_->cache->bytesPerToken))) +
                    kv_->cache->slidingBytesPerSeq + kv_->cache->stateBytesPerSeq) +
               kv_->cache->poolFixedBytes
         : 0;  // SGLang's pools charge a token of the full pool its share of the others
  double largest = 0;
  for (const auto& r : ranks) largest = std::max(largest, double(std::max(r.resident + reserves + kvBytes, r.peak)));
  // The budget line: what a rank may use (capacity less the reserve) = any rank's peak + headroom.
  std::optional<double> budget;
  if (!ranks.empty() && ranks[0].fits.has_value()) budget = double(int64_t(ranks[0].peak) + ranks[0].headroom);
  if (budget) largest = std::max(largest, *budget);
  const ByteUnit unit = byteUnitFor(largest);
  plot_->yAxis->setLabel(tr("per rank (%1)").arg(unit.name));

  QCPBars* below = nullptr;
  QVector<double> keys;
  for (size_t r = 0; r < ranks.size(); ++r) keys << double(r);
  for (int cat = 0; cat < plan::kCategories; ++cat) {
    if (cat == plan::Deferred) continue;  // not uploaded: listed per rank, not drawn
    QVector<double> values;
    bool any = false;
    for (const auto& r : ranks) {
      values << double(r.bytes[size_t(cat)]) / unit.divisor;
      any |= r.bytes[size_t(cat)] > 0;
    }
    if (!any) continue;
    auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
    bars->setName(QString::fromLatin1(plan::categoryName(cat)).replace('_', ' '));
    bars->setPen(Qt::NoPen);
    bars->setBrush(kCategoryColours[cat]);
    bars->setWidth(0.7);
    bars->setData(keys, values, true);
    if (below) bars->moveAbove(below);
    below = bars;
  }
  const std::pair<QString, uint64_t> extras[] = {{tr("runtime reserves"), reserves}, {tr("KV cache, %n request(s) a rank", nullptr, int(share)), kvBytes}};
  const QColor extraColours[] = {QColor(255, 217, 47), QColor(102, 194, 165)};
  for (int k = 0; k < 2; ++k) {
    if (!extras[k].second) continue;
    auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
    bars->setName(extras[k].first);
    bars->setPen(QPen(extraColours[k].darker(130)));
    bars->setBrush(QBrush(extraColours[k], k == 1 ? Qt::BDiagPattern : Qt::SolidPattern));
    bars->setWidth(0.7);
    QVector<double> values(keys.size(), double(extras[k].second) / unit.divisor);
    bars->setData(keys, values, true);
    if (below) bars->moveAbove(below);
    below = bars;
  }
  // Each rank's predicted load peak (resident, derived and transient buffers) as a marker.
  auto* peak = plot_->addGraph();
  peak->setName(tr("load peak (x%1)").arg(result_->multiplier, 0, 'f', 2));
  peak->setLineStyle(QCPGraph::lsNone);
  peak->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, Qt::black, Qt::white, 9));
  for (size_t r = 0; r < ranks.size(); ++r) peak->addData(double(r), double(ranks[r].peak) / unit.divisor);
  if (budget) {
    auto* line = new QCPItemStraightLine(plot_);
    line->point1->setCoords(0, *budget / unit.divisor);
    line->point2->setCoords(1, *budget / unit.divisor);
    line->setPen(QPen(QColor(200, 0, 0), 2, Qt::DashLine));
    auto* label = new QCPItemText(plot_);
    label->position->setCoords(double(ranks.size()) - 0.5, *budget / unit.divisor);
    label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    label->setText(tr("budget %1").arg(bytesText(uint64_t(*budget))));
    label->setColor(QColor(200, 0, 0));
  }
  QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
  ticker->setTickStep(ranks.size() <= 32 ? 1 : std::pow(10.0, std::floor(std::log10(double(ranks.size()) / 4.0))));
  plot_->xAxis->setTicker(ticker);
  plot_->xAxis->setRange(-0.6, double(ranks.size()) - 0.4);
  plot_->yAxis->setRange(0, largest / unit.divisor * 1.12 + 1e-9);
  plot_->replot();

  int fits = 0;
  int64_t worst = INT64_MAX;
  for (const auto& r : ranks) {
    fits += r.fits.value_or(false);
    worst = std::min(worst, r.headroom);
  }
  QString text = tr("EP %1 over %2 experts (%3): imbalance %4 (largest rank / mean)")
                     .arg(ranks.size())
                     .arg(ckpt_->model.numExperts)
                     .arg(placement_->placementBox()->currentText())
                     .arg(result_->imbalance, 0, 'f', 3);
  if (budget)
    text += tr("; %1 of %2 ranks fit, least headroom %3").arg(fits).arg(ranks.size()).arg(signedBytes(worst));
  if (kv) {
    const plan::KvCache& c = *kv_->cache;
    text += tr("<br>KV cache (%1): %2 per token per rank over %3 full + %4 MLA layers, %5 tokens a request")
                .arg(QString::fromStdString(c.dtype))
                .arg(bytesText(c.bytesPerToken))
                .arg(c.layers.full)
                .arg(c.layers.mla)
                .arg(c.maxModelLen);
    if (budget && opt_) {
      double least = -1;
      uint64_t tokens = UINT64_MAX;
      for (const auto& r : ranks) {
        const plan::KvFit f = kv_->fit(*opt_, r);
        least = least < 0 ? f.maxConcurrency : std::min(least, f.maxConcurrency);
        tokens = std::min(tokens, f.tokensFit);
      }
      text += tr("; the fullest rank has room for %1 tokens, at most %2 requests").arg(tokens).arg(std::max(0.0, least), 0, 'f', 2);
    }
  } else if (kv_ && !kv_->why.empty()) {
    text += tr("<br>KV cache not estimated: %1").arg(QString::fromStdString(kv_->why).toHtmlEscaped());
  }
  if (fit_) {
    if (fit_->answer)
      text += tr("<br><b>%1 requests fit on EP %2 x TP %3</b> (%4 GPUs, serving %5; the fewest tried)")
                  .arg(requests_->value())
                  .arg(fit_->answer->ep)
                  .arg(fit_->answer->tp)
                  .arg(fit_->answer->ep)
                  .arg(fit_->answer->concurrency, 0, 'f', 2);
    else
      text += tr("<br><b>%1 requests do not fit</b> on up to EP %2").arg(requests_->value()).arg(fit_->tried.empty() ? 0 : fit_->tried.back().ep);
  } else if (!fitError_.isEmpty()) {
    text += tr("<br>Fit not worked out: %1").arg(fitError_.toHtmlEscaped());
  }
  text += hostLine;
  for (const auto& n : result_->notes) text += "<br>" + QString::fromStdString(n).toHtmlEscaped();
  if (engineCheck_) {
    text += QString("<br><b style='color:%1'>%2</b>").arg(engineCheck_->refuses() ? "#c00" : "#080", QString::fromStdString(engineCheck_->verdict).toHtmlEscaped());
    for (const auto& f : engineCheck_->findings)
      text += QString("<br>%1 %2: %3").arg(val::severityName(f.severity), QString::fromStdString(f.code), QString::fromStdString(f.message).toHtmlEscaped());
  } else if (!engineError_.isEmpty()) {
    text += tr("<br><b style='color:#c00'>Not a layout %1 forms:</b> %2").arg(engine_->currentText(), engineError_.toHtmlEscaped());
  }
  caption_->setText(text);
}

// What the plan keeps in host memory, in a panel of its own beside the ranks (host memory is
// another budget and often ten times the GPU's): by NUMA node where the plan splits it so
// (KTransformers, a KT folder), else the ranks' host bytes together - and the host budget's line.
QString RankMapView::drawHost() {
  hostBars_ = nullptr;
  hostBytes_.clear();
  QVector<double> keys;
  QVector<QString> labels;
  if (!result_->numaBytes.empty()) {
    for (size_t n = 0; n < result_->numaBytes.size(); ++n) {
      hostBytes_.push_back(result_->numaBytes[n]);
      labels << tr("NUMA %1").arg(n);
    }
  } else {
    uint64_t total = 0;
    for (const auto& r : result_->ranks) total += r.host;
    if (total) {
      hostBytes_.push_back(total);
      labels << tr("host");
    }
  }
  if (hostBytes_.empty()) {
    if (hostRect_) {
      panels_->remove(hostRect_);
      panels_->simplify();
      hostRect_ = nullptr;
    }
    return {};
  }
  if (!hostRect_) {
    hostRect_ = new QCPAxisRect(plot_);
    panels_->addElement(0, 1, hostRect_);
    panels_->setColumnStretchFactor(1, 0.2);
  }
  uint64_t total = 0;
  double largest = 0;
  for (size_t i = 0; i < hostBytes_.size(); ++i) {
    keys << double(i);
    total += hostBytes_[i];
    largest = std::max(largest, double(hostBytes_[i]));
  }
  const HostOffloadChoice choice = offload_->choice();
  std::optional<uint64_t> hostMem;
  QString budgetProblem;
  if (!choice.hostMemory.isEmpty()) {
    try {
      hostMem = plan::parseSize(choice.hostMemory.toStdString());
      largest = std::max(largest, double(*hostMem));
    } catch (const std::exception& e) {
      budgetProblem = tr("host memory '%1': %2").arg(choice.hostMemory, QString::fromStdString(e.what()));
    }
  }
  const ByteUnit unit = byteUnitFor(largest);
  QCPAxis* x = hostRect_->axis(QCPAxis::atBottom);
  QCPAxis* y = hostRect_->axis(QCPAxis::atLeft);
  y->setLabel(tr("host memory (%1)").arg(unit.name));
  hostBars_ = new QCPBars(x, y);
  hostBars_->setName(tr("host memory"));
  hostBars_->removeFromLegend();  // its own panel says what it is
  hostBars_->setPen(Qt::NoPen);
  hostBars_->setBrush(QColor(140, 107, 177));
  hostBars_->setWidth(0.6);
  QVector<double> values;
  for (uint64_t b : hostBytes_) values << double(b) / unit.divisor;
  hostBars_->setData(keys, values, true);
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int i = 0; i < labels.size(); ++i) ticker->addTick(double(i), labels[i]);
  x->setTicker(ticker);
  x->setRange(-0.6, double(hostBytes_.size()) - 0.4);
  y->setRange(0, largest / unit.divisor * 1.12 + 1e-9);
  QString line = tr("<br>Host memory");
  if (!choice.mode.empty()) line += " (" + choice.flags().toHtmlEscaped() + ")";
  line += tr(": %1").arg(bytesText(total));
  if (hostBytes_.size() > 1)
    for (size_t i = 0; i < hostBytes_.size(); ++i) line += tr("; NUMA node %1: %2").arg(i).arg(bytesText(hostBytes_[i]));
  if (!result_->hostFormula.empty()) line += "<br>" + QString::fromStdString(result_->hostFormula).toHtmlEscaped();
  if (hostMem) {
    auto* budget = new QCPItemStraightLine(plot_);
    budget->setClipAxisRect(hostRect_);
    for (QCPItemPosition* p : {budget->point1, budget->point2}) p->setAxes(x, y);
    budget->point1->setCoords(0, double(*hostMem) / unit.divisor);
    budget->point2->setCoords(1, double(*hostMem) / unit.divisor);
    budget->setPen(QPen(QColor(200, 0, 0), 2, Qt::DashLine));
    line += total <= *hostMem ? tr("; fits the host's %1").arg(bytesText(*hostMem))
                              : tr("; <b>does NOT fit</b> the host's %1: short by %2").arg(bytesText(*hostMem), bytesText(total - *hostMem));
  } else if (!budgetProblem.isEmpty()) {
    line += "; " + budgetProblem.toHtmlEscaped();
  }
  return line;
}

void RankMapView::selectRank(int rank) {
  details_->clear();
  if (!result_ || rank < 0 || rank >= int(result_->ranks.size())) return;
  selected_ = rank;
  const plan::RankPlan& r = result_->ranks[size_t(rank)];
  new QTreeWidgetItem(details_, {tr("rank %1: resident").arg(rank), bytesText(r.resident)});
  new QTreeWidgetItem(details_, {tr("predicted load peak"), bytesText(r.peak)});
  if (r.host) new QTreeWidgetItem(details_, {tr("kept in host memory"), bytesText(r.host)});
  if (r.fits) new QTreeWidgetItem(details_, {*r.fits ? tr("fits; headroom") : tr("does NOT fit; short by"), signedBytes(r.headroom)});
  if (kv_ && kv_->cache) {
    auto* kvItem = new QTreeWidgetItem(details_, {tr("KV cache per token"), bytesText(kv_->cache->bytesPerToken)});
    for (const auto& res : kv_->reserves) {
      auto* it = new QTreeWidgetItem(kvItem, {tr("reserve: %1").arg(QString::fromStdString(res.name)), res.hostBytes ? tr("%1 host").arg(bytesText(res.hostBytes)) : bytesText(res.bytes)});
      it->setToolTip(0, QString::fromStdString(res.formula));
    }
    if (opt_ && opt_->capacity) {
      const plan::KvFit f = kv_->fit(*opt_, r);
      new QTreeWidgetItem(kvItem, {tr("free for the KV cache"), signedBytes(f.freeBytes)});
      new QTreeWidgetItem(kvItem, {tr("tokens that fit"), QString::number(f.tokensFit)});
      new QTreeWidgetItem(kvItem, {tr("requests of %1 tokens").arg(kv_->cache->maxModelLen), QString::number(f.maxConcurrency, 'f', 2)});
    }
    kvItem->setExpanded(true);
  }
  auto* cats = new QTreeWidgetItem(details_, {tr("by category"), bytesText(r.resident)});
  for (int cat = 0; cat < plan::kCategories; ++cat)
    if (r.bytes[size_t(cat)]) {
      auto* it = new QTreeWidgetItem(cats, {QString::fromLatin1(plan::categoryName(cat)).replace('_', ' '), bytesText(r.bytes[size_t(cat)])});
      it->setForeground(0, kCategoryColours[cat]);
    }
  // Experts with their bytes summed over the MoE layers.
  auto* experts = new QTreeWidgetItem(details_, {tr("%n routed expert(s)", nullptr, int(r.experts.size())), QString()});
  uint64_t expertTotal = 0;
  for (int64_t e : r.experts) {
    uint64_t b = 0;
    for (const auto& row : result_->expertBytes)
      if (e >= 0 && size_t(e) < row.size()) b += row[size_t(e)];
    expertTotal += b;
    new QTreeWidgetItem(experts, {tr("expert %1").arg(e), bytesText(b)});
  }
  experts->setText(1, bytesText(expertTotal));
  experts->setExpanded(true);
  // A rank can hold 200k tensors: their rows are made when the list is opened (fillTensors).
  auto* held = new QTreeWidgetItem(details_, {tr("%n tensor(s) held (activate one to show it in the tree)", nullptr, int(r.held.size())), QString()});
  held->setData(0, kListRole, kHeld);
  held->setChildIndicatorPolicy(r.held.empty() ? QTreeWidgetItem::DontShowIndicator : QTreeWidgetItem::ShowIndicator);
  if (!r.skipped.empty()) {
    auto* skipped = new QTreeWidgetItem(details_, {tr("%n tensor(s) not uploaded", nullptr, int(r.skipped.size())), QString()});
    skipped->setData(0, kListRole, kSkipped);
    skipped->setChildIndicatorPolicy(QTreeWidgetItem::ShowIndicator);
  }
}

void RankMapView::fillTensors(QTreeWidgetItem* list) {
  if (!result_ || selected_ < 0 || list->childCount() > 0 || !list->data(0, kListRole).isValid()) return;
  const plan::RankPlan& r = result_->ranks[size_t(selected_)];
  const bool held = list->data(0, kListRole).toInt() == kHeld;
  const size_t n = held ? r.held.size() : r.skipped.size(), shown = std::min<size_t>(n, kMaxListed);
  QList<QTreeWidgetItem*> items;
  items.reserve(qsizetype(shown) + 1);
  for (size_t i = 0; i < shown; ++i) {
    const uint32_t t = held ? r.held[i].tensor : r.skipped[i].tensor;
    auto* it = new QTreeWidgetItem({QString::fromStdString(ckpt_->tensors[t].name),
                                    held ? bytesText(r.held[i].bytes) : QString::fromStdString(r.skipped[i].reason)});
    it->setData(0, Qt::UserRole, t);
    items << it;
  }
  if (n > shown) items << new QTreeWidgetItem({tr("... and %1 more (the Tensors tab lists them all)").arg(n - shown)});
  list->addChildren(items);
}

QPoint RankMapView::barCentre(int rank) const {
  if (!result_ || rank < 0 || rank >= int(result_->ranks.size())) return {};
  // A click picks the rank by x alone, so any height inside the plot will do.
  return QPoint(int(plot_->xAxis->coordToPixel(rank)), plot_->axisRect()->center().y());
}

}  // namespace ws::ui
