// The tensor tree as an item model: the core's grouping (core/model/tensor_tree - layers, modules,
// experts, tensors, bytes per node), built once from an immutable Checkpoint; swapping in a new
// checkpoint resets the whole model (the Hotspot pattern).
#pragma once

#include <QAbstractItemModel>
#include <memory>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/model/tensor_tree.h"

namespace ws::ui {

class TensorTreeModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column { Name, DType, Shape, Bytes, Scheme, File, ColumnCount };
  enum Roles { TensorIndexRole = Qt::UserRole + 1, BytesRole, FullNameRole };

  explicit TensorTreeModel(QObject* parent = nullptr);
  ~TensorTreeModel() override;

  void setCheckpoint(std::shared_ptr<const Checkpoint> ckpt);
  const Checkpoint* checkpoint() const { return ckpt_.get(); }

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  // The index of the row showing tensor `tensorIndex` (column 0), or invalid.
  QModelIndex indexOfTensor(uint32_t tensorIndex) const;

 private:
  uint32_t nodeOf(const QModelIndex& index) const;  // the tree node (0, the root, for an invalid index)

  std::shared_ptr<const Checkpoint> ckpt_;
  TensorTree tree_;               // core/model/tensor_tree: the same grouping inspect prints
  std::vector<QString> groupLabels_;  // per node; empty for tensors
};

}  // namespace ws::ui
