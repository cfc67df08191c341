#include "ui/metadata_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QSyntaxHighlighter>
#include <QTreeView>
#include <QVBoxLayout>

#include "core/formats/tokenizer_info.h"
#include "ui/metadata_model.h"

namespace ws::ui {

namespace {

// Jinja's three tag kinds, as chat templates use them: {{ expressions }}, {% statements %}, {# comments #}.
class JinjaHighlighter : public QSyntaxHighlighter {
 public:
  using QSyntaxHighlighter::QSyntaxHighlighter;

 protected:
  void highlightBlock(const QString& text) override {
    static const QRegularExpression expr(QStringLiteral("\\{\\{.*?\\}\\}")), stmt(QStringLiteral("\\{%.*?%\\}")), comment(QStringLiteral("\\{#.*?#\\}"));
    const std::pair<const QRegularExpression*, QColor> kinds[] = {{&expr, QColor(0, 102, 204)}, {&stmt, QColor(163, 21, 21)}, {&comment, QColor(0, 128, 0)}};
    for (auto [re, colour] : kinds) {
      QTextCharFormat f;
      f.setForeground(colour);
      if (re == &stmt) f.setFontWeight(QFont::Bold);
      for (auto it = re->globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        setFormat(int(m.capturedStart()), int(m.capturedLength()), f);
      }
    }
  }
};

// Keys filter the entries; an array's elements always show under a shown entry.
class TopLevelFilter : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;

 protected:
  bool filterAcceptsRow(int row, const QModelIndex& parent) const override {
    return parent.isValid() || QSortFilterProxyModel::filterAcceptsRow(row, parent);
  }
};

QString tokenizerLine(const TokenizerInfo& t) {
  if (!t.present) return QObject::tr("No tokenizer in this checkpoint.");
  QString s = QObject::tr("<b>Tokenizer</b> %1, %2 tokens").arg(QString::fromStdString(t.model.empty() ? "?" : t.model)).arg(t.vocabSize);
  if (t.merges) s += QObject::tr(", %1 merges").arg(t.merges);
  for (const auto& sp : t.special)
    s += QStringLiteral(", %1 %2 <code>%3</code>")
             .arg(QString::fromStdString(sp.role), sp.id < 0 ? QStringLiteral("?") : QString::number(sp.id), QString::fromStdString(sp.text).toHtmlEscaped());
  if (!t.chatTemplates.empty()) {
    QStringList names;
    for (const auto& n : t.chatTemplates) names << QString::fromStdString(n);
    s += QObject::tr(", chat template(s): %1").arg(names.join(QStringLiteral(", ")));
  }
  s += QObject::tr(" (from %1)").arg(QString::fromStdString(t.source));
  for (const auto& p : t.problems) s += QStringLiteral("<br>") + QObject::tr("cannot read: %1").arg(QString::fromStdString(p).toHtmlEscaped());
  return s;
}

}  // namespace

MetadataView::MetadataView(QWidget* parent)
    : QWidget(parent),
      model_(new MetadataModel(this)),
      proxy_(new TopLevelFilter(this)),
      tree_(new QTreeView),
      search_(new QLineEdit),
      detail_(new QPlainTextEdit),
      tokenizer_(new QLabel) {
  proxy_->setSourceModel(model_);
  proxy_->setFilterKeyColumn(MetadataModel::Key);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  tree_->setModel(proxy_);
  tree_->setUniformRowHeights(true);  // a 256k-element array scrolls without measuring every row
  tree_->setAlternatingRowColors(true);
  tree_->header()->setSectionResizeMode(MetadataModel::Value, QHeaderView::Stretch);
  tree_->setColumnWidth(MetadataModel::Key, 340);
  tree_->setColumnWidth(MetadataModel::Type, 130);
  search_->setPlaceholderText(tr("Search keys (e.g. context_length, chat_template, rope)"));
  search_->setClearButtonEnabled(true);
  detail_->setReadOnly(true);
  detail_->setPlaceholderText(tr("The selected value in full"));
  detail_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  new JinjaHighlighter(detail_->document());
  tokenizer_->setWordWrap(true);
  tokenizer_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(tree_);
  split->addWidget(detail_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(tokenizer_);
  layout->addWidget(search_);
  layout->addWidget(split, 1);

  connect(search_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
  connect(tree_->selectionModel(), &QItemSelectionModel::currentChanged, this, &MetadataView::showSelected);
}

MetadataView::~MetadataView() = default;

void MetadataView::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  detail_->clear();
  tokenizer_->setText(c ? tokenizerLine(tokenizerInfo(*c)) : QString());
  model_->setCheckpoint(std::move(c));
}

void MetadataView::showSelected() {
  const QModelIndex i = tree_->currentIndex();
  if (!i.isValid()) return detail_->clear();
  detail_->setPlainText(proxy_->index(i.row(), MetadataModel::Value, i.parent()).data(MetadataModel::kFullValueRole).toString());
}

}  // namespace ws::ui
