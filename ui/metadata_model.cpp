#include "ui/metadata_model.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/formats/tokenizer_info.h"
#include "core/io/text_file.h"

namespace ws::ui {

namespace {

constexpr int kShownChars = 200;  // longer values are cut in the table; the detail pane has them whole
constexpr quintptr kTop = 0;      // internalId of top-level rows; children carry their entry's row + 1

QString scalarText(const MetaScalar& v) {
  if (auto* s = std::get_if<std::string>(&v)) return QString::fromUtf8(s->data(), qsizetype(s->size()));
  if (auto* u = std::get_if<uint64_t>(&v)) return QString::number(*u);
  if (auto* i = std::get_if<int64_t>(&v)) return QString::number(*i);
  if (auto* d = std::get_if<double>(&v)) return QString::number(*d, 'g', 9);
  if (auto* b = std::get_if<bool>(&v)) return *b ? QStringLiteral("true") : QStringLiteral("false");
  return {};
}

QString cut(const QString& s) {
  QString one = s;
  one.replace('\n', QChar(0x21B5));  // a visible return mark keeps each row one line
  return one.size() > kShownChars ? one.left(kShownChars) + QStringLiteral("... (%1 characters)").arg(s.size()) : one;
}

}  // namespace

MetadataModel::MetadataModel(QObject* parent) : QAbstractItemModel(parent) {}
MetadataModel::~MetadataModel() = default;

void MetadataModel::setCheckpoint(std::shared_ptr<const Checkpoint> c) {
  beginResetModel();
  ckpt_ = std::move(c);
  rows_.clear();
  arrays_.clear();
  elementsRead_ = 0;
  if (ckpt_) {
    for (size_t i = 0; i < ckpt_->meta.size(); ++i) {
      const MetaEntry& e = ckpt_->meta[i];
      // A shard's __metadata__ is per file: the file names the row (every shard says "format": "pt").
      QString key = QString::fromStdString(e.key);
      if (ckpt_->format != "gguf" && e.file >= 0 && size_t(e.file) < ckpt_->files.size())
        key = QString::fromStdString(std::filesystem::path(ckpt_->files[size_t(e.file)].path).filename().string()) + ": " + key;
      Row r{key, QString::fromStdString(e.type), {}, int(i), {}};
      if (e.type == "ARRAY") {
        r.type = QStringLiteral("ARRAY of %1").arg(QString::fromStdString(e.elementType));
        r.value = tr("%n element(s)", nullptr, int(std::min<uint64_t>(e.length, INT32_MAX)));
      } else {
        r.value = cut(scalarText(e.value));
      }
      rows_.push_back(std::move(r));
    }
    // HF folders: the config files' top-level keys (the tokenizer's chat template among them).
    if (ckpt_->format != "gguf") {
      namespace fs = std::filesystem;
      const fs::path dir = sideFolder(*ckpt_);
      for (const char* name : {"config.json", "generation_config.json", "tokenizer_config.json"}) {
        std::error_code ec;
        if (!fs::exists(dir / name, ec)) continue;
        try {
          const auto j = nlohmann::json::parse(readTextFile((dir / name).string()));
          if (!j.is_object()) continue;
          for (auto it = j.begin(); it != j.end(); ++it) {
            const auto& v = it.value();
            constexpr auto replace = nlohmann::json::error_handler_t::replace;
            const QString full = v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString::fromStdString(v.dump(1, ' ', false, replace));
            const QString shown = v.is_string() ? full : QString::fromStdString(v.dump(-1, ' ', false, replace));  // one line in the table
            rows_.push_back({QString::fromStdString(std::string(name) + ": " + it.key()), QString::fromLatin1(v.type_name()), cut(shown), -1, full});
          }
        } catch (const std::exception& e) {
          rows_.push_back({QString::fromLatin1(name), tr("unreadable"), QString::fromUtf8(e.what()), -1, QString::fromUtf8(e.what())});
        }
      }
    }
  }
  endResetModel();
}

const GgufArray* MetadataModel::arrayOf(int row) const {
  auto it = arrays_.find(row);
  if (it == arrays_.end()) {
    std::optional<GgufArray> a;
    const MetaEntry& e = ckpt_->meta[size_t(rows_[size_t(row)].meta)];
    if (e.file >= 0 && size_t(e.file) < ckpt_->files.size() && ckpt_->files[size_t(e.file)].map)
      if (auto r = GgufArray::open(ckpt_->files[size_t(e.file)].map->bytes(), ckpt_->files[size_t(e.file)].path, e)) a = std::move(r.value());
    it = arrays_.emplace(row, std::move(a)).first;
  }
  return it->second ? &*it->second : nullptr;
}

QModelIndex MetadataModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  return createIndex(row, column, parent.isValid() ? quintptr(parent.row() + 1) : kTop);
}

QModelIndex MetadataModel::parent(const QModelIndex& child) const {
  if (!child.isValid() || child.internalId() == kTop) return {};
  return createIndex(int(child.internalId() - 1), 0, kTop);
}

int MetadataModel::rowCount(const QModelIndex& parent) const {
  if (!parent.isValid()) return int(rows_.size());
  if (parent.internalId() != kTop || parent.column() != 0) return 0;  // elements have no children
  const Row& r = rows_[size_t(parent.row())];
  if (r.meta < 0) return 0;
  const MetaEntry& e = ckpt_->meta[size_t(r.meta)];
  return e.type == "ARRAY" ? int(std::min<uint64_t>(e.length, INT32_MAX)) : 0;
}

int MetadataModel::columnCount(const QModelIndex&) const { return kColumns; }

QString MetadataModel::fullValue(const Row& r) const {
  if (r.meta < 0) return r.full;
  const MetaEntry& e = ckpt_->meta[size_t(r.meta)];
  return e.type == "ARRAY" ? r.value : scalarText(e.value);
}

QVariant MetadataModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != kFullValueRole)) return {};
  if (index.internalId() == kTop) {
    const Row& r = rows_[size_t(index.row())];
    if (role == kFullValueRole) return fullValue(r);
    switch (index.column()) {
      case Key: return r.key;
      case Type: return r.type;
      default: return role == Qt::ToolTipRole && r.value.size() > 80 ? QVariant(r.value.left(1000)) : QVariant(r.value);
    }
  }
  // An array element: read from the file now (and only now).
  const int parentRow = int(index.internalId() - 1);
  const MetaEntry& e = ckpt_->meta[size_t(rows_[size_t(parentRow)].meta)];
  switch (index.column()) {
    case Key: return QString::number(index.row());
    case Type: return QString::fromStdString(e.elementType);
    default: {
      const GgufArray* a = arrayOf(parentRow);
      if (!a) return uint64_t(index.row()) < e.first.size() ? scalarText(e.first[size_t(index.row())]) : QVariant();
      ++elementsRead_;
      const QString v = scalarText(a->at(uint64_t(index.row())));
      return role == kFullValueRole ? v : cut(v);
    }
  }
}

QVariant MetadataModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Key: return tr("key");
    case Type: return tr("type");
    default: return tr("value");
  }
}

}  // namespace ws::ui
