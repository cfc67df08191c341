#include "ui/engine_log_view.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace ws::ui {

EngineLogView::EngineLogView(QWidget* parent) : QWidget(parent), open_(new QPushButton(tr("Compare Engine &Log..."))), status_(new QLabel), table_(new QTreeWidget) {
  open_->setToolTip(tr("A vLLM, SGLang or llama.cpp start-up log (or drop one on this tab): each figure it printed against the prediction at its settings"));
  status_->setWordWrap(true);
  status_->setText(tr("Drop an engine's start-up log here to compare it with the prediction."));
  table_->setHeaderLabels({tr("figure"), tr("worker"), tr("predicted"), tr("logged"), tr("difference"), tr("verdict")});
  table_->setRootIsDecorated(false);
  table_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setVisible(false);
  auto* top = new QHBoxLayout;
  top->addWidget(open_);
  top->addWidget(status_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(table_, 1);
  connect(open_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Engine start-up log"), {}, tr("Logs (*.log *.txt);;All files (*)"));
    if (!path.isEmpty()) load(path);
  });
}

void EngineLogView::setContext(std::shared_ptr<const Checkpoint> c, const plan::LogCheckRequest& request) {
  ckpt_ = std::move(c);
  request_ = request;
  if (!path_.isEmpty()) refresh();
}

void EngineLogView::load(const QString& path) {
  path_ = path;
  refresh();
}

void EngineLogView::refresh() {
  table_->clear();
  table_->setVisible(false);
  if (!ckpt_) return;
  auto log = plan::readEngineLog(path_.toStdString());
  if (!log) {
    status_->setText("<span style='color:#c00'>" + QString::fromStdString(log.error().describe()).toHtmlEscaped() + "</span>");
    return;
  }
  const plan::EngineLog& L = log.value();
  plan::LogCheckRequest r = request_;
  r.gguf = ckpt_->format == "gguf";
  auto rows = plan::checkEngineLog(ckpt_->model, L, plan::logCheckInputs(ckpt_->model, L, r));
  if (!rows) {
    status_->setText("<span style='color:#c00'>" + QString::fromStdString(rows.error().describe()).toHtmlEscaped() + "</span>");
    return;
  }
  int differs = 0;
  for (const auto& row : rows.value()) {
    auto* item = new QTreeWidgetItem(table_, {QString::fromStdString(row.quantity), QString::fromStdString(row.worker), QString::fromStdString(row.predicted),
                                              QString::fromStdString(row.logged), QString::fromStdString(row.difference), plan::logVerdictName(row.verdict)});
    for (int col = 0; col < 6; ++col) item->setToolTip(col, QString::fromStdString(row.explanation));
    if (row.verdict == plan::LogVerdict::Differs) {
      ++differs;
      for (int col = 0; col < 6; ++col) item->setForeground(col, QColor(200, 0, 0));
    }
  }
  table_->setVisible(true);
  status_->setText(tr("%1 log %2: %3 figures, %4")
                       .arg(QString::fromStdString(L.engine), QFileInfo(path_).fileName())
                       .arg(rows.value().size())
                       .arg(differs ? tr("<b style='color:#c00'>%1 KV figure(s) differ</b>").arg(differs) : tr("<b style='color:#080'>no KV figure differs</b>")));
}

}  // namespace ws::ui
