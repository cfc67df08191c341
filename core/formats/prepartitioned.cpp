#include "core/formats/prepartitioned.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <unordered_map>

#include "core/formats/safetensors.h"
#include "core/io/mapped_file.h"
#include "core/util/format_bytes.h"

namespace ws {

namespace fs = std::filesystem;

std::optional<std::map<int, std::vector<std::string>>> vllmShardedStateFiles(const std::vector<std::string>& files) {
  static const std::regex re(R"(.*-rank-(\d+)-part-(\d+)\.safetensors)");
  std::map<int, std::vector<std::pair<int, std::string>>> parts;
  for (const auto& f : files) {
    std::smatch m;
    const std::string name = fs::path(f).filename().string();
    if (!std::regex_match(name, m, re) || m[1].length() > 6 || m[2].length() > 6) return std::nullopt;
    parts[std::stoi(m[1])].push_back({std::stoi(m[2]), f});
  }
  if (parts.empty()) return std::nullopt;
  std::map<int, std::vector<std::string>> out;
  for (auto& [rank, ps] : parts) {
    std::sort(ps.begin(), ps.end());
    for (auto& p : ps) out[rank].push_back(p.second);
  }
  return out;
}

namespace {

struct Signature {
  const DType* dtype;
  std::vector<uint64_t> shape;
  std::string file;
};

std::string describe(const Signature& s) { return std::string(s.dtype->name) + " " + formatShape(s.shape); }

}  // namespace

void describeRanks(Checkpoint& c, const std::map<int, std::vector<std::string>>& ranks, const std::function<void(Error)>& report) {
  Prepartitioned p;
  p.layout = "vllm-sharded-state";
  const auto& first = ranks.begin()->second;
  auto inconsistent = [&](std::string message, const std::string& file, const std::string& tensor = {}) {
    report(Error{ErrorCode::InconsistentRanks, std::move(message), file, std::nullopt, tensor});
  };
  // Rank 0's tensors are the catalog's.
  std::unordered_map<std::string, Signature> zero;
  for (const auto& t : c.tensors) zero[t.name] = {t.dtype, t.shape, c.files[t.file].path};
  int expected = 0;
  for (const auto& [rank, files] : ranks) {
    for (; expected < rank; ++expected) inconsistent("rank " + std::to_string(expected) + " has no files (ranks go up to " + std::to_string(ranks.rbegin()->first) + ")", first.front());
    expected = rank + 1;
    RankShard shard{rank, files, 0, 0};
    if (rank == ranks.begin()->first) {  // the catalog's own files: counted, not parsed again
      shard.tensors = c.tensors.size();
      for (const auto& t : c.tensors) shard.bytes += t.bytes;
      p.ranks.push_back(std::move(shard));
      continue;
    }
    std::unordered_map<std::string, bool> seen;
    for (const auto& path : files) {
      std::optional<SafetensorsHeader> h;
      try {
        auto map = MappedFile::open(path);
        h = parseSafetensors(*map);
      } catch (const CoreError& e) {
        report(e.error());
        continue;
      }
      for (const auto& t : h->tensors) {
        ++shard.tensors;
        shard.bytes += t.end - t.begin;
        auto it = zero.find(t.name);
        if (it == zero.end()) {
          inconsistent("rank " + std::to_string(rank) + " holds a tensor rank 0 does not", path, t.name);
          continue;
        }
        seen[t.name] = true;
        const Signature got{t.dtype, t.shape, path};
        if (got.dtype != it->second.dtype || got.shape != it->second.shape)
          inconsistent("rank " + std::to_string(rank) + " holds it as " + describe(got) + ", rank 0 as " + describe(it->second), path, t.name);
      }
    }
    for (const auto& [name, sig] : zero)
      if (!seen.count(name)) inconsistent("rank " + std::to_string(rank) + " lacks it (rank 0 holds it in " + fs::path(sig.file).filename().string() + ")", files.front(), name);
    p.ranks.push_back(std::move(shard));
  }
  c.notes.push_back("pre-partitioned (vLLM sharded state): " + std::to_string(ranks.size()) + " ranks; the catalog is rank " +
                    std::to_string(ranks.begin()->first) + "'s shard, and the rules that compare shapes with the config are left out");
  c.prepartitioned = std::move(p);
}

}  // namespace ws
