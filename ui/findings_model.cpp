#include "ui/findings_model.h"

#include <QColor>
#include <QFileInfo>

namespace ws::ui {

FindingsModel::FindingsModel(QObject* parent) : QAbstractTableModel(parent) {}

void FindingsModel::setReport(std::shared_ptr<const val::ValidationReport> report) {
  beginResetModel();
  report_ = std::move(report);
  endResetModel();
}

const val::Finding* FindingsModel::finding(const QModelIndex& index) const {
  if (!report_ || !index.isValid() || index.model() != this || size_t(index.row()) >= report_->findings.size()) return nullptr;
  return &report_->findings[size_t(index.row())];
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !report_ ? 0 : int(report_->findings.size());
}

int FindingsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
  const val::Finding* f = finding(index);
  if (!f) return {};
  if (role == SeverityRole) return int(f->severity);
  if (role == Qt::ToolTipRole) return QString::fromStdString(f->message + (f->hint.empty() ? "" : "\nHint: " + f->hint));
  if (role == Qt::ForegroundRole && index.column() == Severity)
    return f->severity == val::Severity::Error ? QColor(200, 0, 0) : f->severity == val::Severity::Warning ? QColor(180, 110, 0) : QVariant();
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Severity: return QString::fromLatin1(val::severityName(f->severity));
    case Code: return QString::fromStdString(f->code);
    case Rule: return QString::fromStdString(f->rule);
    case Tensor: return QString::fromStdString(f->tensor);
    case Where: {
      if (f->file.empty()) return QString();
      QString w = QFileInfo(QString::fromStdString(f->file)).fileName();
      return f->offset ? w + QStringLiteral(" @ %1").arg(*f->offset) : w;
    }
    case Message: return QString::fromStdString(f->message);
  }
  return {};
}

QVariant FindingsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"severity", "code", "rule", "tensor", "file @ offset", "message"};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace ws::ui
