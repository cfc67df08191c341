#include "ui/tensor_tree_model.h"

#include <QFileInfo>
#include <map>

#include "core/util/format_bytes.h"

namespace ws::ui {

namespace {

QString moduleLabel(const TensorRecord& t) {
  switch (t.role) {
    case Role::RoutedExpert: return QStringLiteral("routed experts");
    case Role::SharedExpert: return QStringLiteral("shared experts");
    case Role::Attention: return QStringLiteral("attention");
    case Role::DenseMlp: return QStringLiteral("dense MLP");
    case Role::Router: return QStringLiteral("router");
    case Role::Norm: return QStringLiteral("norms");
    case Role::Mtp: return QStringLiteral("multi-token prediction");
    case Role::Vision: return QStringLiteral("vision tower");
    case Role::Embedding: return QStringLiteral("embeddings");
    case Role::LmHead: return QStringLiteral("lm_head");
    case Role::Other: return QStringLiteral("other");
  }
  return QStringLiteral("other");
}

// The part of a name below its group: "self_attn.q_proj.weight" under "layer 3 > attention",
// "down_proj.weight" under "expert 7". The full name stays in FullNameRole and tooltips.
QString shortLabel(const TensorRecord& t) {
  const std::string& n = t.name;
  size_t pos = 0;
  if (t.layer >= 0) {
    const std::string layerTok = "." + std::to_string(t.layer) + ".";
    size_t at = n.find(layerTok);
    if (at != std::string::npos) pos = at + layerTok.size();
    if (t.expert >= 0) {
      const std::string expertTok = "." + std::to_string(t.expert) + ".";
      size_t e = n.find(expertTok, pos ? pos - 1 : 0);
      if (e != std::string::npos) pos = e + expertTok.size();
    }
  }
  return QString::fromStdString(n.substr(pos));
}

}  // namespace

TensorTreeModel::TensorTreeModel(QObject* parent) : QAbstractItemModel(parent), root_(std::make_unique<Node>()) {}
TensorTreeModel::~TensorTreeModel() = default;

void TensorTreeModel::setCheckpoint(std::shared_ptr<const Checkpoint> ckpt) {
  beginResetModel();
  ckpt_ = std::move(ckpt);
  build();
  endResetModel();
}

void TensorTreeModel::build() {
  root_ = std::make_unique<Node>();
  leafOfTensor_.clear();
  if (!ckpt_) return;
  const Checkpoint& c = *ckpt_;
  leafOfTensor_.assign(c.tensors.size(), nullptr);
  auto child = [](Node* parent, const QString& label) {
    auto n = std::make_unique<Node>();
    n->label = label;
    n->parent = parent;
    n->row = int(parent->children.size());
    parent->children.push_back(std::move(n));
    return parent->children.back().get();
  };
  // Group keys keep first-seen order of the (naturally sorted) tensors; layers by index.
  std::map<int, Node*> layers;
  std::map<std::pair<Node*, QString>, Node*> modules;
  std::map<std::pair<Node*, int>, Node*> experts;
  Node* outside = nullptr;
  std::map<int, std::vector<uint32_t>> byLayer;
  for (uint32_t i = 0; i < c.tensors.size(); ++i) byLayer[c.tensors[i].layer].push_back(i);
  for (const auto& [layer, idx] : byLayer) {
    Node* ln;
    if (layer < 0) {
      ln = outside = child(root_.get(), tr("(outside layers)"));
    } else {
      bool moe = std::find(c.model.moeLayers.begin(), c.model.moeLayers.end(), layer) != c.model.moeLayers.end();
      bool mtp = std::find(c.model.mtpLayers.begin(), c.model.mtpLayers.end(), layer) != c.model.mtpLayers.end();
      ln = layers[layer] = child(root_.get(), tr("layer %1 (%2)").arg(layer).arg(mtp ? "MTP" : moe ? "MoE" : "dense"));
    }
    for (uint32_t i : idx) {
      const TensorRecord& t = c.tensors[i];
      Node* parent = ln;
      QString mod = moduleLabel(t);
      auto mk = std::make_pair(ln, mod);
      auto mit = modules.find(mk);
      parent = mit != modules.end() ? mit->second : (modules[mk] = child(ln, mod));
      if (t.expert >= 0) {
        auto ek = std::make_pair(parent, int(t.expert));
        auto eit = experts.find(ek);
        parent = eit != experts.end() ? eit->second : (experts[ek] = child(parent, tr("expert %1").arg(t.expert)));
      }
      Node* leaf = child(parent, shortLabel(t));
      leaf->tensor = int32_t(i);
      leafOfTensor_[i] = leaf;
      for (Node* n = leaf; n; n = n->parent) n->bytes += t.bytes;
    }
  }
  (void)outside;
}

TensorTreeModel::Node* TensorTreeModel::nodeOf(const QModelIndex& index) const {
  return index.isValid() ? static_cast<Node*>(index.internalPointer()) : root_.get();
}

QModelIndex TensorTreeModel::index(int row, int column, const QModelIndex& parent) const {
  if (row < 0 || column < 0 || column >= ColumnCount) return {};
  Node* p = nodeOf(parent);
  if (!p || row >= int(p->children.size())) return {};
  return createIndex(row, column, p->children[size_t(row)].get());
}

QModelIndex TensorTreeModel::parent(const QModelIndex& child) const {
  if (!child.isValid()) return {};
  Node* n = nodeOf(child);
  Node* p = n->parent;
  if (!p || p == root_.get()) return {};
  return createIndex(p->row, 0, p);
}

int TensorTreeModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() && parent.column() != 0) return 0;
  Node* p = nodeOf(parent);
  return p ? int(p->children.size()) : 0;
}

int TensorTreeModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QVariant TensorTreeModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !ckpt_) return {};
  const Node* n = nodeOf(index);
  const TensorRecord* t = n->tensor >= 0 ? &ckpt_->tensors[size_t(n->tensor)] : nullptr;
  if (role == TensorIndexRole) return t ? QVariant(n->tensor) : QVariant();
  if (role == BytesRole) return QVariant::fromValue<qulonglong>(n->bytes);
  if (role == FullNameRole) return t ? QString::fromStdString(t->name) : n->label;
  if (role == Qt::TextAlignmentRole && index.column() == Bytes) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && t)
    return QString::fromStdString(t->name + "\noffset " + std::to_string(t->offset) + " in " + ckpt_->files[t->file].path);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Name: return n->label;
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
  if (tensorIndex >= leafOfTensor_.size() || !leafOfTensor_[tensorIndex]) return {};
  Node* n = leafOfTensor_[tensorIndex];
  return createIndex(n->row, 0, n);
}

}  // namespace ws::ui
