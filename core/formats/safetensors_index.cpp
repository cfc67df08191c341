#include "core/formats/safetensors_index.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include <simdjson.h>

#include "core/model/naming.h"
#include "core/util/error.h"

namespace ws {

namespace {

bool plainFileName(std::string_view f) {
  return !f.empty() && f != "." && f != ".." && f.find('/') == std::string_view::npos && f.find('\\') == std::string_view::npos &&
         f.find('\0') == std::string_view::npos;
}

}  // namespace

SafetensorsIndex parseSafetensorsIndex(const std::string& text, const std::string& path) {
  // simdjson: Kimi-K2's index is 20 MB of JSON; a general-purpose parser spends ~0.2 s on it.
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(text.data(), text.size(), true).get(doc))
    fail(ErrorCode::InvalidHeaderJson, std::string("index is not valid JSON: ") + simdjson::error_message(err), path);
  simdjson::dom::object top;
  if (doc.get_object().get(top)) fail(ErrorCode::InvalidHeaderJson, "index is not a JSON object", path);
  simdjson::dom::object weightMap;
  if (top["weight_map"].get_object().get(weightMap)) fail(ErrorCode::InvalidHeaderJson, "index has no 'weight_map' object", path);

  SafetensorsIndex idx;
  size_t nameBytes = 0;
  for (auto field : weightMap) nameBytes += field.key.size();
  auto names = std::make_shared<std::string>();
  names->reserve(nameBytes);  // never reallocates below: the views stay valid
  idx.weightMap.reserve(weightMap.size());
  std::unordered_map<std::string_view, uint32_t> shardIds;
  for (auto field : weightMap) {
    const size_t at = names->size();
    names->append(field.key);
    const std::string_view name(names->data() + at, field.key.size());
    std::string_view shard;
    if (field.value.get_string().get(shard))
      fail(ErrorCode::InvalidHeaderJson, "weight_map value for '" + std::string(name) + "' is not a file name", path, std::nullopt, std::string(name));
    if (!plainFileName(shard))
      fail(ErrorCode::InvalidHeaderJson,
           "weight_map names shard '" + std::string(shard) + "' for '" + std::string(name) + "': not a plain file name beside the index", path,
           std::nullopt, std::string(name));
    auto [it, fresh] = shardIds.emplace(shard, uint32_t(idx.shards.size()));
    if (fresh) idx.shards.emplace_back(shard);
    if (!idx.weightMap.insert(name, it->second))
      fail(ErrorCode::InvalidHeaderJson, "weight_map names '" + std::string(name) + "' twice", path, std::nullopt, std::string(name));
  }
  idx.names = std::move(names);
  uint64_t total;
  if (!top.at_pointer("/metadata/total_size").get_uint64().get(total)) idx.totalSize = total;

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
