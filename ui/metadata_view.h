// The Metadata tab: the tokenizer in one line, a searchable tree of every metadata entry (GGUF
// key-value pairs, safetensors __metadata__, HF config files' keys) with arrays opening into their
// elements read on demand, and the selected value in full - a chat template with its Jinja tags
// highlighted - in a read-only editor.
#pragma once

#include <QWidget>
#include <memory>

#include "ui/checkpoint_view.h"

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QSortFilterProxyModel;
class QTreeView;

namespace ws::ui {

class MetadataModel;

class MetadataView : public QWidget, public CheckpointView {
  Q_OBJECT
 public:
  explicit MetadataView(QWidget* parent = nullptr);
  ~MetadataView() override;
  void setCheckpoint(std::shared_ptr<const Checkpoint> c) override;

  MetadataModel* model() const { return model_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QTreeView* tree() const { return tree_; }
  QLineEdit* searchEdit() const { return search_; }
  QPlainTextEdit* detail() const { return detail_; }
  QLabel* tokenizerLabel() const { return tokenizer_; }

 private:
  void showSelected();

  MetadataModel* model_;
  QSortFilterProxyModel* proxy_;
  QTreeView* tree_;
  QLineEdit* search_;
  QPlainTextEdit* detail_;
  QLabel* tokenizer_;
};

}  // namespace ws::ui
