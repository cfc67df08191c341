// The findings of a validation as a flat table: severity, code, rule, tensor, where, message.
// Each row also carries the hint as its tooltip; SeverityRole gives the severity as a number so a
// proxy can filter on it.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "core/validate/validator.h"

namespace ws::ui {

class FindingsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Severity, Code, Rule, Tensor, Where, Message, ColumnCount };
  enum Roles { SeverityRole = Qt::UserRole + 1 };

  explicit FindingsModel(QObject* parent = nullptr);
  void setReport(std::shared_ptr<const val::ValidationReport> report);
  const val::ValidationReport* report() const { return report_.get(); }
  const val::Finding* finding(const QModelIndex& index) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const val::ValidationReport> report_;
};

}  // namespace ws::ui
