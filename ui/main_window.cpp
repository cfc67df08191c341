#include "ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QInputDialog>
#include <QLineEdit>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QRegularExpression>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTextBrowser>
#include <QTabWidget>
#include <QTreeView>
#include <QVBoxLayout>

#include "core/formats/open_checkpoint.h"
#include "core/util/format_bytes.h"
#include "core/validate/hub_rules.h"
#include "ui/diff_window.h"
#include "ui/expert_map_view.h"
#include "ui/findings_view.h"
#include "ui/load_view.h"
#include "ui/open_progress.h"
#include "ui/preview_view.h"
#include "ui/rank_map_view.h"
#include "ui/remembered.h"
#include "ui/scale_histogram_view.h"
#include "ui/scale_pass.h"
#include "ui/tensor_tree_model.h"
#include "ui/view_table.h"

namespace ws::ui {

namespace {

// Sorts the Bytes column by value, not by its text.
class TreeSortProxy : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;

 protected:
  bool lessThan(const QModelIndex& a, const QModelIndex& b) const override {
    if (a.column() == TensorTreeModel::Bytes)
      return a.data(TensorTreeModel::BytesRole).toULongLong() < b.data(TensorTreeModel::BytesRole).toULongLong();
    return QSortFilterProxyModel::lessThan(a, b);
  }
};

QString noCheckpointText() { return QObject::tr("Open a checkpoint: File > Open, or drop a file or folder here."); }

QString summaryText(const Checkpoint& c) {
  const auto& m = c.model;
  QString s = QString::fromStdString(m.architecture.empty() ? "unknown model" : m.architecture);
  s += QObject::tr("  |  %1 layers (%2 MoE)").arg(m.numLayers).arg(m.moeLayers.size());
  if (m.numExperts > 0) s += QObject::tr("  |  %1 experts + %2 shared, top-%3").arg(m.numExperts).arg(m.numSharedExperts).arg(m.expertsPerToken);
  s += QObject::tr("  |  %1 tensors  |  %2  |  %3 parameters")
           .arg(QString::fromStdString(formatCount(c.tensors.size())))
           .arg(QString::fromStdString(formatBytes(c.totalBytes())))
           .arg(QString::fromStdString(formatCount(c.totalParameters())));
  if (!c.issues.empty())
    s += QObject::tr("\n%n problem(s) opening it, shown as far as it can be read (Validate lists them): %1", nullptr, int(c.issues.size()))
             .arg(QString::fromStdString(c.issues.front().describe()));
  return s;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      jobs_(this),
      openProgress_(new OpenProgress),
      model_(new TensorTreeModel(this)),
      proxy_(new TreeSortProxy(this)),
      tree_(new QTreeView),
      filter_(new QLineEdit),
      filterMode_(new QComboBox),
      details_(new QTextBrowser),
      summary_(new QLabel),
      tabs_(new QTabWidget),
      scales_(new ScalePass(this)) {
  setWindowTitle(tr("Weightscope"));
  setAcceptDrops(true);
  proxy_->setSourceModel(model_);
  proxy_->setRecursiveFilteringEnabled(true);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  proxy_->setFilterKeyColumn(TensorTreeModel::Name);
  proxy_->setFilterRole(TensorTreeModel::FullNameRole);

  filter_->setPlaceholderText(tr("Filter tensors (substring)   Ctrl+F"));
  filter_->setClearButtonEnabled(true);
  filterMode_->addItem(tr("substring"));
  filterMode_->addItem(tr("glob"));
  filterMode_->addItem(tr("regex"));
  filterMode_->setToolTip(tr("How the filter matches tensor names: a substring, a glob (* ? [abc], the whole name) or a regular expression"));
  remember(filterMode_, "tree/filterMode");
  connect(filter_, &QLineEdit::textChanged, this, &MainWindow::applyFilter);
  connect(filterMode_, &QComboBox::currentIndexChanged, this, &MainWindow::applyFilter);

  // Every view of the table, in its order: its page in a tab, handed each checkpoint, leading to
  // the tensors it asks for.
  for (const ViewSpec& v : viewTable()) {
    QWidget* page = v.page(*this);
    tabs_->addTab(page, v.tabTitle);
    if (auto* cv = dynamic_cast<CheckpointView*>(page)) views_.push_back(cv);
    if (page->metaObject()->indexOfSignal("tensorRequested(uint32_t)") >= 0)
      connect(page, SIGNAL(tensorRequested(uint32_t)), this, SLOT(selectTensor(uint32_t)));
    experts_ = experts_ ? experts_ : qobject_cast<ExpertMapView*>(page);
    ranks_ = ranks_ ? ranks_ : qobject_cast<RankMapView*>(page);
    histograms_ = histograms_ ? histograms_ : qobject_cast<ScaleHistogramView*>(page);
    preview_ = preview_ ? preview_ : qobject_cast<PreviewView*>(page);
    findings_ = findings_ ? findings_ : qobject_cast<FindingsView*>(page);
    load_ = load_ ? load_ : qobject_cast<LoadView*>(page);
  }
  setCentralWidget(tabs_);
  connect(findings_, &FindingsView::finished, this, [this] {
    if (const auto* r = findings_->report()) {
      histograms_->setFindings(r->findings);
      if (r->checkpoint.get() == checkpoint()) experts_->setHealth(r->expertHealth);  // not a report of the checkpoint before
    }
    showDetails(tree_->currentIndex());  // the findings on the selected tensor
  });

  auto* dock = new QDockWidget(tr("Details"), this);
  dock->setObjectName("details");
  dock->setWidget(details_);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  statusBar()->addWidget(summary_, 1);
  statusBar()->addPermanentWidget(openProgress_);
  connect(openProgress_, &OpenProgress::cancelRequested, this, &MainWindow::cancelOpen);
  summary_->setText(noCheckpointText());

  buildMenus();

  QSettings settings;
  if (!restoreGeometry(settings.value("window/geometry").toByteArray())) resize(1440, 860);
  restoreState(settings.value("window/state").toByteArray());
}

QWidget* MainWindow::makeTreePage() {
  tree_->setModel(proxy_);
  tree_->setSortingEnabled(true);
  tree_->sortByColumn(-1, Qt::AscendingOrder);  // keep the natural order until the user sorts
  tree_->setUniformRowHeights(true);
  tree_->setAlternatingRowColors(true);
  tree_->header()->setStretchLastSection(true);
  connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this, [this](const QModelIndex& cur) { showDetails(cur); });

  auto* treePage = new QWidget;
  auto* layout = new QVBoxLayout(treePage);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* filterRow = new QHBoxLayout;
  filterRow->addWidget(filter_, 1);
  filterRow->addWidget(filterMode_);
  layout->addLayout(filterRow);
  layout->addWidget(tree_);
  return treePage;
}

MainWindow::~MainWindow() {
  if (openState_) openState_->cancel = true;  // a remote open stops fetching; nothing waits for it
}

const Checkpoint* MainWindow::checkpoint() const { return model_->checkpoint(); }

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* openFile = file->addAction(tr("&Open File..."), this, [this] {
    QString p = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), {}, tr("Checkpoints (*.safetensors *.gguf *.json);;All files (*)"));
    if (!p.isEmpty()) openPath(p);
  });
  openFile->setShortcut(QKeySequence::Open);
  QAction* openDir = file->addAction(tr("Open &Folder..."), this, [this] {
    QString p = QFileDialog::getExistingDirectory(this, tr("Open checkpoint folder"));
    if (!p.isEmpty()) openPath(p);
  });
  openDir->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
  // A checkpoint where it lies: its headers are fetched, its weights only as views need them.
  QAction* openUrl = file->addAction(tr("Open &URL..."), this, [this] {
    bool ok = false;
    const QString url = QInputDialog::getText(this, tr("Open remote checkpoint"),
                                              tr("hf://ORG/REPO[@REVISION][/FOLDER], or an http(s) URL of a .safetensors, .gguf,\n"
                                                 "model.safetensors.index.json or folder (ending in /). Only headers are fetched."),
                                              QLineEdit::Normal, {}, &ok)
                              .trimmed();
    if (ok && !url.isEmpty()) openPath(url);
  });
  openUrl->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_U));
  cancelOpenAction_ = file->addAction(tr("&Stop Opening"), this, &MainWindow::cancelOpen);
  cancelOpenAction_->setShortcut(QKeySequence(Qt::Key_Escape));
  cancelOpenAction_->setEnabled(false);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  refreshRecentMenu();
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::closeAllWindows);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* find = edit->addAction(tr("&Find"), this, [this] {
    filter_->setFocus();
    filter_->selectAll();
  });
  find->setShortcut(QKeySequence::Find);
  QAction* copy = edit->addAction(tr("&Copy Tensor Name"), this, &MainWindow::copySelectedName);
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  QAction* preview = view->addAction(tr("&Preview Tensor"), this, &MainWindow::previewSelected);
  preview->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
  QAction* histogram = view->addAction(tr("Scale &Histogram"), this, &MainWindow::histogramOfSelected);
  histogram->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_H));
  view->addSeparator();
  const auto& views = viewTable();
  for (int i = 0; i < int(views.size()); ++i) {
    QAction* a = view->addAction(views[size_t(i)].menuTitle, this, [this, i] { showTab(i); });
    if (i < 9) a->setShortcut(QKeySequence(Qt::ALT | Qt::Key(Qt::Key_1 + i)));
  }
  for (QAction* a : {preview, histogram, copy}) tree_->addAction(a);
  tree_->setContextMenuPolicy(Qt::ActionsContextMenu);
  connect(tree_, &QTreeView::doubleClicked, this, &MainWindow::previewSelected);

  QMenu* tools = menuBar()->addMenu(tr("&Tools"));
  QAction* compare = tools->addAction(tr("&Compare With..."), this, [this] {
    if (!checkpoint()) return;
    // A sharded checkpoint is chosen by its index.json, a GGUF or single safetensors by the file.
    QString other = QFileDialog::getOpenFileName(this, tr("Compare with (B; the open checkpoint is A, the reference)"), {},
                                                 tr("Checkpoints (*.safetensors *.gguf *.json);;All files (*)"));
    if (other.isEmpty()) return;
    auto* w = new DiffWindow;
    w->setAttribute(Qt::WA_DeleteOnClose);
    w->show();
    w->start(QString::fromStdString(checkpoint()->root), other);
  });
  compare->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
  QAction* validate = tools->addAction(tr("&Validate"), this, [this] {
    showTab(FindingsTab);
    findings_->run();
  });
  validate->setShortcut(QKeySequence(Qt::Key_F5));
  tools->addAction(tr("Verify Against &Hub..."), this, [this] {
    if (!checkpoint()) return;
    // A Hugging Face cache snapshot names its repository and commit: offered as the default.
    bool ok = false;
    const QString location = QInputDialog::getText(this, tr("Verify Against Hub"), tr("Every file against the Hub's record of (hf://ORG/REPO[@REVISION]):"),
                                                   QLineEdit::Normal, QString::fromStdString(val::hubLocationOf(checkpoint()->root)), &ok);
    if (!ok || location.trimmed().isEmpty()) return;
    showTab(FindingsTab);
    findings_->runAgainstHub(location);
  });
  tools->addAction(tr("Full &Load..."), this, [this] { showTab(LoadTab); })->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
}

void MainWindow::applyFilter() {
  const QString text = filter_->text();
  QString problem;
  switch (filterMode_->currentIndex()) {
    case 1:  // a glob matches the whole name, as in a shell (Qt anchors the pattern)
      proxy_->setFilterRegularExpression(
          QRegularExpression(text.isEmpty() ? QString() : QRegularExpression::wildcardToRegularExpression(text), QRegularExpression::CaseInsensitiveOption));
      break;
    case 2: {
      QRegularExpression re(text, QRegularExpression::CaseInsensitiveOption);
      if (!re.isValid()) {
        problem = re.errorString();
        break;  // keep the last valid filter while the expression is being typed
      }
      proxy_->setFilterRegularExpression(re);
      break;
    }
    default: proxy_->setFilterFixedString(text);
  }
  filter_->setStyleSheet(problem.isEmpty() ? QString() : QStringLiteral("QLineEdit { background: #fdd; }"));
  filter_->setToolTip(problem.isEmpty() ? QString() : tr("Not a regular expression: %1").arg(problem));
}

void MainWindow::showTab(int index) { tabs_->setCurrentIndex(index); }

int64_t MainWindow::selectedTensor() const {
  const QModelIndex cur = tree_->currentIndex();
  const QVariant t = proxy_->mapToSource(cur.siblingAtColumn(0)).data(TensorTreeModel::TensorIndexRole);
  return t.isValid() ? t.toLongLong() : -1;
}

void MainWindow::previewSelected() {
  if (int64_t t = selectedTensor(); t >= 0) {
    preview_->showTensor(uint32_t(t));
    showTab(PreviewTab);
  }
}

void MainWindow::histogramOfSelected() {
  if (int64_t t = selectedTensor(); t >= 0) {
    histograms_->showTensor(uint32_t(t));
    showTab(ScalesTab);
  }
}

void MainWindow::openPath(const QString& path) {
  // The newest path wins: an open still running for another one is dropped.
  pendingPath_ = path;
  summary_->setText(tr("Opening %1 ...").arg(path));
  std::string p = path.toStdString();
  // The open's own state, shared with what the remote mirror keeps of the options (its progress
  // and cancel outlive this job: they hold the state, never refer to it).
  if (openState_) openState_->cancel = true;
  auto state = std::make_shared<JobState>();
  openState_ = state;
  RemoteOptions remote = remoteOptions();
  remote.cancel = std::shared_ptr<const std::atomic<bool>>(state, &state->cancel);
  remote.progress = [state](const char* stage, uint64_t done, uint64_t total) {
    state->phase = stage;
    state->total = total;
    state->done = done;
  };
  // Tolerant: a cut file or a missing part still shows what it holds, its problems in the summary.
  jobs_.start(0, [p, remote](JobState&) { return openCheckpointPartial(p, remote); }, [this](OpenResult r) { onOpened(std::move(r)); });
  openProgress_->start(state);
  cancelOpenAction_->setEnabled(true);
}

void MainWindow::cancelOpen() {
  if (!openState_) return;
  openState_->cancel = true;  // a remote open aborts its request in flight and makes no other
  openState_.reset();
  jobs_.drop(0);  // its result, if it still comes, is dropped
  openProgress_->stop();
  cancelOpenAction_->setEnabled(false);
  summary_->setText(ckpt_ ? summaryText(*ckpt_) : noCheckpointText());
  statusBar()->showMessage(tr("Stopped opening %1").arg(pendingPath_), 5000);
}

void MainWindow::selectTensor(uint32_t tensorIndex) {
  const QModelIndex source = model_->indexOfTensor(tensorIndex);
  if (!source.isValid()) return;
  filter_->clear();  // a filtered-out tensor could not be shown
  const QModelIndex proxied = proxy_->mapFromSource(source);
  showTab(TensorsTab);
  tree_->scrollTo(proxied);
  tree_->setCurrentIndex(proxied);
}

void MainWindow::onOpened(OpenResult r) {
  openState_.reset();
  openProgress_->stop();
  cancelOpenAction_->setEnabled(false);
  if (!r) {
    QString msg = QString::fromStdString(r.error().describe());
    summary_->setText(tr("Could not open: %1").arg(msg));
    emit openFailed(msg);
    if (!qEnvironmentVariableIsSet("WEIGHTSCOPE_NO_DIALOGS")) QMessageBox::warning(this, tr("Could not open checkpoint"), msg);
    return;
  }
  ckpt_ = r.value();
  model_->setCheckpoint(ckpt_);
  scales_->setCheckpoint(ckpt_);  // before the views that share it
  for (CheckpointView* v : views_) v->setCheckpoint(ckpt_);
  tree_->expandToDepth(0);
  // Size columns for their widest likely text rather than measuring 200k rows.
  const QFontMetrics fm = tree_->fontMetrics();
  const int pad = 24;
  tree_->setColumnWidth(TensorTreeModel::Name, fm.horizontalAdvance("self_attn.kv_a_proj_with_mqa.weight_scale_inv") + 4 * tree_->indentation());
  tree_->setColumnWidth(TensorTreeModel::DType, fm.horizontalAdvance("F8_E4M3FNUZ") + pad);
  tree_->setColumnWidth(TensorTreeModel::Shape, fm.horizontalAdvance("[256, 7168, 2048]") + pad);
  tree_->setColumnWidth(TensorTreeModel::Bytes, fm.horizontalAdvance("1023.99 MiB") + pad);
  tree_->setColumnWidth(TensorTreeModel::Scheme, fm.horizontalAdvance("mlx-affine4") + pad);
  summary_->setText(summaryText(*r.value()));
  if (!r.value()->tensors.empty()) {  // show the details of the first tensor straight away
    QModelIndex first = proxy_->mapFromSource(model_->indexOfTensor(0));
    tree_->setCurrentIndex(first);
  }
  setWindowTitle(tr("Weightscope - %1").arg(QFileInfo(pendingPath_).fileName()));
  rememberRecent(pendingPath_);
  emit checkpointOpened();
}

void MainWindow::showDetails(const QModelIndex& proxyIndex) {
  const Checkpoint* c = checkpoint();
  QModelIndex src = proxy_->mapToSource(proxyIndex.siblingAtColumn(0));
  QVariant ti = src.data(TensorTreeModel::TensorIndexRole);
  if (!c || !ti.isValid()) {
    details_->setPlainText(src.isValid() ? src.data().toString() + "\n" + src.siblingAtColumn(TensorTreeModel::Bytes).data().toString() : QString());
    return;
  }
  const TensorRecord& t = c->tensors[size_t(ti.toInt())];
  const LogicalTensor& l = c->logical[t.logical];
  QString html = QStringLiteral("<h3>%1</h3><table>").arg(QString::fromStdString(t.name).toHtmlEscaped());
  auto row = [&html](const QString& k, const QString& v) { html += "<tr><td><b>" + k + "</b></td><td>" + v.toHtmlEscaped() + "</td></tr>"; };
  row(tr("dtype"), QString::fromLatin1(t.dtype->name.data(), qsizetype(t.dtype->name.size())));
  row(tr("shape"), QString::fromStdString(formatShape(t.shape)));
  row(tr("bytes"), QString::fromStdString(formatBytes(t.bytes) + " (" + formatCount(t.bytes) + ")"));
  const RemoteFile* remote = c->remote ? c->remote->fileFor(c->files[t.file].path) : nullptr;
  row(tr("file"), QString::fromStdString(remote ? remote->url : c->files[t.file].path));  // a remote file: where it lies
  row(tr("offset"), QString::number(t.offset));
  if (t.cut) row(tr("cut"), tr("its data runs past the end of the %1-byte file: nothing can be read").arg(c->files[t.file].size));
  row(tr("role"), QString::fromLatin1(roleName(t.role).data()));
  if (t.layer >= 0) row(tr("layer"), QString::number(t.layer));
  if (t.expert >= 0) row(tr("expert"), QString::number(t.expert));
  if (t.projection != Projection::None) row(tr("projection"), QString::fromLatin1(projectionName(t.projection).data()));
  row(tr("component"), QString::fromLatin1(componentName(t.component).data()));
  if (t.layout != Layout::None) row(tr("layout"), QString::fromLatin1(layoutName(t.layout).data()) + (t.interleaved ? tr(", gate/up interleaved") : QString()));
  row(tr("scheme"), QString::fromStdString(l.schemeName));
  row(tr("logical tensor"), QString::fromStdString(l.name));
  row(tr("parameters"), QString::fromStdString(formatCount(l.parameters)));
  html += "</table><p><b>" + tr("Companions") + "</b></p><ul>";
  for (uint32_t m : l.members)
    html += "<li>" + QString::fromStdString(c->tensors[m].name).toHtmlEscaped() + " <i>(" +
            QString::fromLatin1(componentName(c->tensors[m].component).data()) + ")</i></li>";
  html += "</ul>";
  if (const val::ValidationReport* rep = findings_->report()) {
    QString found;
    for (const auto& f : rep->findings) {
      bool mine = false;
      for (uint32_t m : l.members) mine |= f.tensor == c->tensors[m].name;
      if (mine)
        found += "<li><b>" + QString::fromStdString(f.code) + "</b> " + QString::fromLatin1(val::severityName(f.severity)) + ": " +
                 QString::fromStdString(f.message).toHtmlEscaped() + "</li>";
    }
    html += "<p><b>" + tr("Findings") + "</b></p>" + (found.isEmpty() ? tr("<p>none on this tensor or its companions</p>") : "<ul>" + found + "</ul>");
  }
  details_->setHtml(html);
}

void MainWindow::copySelectedName() {
  QModelIndex cur = tree_->currentIndex();
  if (!cur.isValid()) return;
  QGuiApplication::clipboard()->setText(proxy_->mapToSource(cur.siblingAtColumn(0)).data(TensorTreeModel::FullNameRole).toString());
}

void MainWindow::rememberRecent(const QString& path) {
  QSettings s;
  QStringList recent = s.value("recent").toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 10) recent.removeLast();
  s.setValue("recent", recent);
  refreshRecentMenu();
}

void MainWindow::refreshRecentMenu() {
  recentMenu_->clear();
  const QStringList recent = QSettings().value("recent").toStringList();
  for (const QString& p : recent) recentMenu_->addAction(p, this, [this, p] { openPath(p); });
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  const auto urls = e->mimeData()->urls();
  if (!urls.isEmpty() && urls.first().isLocalFile()) openPath(urls.first().toLocalFile());
}

void MainWindow::closeEvent(QCloseEvent* e) {
  QSettings s;
  s.setValue("window/geometry", saveGeometry());
  s.setValue("window/state", saveState());
  QMainWindow::closeEvent(e);
}

}  // namespace ws::ui
