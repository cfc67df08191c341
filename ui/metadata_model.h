// The checkpoint's metadata as an item model: one row per entry (GGUF key-value pairs, safetensors
// __metadata__, and for HF folders the top-level keys of config.json, generation_config.json and
// tokenizer_config.json), columns key, type and value; an array's elements are its children, read
// from the file only when shown (a 256k-token vocabulary scrolls without being loaded).
#pragma once

#include <QAbstractItemModel>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/formats/gguf.h"
#include "core/model/checkpoint.h"

namespace ws::ui {

class MetadataModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column { Key, Type, Value, kColumns };
  static constexpr int kFullValueRole = Qt::UserRole + 1;  // the whole value, uncut

  explicit MetadataModel(QObject* parent = nullptr);
  ~MetadataModel() override;
  void setCheckpoint(std::shared_ptr<const Checkpoint> c);

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

  // Array elements read from the file so far (what scrolling cost): for tests.
  uint64_t elementsRead() const { return elementsRead_; }

 private:
  struct Row {
    QString key, type, value;  // value: as shown (cut); the full text comes from fullValue()
    int meta = -1;             // index into Checkpoint::meta, or -1 for a config file's key
    QString full;              // config-file rows: the whole value
  };
  QString fullValue(const Row& r) const;
  const GgufArray* arrayOf(int row) const;

  std::shared_ptr<const Checkpoint> ckpt_;
  std::vector<Row> rows_;
  mutable std::map<int, std::optional<GgufArray>> arrays_;  // opened when first shown
  mutable uint64_t elementsRead_ = 0;
};

}  // namespace ws::ui
