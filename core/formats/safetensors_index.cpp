#include "core/formats/safetensors_index.h"

#include <algorithm>
#include <numeric>

#include <nlohmann/json.hpp>

#include "core/model/naming.h"
#include "core/util/error.h"

namespace ws {

namespace {

bool plainFileName(const std::string& f) {
  return !f.empty() && f != "." && f != ".." && f.find('/') == std::string::npos && f.find('\\') == std::string::npos &&
         f.find('\0') == std::string::npos;
}

// Reads the top-level object: weight_map's pairs straight into the index, metadata.total_size,
// everything else skipped. `problem` and `tensor` say why it stopped.
class IndexSax {
 public:
  explicit IndexSax(SafetensorsIndex& out) : out_(out) {}
  std::string problem, tensor;
  bool sawWeightMap = false;

  bool null() { return scalar(false); }
  bool boolean(bool) { return scalar(false); }
  bool number_integer(int64_t) { return scalar(false); }
  bool number_unsigned(uint64_t v) {
    if (depth_ == 2 && section_ == Section::Metadata && key_ == "total_size") out_.totalSize = v;
    return scalar(false);
  }
  bool number_float(double, const std::string&) { return scalar(false); }
  bool string(std::string& v) {
    if (depth_ == 2 && section_ == Section::WeightMap) {
      if (!plainFileName(v)) return stop("weight_map names shard '" + v + "' for '" + key_ + "': not a plain file name beside the index", key_);
      auto [it, fresh] = shardIds_.emplace(v, uint32_t(out_.shards.size()));
      if (fresh) out_.shards.push_back(v);
      if (!out_.weightMap.emplace(key_, it->second).second) return stop("weight_map names '" + key_ + "' twice", key_);
      return true;
    }
    return scalar(false);
  }
  bool binary(nlohmann::json::binary_t&) { return scalar(false); }
  bool start_object(std::size_t) {
    if (depth_ == 1) section_ = key_ == "weight_map" ? Section::WeightMap : key_ == "metadata" ? Section::Metadata : Section::Other;
    else if (depth_ == 2 && section_ == Section::WeightMap) return stop("weight_map value for '" + key_ + "' is not a file name", key_);
    if (depth_ == 1 && section_ == Section::WeightMap) sawWeightMap = true;
    ++depth_;
    return true;
  }
  bool end_object() {
    if (--depth_ == 1) section_ = Section::Other;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 0) return stop("index is not a JSON object", {});
    if (depth_ == 2 && section_ == Section::WeightMap) return stop("weight_map value for '" + key_ + "' is not a file name", key_);
    ++depth_;
    return true;
  }
  bool end_array() {
    --depth_;
    return true;
  }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) {
    if (problem.empty()) problem = std::string("index is not valid JSON: ") + ex.what();
    return false;
  }

 private:
  enum class Section { Other, WeightMap, Metadata };
  bool scalar(bool) {
    if (depth_ == 0) return stop("index is not a JSON object", {});
    if (depth_ == 2 && section_ == Section::WeightMap) return stop("weight_map value for '" + key_ + "' is not a file name", key_);
    if (depth_ == 1 && key_ == "weight_map") return stop("index has no 'weight_map' object", {});
    return true;
  }
  bool stop(std::string why, std::string t) {
    problem = std::move(why);
    tensor = std::move(t);
    return false;
  }

  SafetensorsIndex& out_;
  std::unordered_map<std::string, uint32_t> shardIds_;
  std::string key_;
  int depth_ = 0;
  Section section_ = Section::Other;
};

}  // namespace

SafetensorsIndex parseSafetensorsIndex(const std::string& text, const std::string& path) {
  SafetensorsIndex idx;
  IndexSax sax(idx);
  if (!nlohmann::json::sax_parse(text, &sax, nlohmann::json::input_format_t::json, true))
    fail(ErrorCode::InvalidHeaderJson, sax.problem.empty() ? "index is not a JSON object" : sax.problem, path, std::nullopt, sax.tensor);
  if (!sax.sawWeightMap) fail(ErrorCode::InvalidHeaderJson, "index has no 'weight_map' object", path);
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
  for (auto& [name, shard] : idx.weightMap) shard = rank[shard];
  return idx;
}

}  // namespace ws
