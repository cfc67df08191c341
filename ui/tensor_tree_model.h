// The tensor tree: layers, then modules (attention, MLP, router, experts ...), then experts, then
// tensors, with bytes aggregated per node. Built once from an immutable Checkpoint; swapping in a
// new checkpoint resets the whole model (the Hotspot pattern).
#pragma once

#include <QAbstractItemModel>
#include <memory>
#include <vector>

#include "core/model/checkpoint.h"

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
  struct Node {
    QString label;
    int32_t tensor = -1;  // index into checkpoint tensors for leaves
    uint64_t bytes = 0;
    int row = 0;
    Node* parent = nullptr;
    std::vector<std::unique_ptr<Node>> children;
  };
  Node* nodeOf(const QModelIndex& index) const;
  void build();

  std::shared_ptr<const Checkpoint> ckpt_;
  std::unique_ptr<Node> root_;
  std::vector<Node*> leafOfTensor_;
};

}  // namespace ws::ui
