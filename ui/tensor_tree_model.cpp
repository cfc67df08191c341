#include "ui/tensor_tree_model.h"

#include <QColor>
#include <QFileInfo>

#include "core/util/format_bytes.h"

namespace ws::ui {

TensorTreeModel::TensorTreeModel(QObject* parent) : QAbstractItemModel(parent) {}
TensorTreeModel::~TensorTreeModel() = default;

void TensorTreeModel::setCheckpoint(std::shared_ptr<const Checkpoint> ckpt) {
  beginResetModel();
  ckpt_ = std::move(ckpt);
  tree_ = ckpt_ ? tensorTree(*ckpt_) : TensorTree{};
  // Group labels once (the recursive filter reads every one at each keystroke); tensors' labels
  // are made when asked for.
  groupLabels_.assign(tree_.nodes.size(), QString());
  for (size_t i = 0; i < tree_.nodes.size(); ++i)
    if (tree_.nodes[i].kind != TreeNode::Kind::Tensor) groupLabels_[i] = QString::fromStdString(nodeLabel(*ckpt_, tree_.nodes[i]));
  endResetModel();
}

QModelIndex TensorTreeModel::index(int row, int column, const QModelIndex& parent) const {
  if (row < 0 || column < 0 || column >= ColumnCount || tree_.nodes.empty()) return {};
  const TreeNode& p = tree_.nodes[nodeOf(parent)];
  if (row >= int(p.children.size())) return {};
  return createIndex(row, column, quintptr(p.children[size_t(row)]));
}

uint32_t TensorTreeModel::nodeOf(const QModelIndex& index) const { return index.isValid() ? uint32_t(index.internalId()) : 0; }

QModelIndex TensorTreeModel::parent(const QModelIndex& child) const {
  if (!child.isValid()) return {};
  const uint32_t p = tree_.nodes[nodeOf(child)].parent;
  if (p == 0) return {};
  return createIndex(int(tree_.nodes[p].row), 0, quintptr(p));
}

int TensorTreeModel::rowCount(const QModelIndex& parent) const {
  if ((parent.isValid() && parent.column() != 0) || tree_.nodes.empty()) return 0;
  return int(tree_.nodes[nodeOf(parent)].children.size());
}

int TensorTreeModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant TensorTreeModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !ckpt_) return {};
  const uint32_t id = nodeOf(index);
  const TreeNode* n = &tree_.nodes[id];
  const TensorRecord* t = n->tensor >= 0 ? &ckpt_->tensors[size_t(n->tensor)] : nullptr;
  if (role == TensorIndexRole) return t ? QVariant(n->tensor) : QVariant();
  if (role == BytesRole) return QVariant::fromValue<qulonglong>(n->bytes);
  if (role == FullNameRole) return t ? QString::fromStdString(t->name) : groupLabels_[id];
  if (role == Qt::TextAlignmentRole && index.column() == Bytes) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && t)
    return QString::fromStdString(t->name + "\noffset " + std::to_string(t->offset) + " in " + ckpt_->files[t->file].path +
                                  (t->cut ? "\ncut: its data runs past the end of the file" : ""));
  if (role == Qt::ForegroundRole && t && t->cut) return QColor(Qt::red);  // cut: the bytes are not there
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Name: return t ? QString::fromStdString(nodeLabel(*ckpt_, *n)) : groupLabels_[id];
    case DType: return t ? QString::fromLatin1(t->dtype->name.data(), qsizetype(t->dtype->name.size())) : QVariant();
    case Shape: return t ? QString::fromStdString(formatShape(t->shape)) : QVariant();
    case Bytes: return QString::fromStdString(formatBytes(n->bytes));
    case Scheme: return t ? QString::fromStdString(ckpt_->logical[t->logical].schemeName) : QVariant();
    case File: return t ? QFileInfo(QString::fromStdString(ckpt_->files[t->file].path)).fileName() : QVariant();
  }
  return {};
}

QVariant TensorTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Name", "DType", "Shape", "Bytes", "Scheme", "File"};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

QModelIndex TensorTreeModel::indexOfTensor(uint32_t tensorIndex) const {
  if (tensorIndex >= tree_.nodeOfTensor.size() || !tree_.nodeOfTensor[tensorIndex]) return {};
  const uint32_t n = tree_.nodeOfTensor[tensorIndex];
  return createIndex(int(tree_.nodes[n].row), 0, quintptr(n));
}

}  // namespace ws::ui
