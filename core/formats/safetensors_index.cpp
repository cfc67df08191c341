#include "core/formats/safetensors_index.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <unordered_map>

#if WEIGHTSCOPE_HAVE_SIMDJSON
#include <simdjson.h>
#else
#include <nlohmann/json.hpp>
#endif

#include "core/model/naming.h"
#include "core/util/error.h"

namespace ws {

namespace {

bool plainFileName(std::string_view f) {
  return !f.empty() && f != "." && f != ".." && f.find('/') == std::string_view::npos && f.find('\\') == std::string_view::npos &&
         f.find('\0') == std::string_view::npos;
}

// Collects the weight map's entries into one buffer of names (views stay valid: it is reserved
// once and never reallocates) and the shards in first-seen order.
class IndexBuilder {
 public:
  IndexBuilder(SafetensorsIndex& idx, const std::string& path, size_t nameBytes, size_t entries) : idx_(idx), path_(path) {
    names_ = std::make_shared<std::string>();
    names_->reserve(nameBytes);
    idx_.weightMap.reserve(entries);
  }
  void add(std::string_view key, std::optional<std::string_view> shard) {
    const size_t at = names_->size();
    names_->append(key);
    const std::string_view name(names_->data() + at, key.size());
    if (!shard)
      fail(ErrorCode::InvalidHeaderJson, "weight_map value for '" + std::string(name) + "' is not a file name", path_, std::nullopt, std::string(name));
    if (!plainFileName(*shard))
      fail(ErrorCode::InvalidHeaderJson,
           "weight_map names shard '" + std::string(*shard) + "' for '" + std::string(name) + "': not a plain file name beside the index", path_,
           std::nullopt, std::string(name));
    if (idx_.shards.empty() || *shard != idx_.shards[lastShard_]) {  // neighbours mostly share a shard
      auto [it, fresh] = shardIds_.emplace(std::string(*shard), uint32_t(idx_.shards.size()));
      if (fresh) idx_.shards.emplace_back(*shard);
      lastShard_ = it->second;
    }
    if (!idx_.weightMap.insert(name, lastShard_))
      fail(ErrorCode::InvalidHeaderJson, "weight_map names '" + std::string(name) + "' twice", path_, std::nullopt, std::string(name));
  }
  void finish() { idx_.names = std::move(names_); }

 private:
  SafetensorsIndex& idx_;
  const std::string& path_;
  std::shared_ptr<std::string> names_;
  std::unordered_map<std::string, uint32_t> shardIds_;
  uint32_t lastShard_ = 0;
};

#if WEIGHTSCOPE_HAVE_SIMDJSON
// simdjson: Kimi-K2's index is 20 MB of JSON; a general-purpose parser spends ~0.2 s on it.
void readWeightMap(const std::string& text, const std::string& path, SafetensorsIndex& idx) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(text.data(), text.size(), true).get(doc))
    fail(ErrorCode::InvalidHeaderJson, std::string("index is not valid JSON: ") + simdjson::error_message(err), path);
  simdjson::dom::object top;
  if (doc.get_object().get(top)) fail(ErrorCode::InvalidHeaderJson, "index is not a JSON object", path);
  simdjson::dom::object weightMap;
  if (top["weight_map"].get_object().get(weightMap)) fail(ErrorCode::InvalidHeaderJson, "index has no 'weight_map' object", path);
  size_t nameBytes = 0;
  for (auto field : weightMap) nameBytes += field.key.size();
  IndexBuilder b(idx, path, nameBytes, weightMap.size());
  for (auto field : weightMap) {
    std::string_view shard;
    b.add(field.key, field.value.get_string().get(shard) ? std::nullopt : std::optional(shard));
  }
  b.finish();
  uint64_t total;
  if (!top.at_pointer("/metadata/total_size").get_uint64().get(total)) idx.totalSize = total;
}
#else
// Without simdjson (a machine with no package access): nlohmann/json, the same checks.
void readWeightMap(const std::string& text, const std::string& path, SafetensorsIndex& idx) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) fail(ErrorCode::InvalidHeaderJson, "index is not valid JSON", path);
  if (!doc.is_object()) fail(ErrorCode::InvalidHeaderJson, "index is not a JSON object", path);
  auto wm = doc.find("weight_map");
  if (wm == doc.end() || !wm->is_object()) fail(ErrorCode::InvalidHeaderJson, "index has no 'weight_map' object", path);
  size_t nameBytes = 0;
  for (auto it = wm->begin(); it != wm->end(); ++it) nameBytes += it.key().size();
  IndexBuilder b(idx, path, nameBytes, wm->size());
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    const std::string* shard = it.value().get_ptr<const std::string*>();
    b.add(it.key(), shard ? std::optional<std::string_view>(*shard) : std::nullopt);
  }
  b.finish();
  auto md = doc.find("metadata");
  if (md != doc.end() && md->is_object()) {
    auto ts = md->find("total_size");
    if (ts != md->end() && ts->is_number_unsigned()) idx.totalSize = ts->get<uint64_t>();
  }
}
#endif

}  // namespace

SafetensorsIndex parseSafetensorsIndex(const std::string& text, const std::string& path) {
  SafetensorsIndex idx;
  readWeightMap(text, path, idx);

  // Shards in natural order; the map's indices follow.
  std::vector<uint32_t> order(idx.shards.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return naturalLess(idx.shards[a], idx.shards[b]); });
  std::vector<uint32_t> rank(order.size());
  std::vector<std::string> sorted(order.size());
  for (uint32_t r = 0; r < order.size(); ++r) {
    rank[order[r]] = r;
    sorted[r] = std::move(idx.shards[order[r]]);
  }
  idx.shards = std::move(sorted);
  idx.weightMap.updateValues([&](uint32_t shard) { return rank[shard]; });
  return idx;
}

}  // namespace ws
