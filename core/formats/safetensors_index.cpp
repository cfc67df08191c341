#include "core/formats/safetensors_index.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "core/model/naming.h"
#include "core/util/error.h"

namespace ws {

namespace {

bool plainFileName(const std::string& f) {
  return !f.empty() && f != "." && f != ".." && f.find('/') == std::string::npos && f.find('\\') == std::string::npos &&
         f.find('\0') == std::string::npos;
}

}  // namespace

SafetensorsIndex parseSafetensorsIndex(const std::string& text, const std::string& path) {
  using nlohmann::json;
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail(ErrorCode::InvalidHeaderJson, "index is not a JSON object", path);
  auto wm = j.find("weight_map");
  if (wm == j.end() || !wm->is_object()) fail(ErrorCode::InvalidHeaderJson, "index has no 'weight_map' object", path);
  SafetensorsIndex idx;
  std::set<std::string> seen;
  for (const auto& [k, v] : wm->items()) {
    if (!v.is_string()) fail(ErrorCode::InvalidHeaderJson, "weight_map value for '" + k + "' is not a file name", path, std::nullopt, k);
    std::string f = v.get<std::string>();
    if (!plainFileName(f))
      fail(ErrorCode::InvalidHeaderJson, "weight_map names shard '" + f + "' for '" + k + "': not a plain file name beside the index", path,
           std::nullopt, k);
    if (seen.insert(f).second) idx.shards.push_back(f);
    idx.weightMap.emplace(k, std::move(f));
  }
  std::sort(idx.shards.begin(), idx.shards.end(), [](const std::string& a, const std::string& b) { return naturalLess(a, b); });
  if (auto md = j.find("metadata"); md != j.end() && md->is_object())
    if (auto ts = md->find("total_size"); ts != md->end() && ts->is_number_unsigned()) idx.totalSize = ts->get<uint64_t>();
  return idx;
}

}  // namespace ws
