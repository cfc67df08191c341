#include "core/formats/open_checkpoint.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <numeric>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/formats/gguf.h"
#include "core/formats/gguf_model.h"
#include "core/formats/hf_config.h"
#include "core/formats/safetensors.h"
#include "core/formats/safetensors_index.h"
#include "core/io/text_file.h"
#include "core/model/naming.h"
#include "core/model/structure.h"
#include "core/util/parallel.h"

namespace ws {

namespace fs = std::filesystem;

namespace {

// Strict opening throws at the first problem; tolerant opening (validation) records it in
// Checkpoint::issues and carries on with what can be read.
struct OpenMode {
  bool tolerant = false;
  Checkpoint* c = nullptr;
  void report(const Error& e) const {
    if (!tolerant) throw CoreError(e);
    c->issues.push_back(e);
  }
};

std::vector<std::string> listWithSuffix(const fs::path& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (e.is_regular_file() && n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return naturalLess(a, b); });
  return out;
}

// "name-00001-of-00003.gguf" -> every file of the set, in split order; a lone file -> itself.
std::vector<std::string> ggufSplitSet(const std::string& path, const OpenMode& mode) {
  static const std::regex re(R"((.*)-(\d{5})-of-(\d{5})\.gguf$)");
  std::smatch m;
  if (!std::regex_match(path, m, re)) return {path};
  int count = std::stoi(m[3].str());
  std::vector<std::string> files;
  char buf[32];
  for (int k = 1; k <= count; ++k) {
    std::snprintf(buf, sizeof buf, "-%05d-of-%05d.gguf", k, count);
    std::string f = m[1].str() + buf;
    if (!fs::exists(f)) {
      mode.report(Error{ErrorCode::MissingShard, "split " + std::to_string(k) + " of " + std::to_string(count) + " is missing", f, std::nullopt, {}});
      mode.c->incomplete = true;
      continue;
    }
    files.push_back(f);
  }
  return files;
}

// Parses every file in parallel; returns the per-file error (if any) in file order.
template <class Parse>
std::vector<std::optional<Error>> parseAll(const std::vector<std::string>& paths, Parse&& parse) {
  std::vector<std::optional<Error>> errors(paths.size());
  parallelFor(paths.size(), [&](size_t i) {
    try {
      parse(i);
    } catch (const CoreError& e) {
      errors[i] = e.error();
    }
  });
  return errors;
}

// Keeps the files that parsed (reporting the others) and returns their positions.
std::vector<size_t> keepGood(const std::vector<std::optional<Error>>& errors, const OpenMode& mode) {
  std::vector<size_t> good;
  for (size_t i = 0; i < errors.size(); ++i) {
    if (errors[i]) {
      mode.report(*errors[i]);
      mode.c->incomplete = true;
    } else {
      good.push_back(i);
    }
  }
  return good;
}

void addSafetensors(Checkpoint& c, const std::vector<std::string>& paths, const OpenMode& mode) {
  std::vector<SafetensorsHeader> headers(paths.size());
  std::vector<SourceFile> files(paths.size());
  auto errors = parseAll(paths, [&](size_t i) {
    auto map = MappedFile::open(paths[i]);
    headers[i] = parseSafetensors(map->bytes(), paths[i]);
    files[i] = SourceFile{paths[i], "safetensors", map->size(), headers[i].dataStart, map};
  });
  auto good = keepGood(errors, mode);
  size_t total = 0;
  for (size_t g : good) total += headers[g].tensors.size();
  c.tensors.reserve(total);
  for (size_t k = 0; k < good.size(); ++k) {
    const size_t i = good[k];
    c.files.push_back(std::move(files[i]));
    for (auto& t : headers[i].tensors) {
      TensorRecord r;
      r.name = std::move(t.name);
      r.file = uint32_t(k);
      r.offset = headers[i].dataStart + t.begin;
      r.bytes = t.end - t.begin;
      r.dtype = t.dtype;
      r.shape = std::move(t.shape);
      c.tensors.push_back(std::move(r));
    }
    for (auto& [k, v] : headers[i].metadata) c.metadata.emplace(k, v);
  }
}

void addGguf(Checkpoint& c, const std::vector<std::string>& paths, const OpenMode& mode) {
  std::vector<GgufFile> parsed(paths.size());
  std::vector<SourceFile> files(paths.size());
  auto errors = parseAll(paths, [&](size_t i) {
    auto map = MappedFile::open(paths[i]);
    parsed[i] = parseGguf(map->bytes(), paths[i]);
    files[i] = SourceFile{paths[i], "gguf", map->size(), parsed[i].dataStart, map};
  });
  if (std::any_of(errors.begin(), errors.end(), [](const auto& e) { return e.has_value(); })) {
    keepGood(errors, mode);  // throws in strict mode; a GGUF set with a bad part is not cataloged
    return;
  }
  c.files = std::move(files);
  if (paths.size() > 1) {
    int64_t declared = -1, sum = 0;
    for (size_t i = 0; i < parsed.size(); ++i) {
      const GgufKv* no = parsed[i].find("split.no");
      const GgufKv* count = parsed[i].find("split.count");
      const GgufKv* tc = parsed[i].find("split.tensors.count");
      if (!no || !count || !no->asInt() || !count->asInt()) {
        mode.report(Error{ErrorCode::InconsistentSplit, "split file lacks split.no / split.count", paths[i], std::nullopt, {}});
        continue;
      }
      if (*no->asInt() != int64_t(i))
        mode.report(Error{ErrorCode::InconsistentSplit, "split.no is " + std::to_string(*no->asInt()) + ", expected " + std::to_string(i), paths[i], no->offset, {}});
      if (*count->asInt() != int64_t(paths.size()))
        mode.report(Error{ErrorCode::InconsistentSplit,
                          "split.count is " + std::to_string(*count->asInt()) + " but the set has " + std::to_string(paths.size()) + " files", paths[i],
                          count->offset, {}});
      if (tc && tc->asInt()) declared = *tc->asInt();
      sum += int64_t(parsed[i].tensors.size());
    }
    if (declared >= 0 && declared != sum)
      mode.report(Error{ErrorCode::InconsistentSplit, "split.tensors.count says " + std::to_string(declared) + " tensors but the splits hold " + std::to_string(sum),
                        paths[0], std::nullopt, {}});
  }
  for (size_t i = 0; i < parsed.size(); ++i) {
    for (auto& t : parsed[i].tensors) {
      TensorRecord r;
      r.name = std::move(t.name);
      r.file = uint32_t(i);
      r.offset = parsed[i].dataStart + t.relOffset;
      r.bytes = t.bytes;
      r.dtype = t.dtype;
      r.ggmlOrder = true;
      for (auto it = t.ne.rbegin(); it != t.ne.rend(); ++it) r.shape.push_back(uint64_t(*it));
      c.tensors.push_back(std::move(r));
    }
    for (auto& n : parsed[i].notes) c.notes.push_back(paths[i] + ": " + n);
    if (parsed[i].nonCanonical) c.runtimeConcerns.push_back(*parsed[i].nonCanonical);
  }
  // Model KV pairs live in the first split only.
  c.model = modelFromGgufKv(parsed[0], paths[0]);
  for (const char* k : {"general.name", "general.architecture", "general.file_type", "general.quantization_version"})
    if (const GgufKv* kv = parsed[0].find(k)) {
      if (auto s = kv->asString()) c.metadata[k] = *s;
      else if (auto v = kv->asInt()) c.metadata[k] = std::to_string(*v);
    }
}

fs::path dirOf(const fs::path& p) { return p.parent_path().empty() ? fs::path(".") : p.parent_path(); }

// A shard that exists but was not cataloged because it could not be read.
bool unreadableShard(const Checkpoint& c, const fs::path& dir, const std::string& shard) {
  const std::string path = (dir / shard).string();
  for (const auto& f : c.files)
    if (f.path == path) return false;
  return true;
}

void checkIndexAgainstShards(Checkpoint& c, const SafetensorsIndex& idx, const fs::path& indexPath, const std::set<std::string>& missingShards) {
  const std::string ip = indexPath.string();
  // One pass over the stored tensors, one hash lookup each; the index entries no tensor claimed
  // are looked for only when there are some (a damaged checkpoint).
  std::vector<std::string> holder(c.files.size());
  for (size_t f = 0; f < c.files.size(); ++f) holder[f] = fs::path(c.files[f].path).filename().string();
  size_t missing = 0, moved = 0, unlisted = 0, claimed = 0;
  for (const auto& t : c.tensors) {
    const uint32_t* shardId = idx.weightMap.find(t.name);
    if (!shardId) {
      ++unlisted;
      c.issues.push_back(Error{ErrorCode::IndexTensorUnlisted, "stored in the shard but not in weight_map", c.files[t.file].path, t.offset, t.name});
      continue;
    }
    ++claimed;
    const std::string& shard = idx.shards[*shardId];
    if (holder[t.file] != shard) {
      ++moved;
      c.issues.push_back(Error{ErrorCode::IndexTensorMisplaced, "weight_map says '" + shard + "' but it is stored in '" + holder[t.file] + "'",
                               c.files[t.file].path, t.offset, t.name});
    }
  }
  if (claimed < idx.weightMap.size()) {
    std::unordered_set<std::string_view> stored;
    stored.reserve(c.tensors.size());
    for (const auto& t : c.tensors) stored.insert(t.name);
    idx.weightMap.forEach([&](std::string_view name, uint32_t shardId) {
      if (stored.count(name)) return;
      const std::string& shard = idx.shards[shardId];
      if (missingShards.count(shard) || unreadableShard(c, dirOf(indexPath), shard)) {
        c.unreadable.emplace_back(name);  // its shard is missing or broken: reported once, as such
        return;
      }
      ++missing;
      c.issues.push_back(Error{ErrorCode::IndexTensorAbsent, "weight_map puts it in '" + shard + "', which does not hold it", ip, std::nullopt, std::string(name)});
    });
  }
  if (missing) c.notes.push_back(ip + ": " + std::to_string(missing) + " tensors in weight_map are absent from their shard");
  if (moved) c.notes.push_back(ip + ": " + std::to_string(moved) + " tensors sit in a different shard than weight_map says");
  if (unlisted) c.notes.push_back(ip + ": " + std::to_string(unlisted) + " shard tensors are not in weight_map");
  if (idx.totalSize && *idx.totalSize != c.totalBytes() && !c.incomplete) {
    std::string m = "metadata.total_size is " + std::to_string(*idx.totalSize) + " but the tensors hold " + std::to_string(c.totalBytes()) + " bytes";
    c.notes.push_back(ip + ": " + m);
    c.issues.push_back(Error{ErrorCode::IndexTotalSize, m, ip, std::nullopt, {}});
  }
}

// Stable natural-order sort of record indices (records are 112 bytes; indices move cheaply) by
// precomputed natural keys, the two halves on two threads, then one merge.
std::vector<uint32_t> naturalOrder(const std::vector<TensorRecord>& t) {
  std::vector<uint32_t> order(t.size());
  std::iota(order.begin(), order.end(), 0u);
  std::vector<std::string> keys(t.size());
  parallelChunks(t.size(), 8192, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) keys[i] = naturalKey(t[i].name);
  });
  auto less = [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; };
  const auto mid = order.begin() + std::ptrdiff_t(order.size() / 2);
  if (order.size() < 4096 || std::thread::hardware_concurrency() < 2) {
    std::stable_sort(order.begin(), order.end(), less);
    return order;
  }
  std::thread first([&] { std::stable_sort(order.begin(), mid, less); });
  std::stable_sort(mid, order.end(), less);
  first.join();
  std::inplace_merge(order.begin(), mid, order.end(), less);
  return order;
}

void sortAndDeduplicate(Checkpoint& c, const OpenMode& mode) {
  // A name stored twice: the first file's copy stays in the catalog, the second is reported.
  std::vector<TensorRecord> kept;
  kept.reserve(c.tensors.size());
  for (uint32_t i : naturalOrder(c.tensors)) {
    TensorRecord& t = c.tensors[i];
    if (!kept.empty() && kept.back().name == t.name) {
      mode.report(Error{ErrorCode::DuplicateTensor, "tensor is stored in two files: " + c.files[kept.back().file].path + " and " + c.files[t.file].path,
                        c.files[t.file].path, t.offset, t.name});
      continue;
    }
    kept.push_back(std::move(t));
  }
  c.tensors = std::move(kept);
}

std::shared_ptr<const Checkpoint> openImpl(const std::string& path, bool tolerant) {
  auto c = std::make_shared<Checkpoint>();
  c->root = path;
  const OpenMode mode{tolerant, c.get()};
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) fail(ErrorCode::Io, "no such file or directory", path);

  fs::path dir = fs::is_directory(st) ? fs::path(path) : fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  std::optional<SafetensorsIndex> index;
  fs::path indexPath;
  bool gguf = false;
  std::vector<std::string> files;

  if (fs::is_directory(st)) {
    auto indexes = listWithSuffix(dir, ".safetensors.index.json");
    auto st_files = listWithSuffix(dir, ".safetensors");
    auto gguf_files = listWithSuffix(dir, ".gguf");
    if (!indexes.empty()) {
      indexPath = indexes.front();
    } else if (!st_files.empty()) {
      files = st_files;
    } else if (!gguf_files.empty()) {
      gguf = true;
      files = ggufSplitSet(gguf_files.front(), mode);
      if (files.size() == 1 && gguf_files.size() > 1)
        fail(ErrorCode::NotACheckpoint, "folder holds " + std::to_string(gguf_files.size()) + " unrelated GGUF files; open one of them", path);
    } else {
      fail(ErrorCode::NotACheckpoint, "folder holds no .safetensors, .safetensors.index.json or .gguf file", path);
    }
  } else if (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    indexPath = path;
  } else {
    // The extension decides when there is one, as in a folder (a GGUF named .safetensors is then a
    // FormatMismatch error naming the file, and the reverse too); otherwise the magic does.
    auto endsWith = [&](const char* ext) {
      const size_t n = std::strlen(ext);
      return path.size() > n && path.compare(path.size() - n, n, ext) == 0;
    };
    if (endsWith(".gguf")) gguf = true;
    else if (endsWith(".safetensors")) gguf = false;
    else gguf = looksLikeGguf(MappedFile::open(path)->bytes());
    files = gguf ? ggufSplitSet(path, mode) : std::vector<std::string>{path};
  }

  std::set<std::string> missingShards;
  if (!indexPath.empty()) {
    index = parseSafetensorsIndex(readTextFile(indexPath.string()), indexPath.string());
    for (const auto& s : index->shards) {
      fs::path f = dir / s;
      if (!fs::exists(f)) {
        missingShards.insert(s);
        c->incomplete = true;
        mode.report(Error{ErrorCode::MissingShard, "index names shard '" + s + "' which does not exist", indexPath.string(), std::nullopt, {}});
        continue;
      }
      files.push_back(f.string());
    }
    if (index->shards.empty()) fail(ErrorCode::NotACheckpoint, "index names no shards", indexPath.string());
  }

  if (gguf) {
    addGguf(*c, files, mode);
    c->format = "gguf";
  } else {
    try {
      readHfConfig(dir.string(), c->model);
    } catch (const CoreError& e) {
      mode.report(e.error());  // tolerant: go on without a model description
    }
    addSafetensors(*c, files, mode);
    c->format = "safetensors";
  }
  sortAndDeduplicate(*c, mode);
  if (index) checkIndexAgainstShards(*c, *index, indexPath, missingShards);
  recognizeStructure(*c);
  if (std::any_of(c->tensors.begin(), c->tensors.end(), [](const TensorRecord& t) { return t.numaNode >= 0; })) c->format = "ktransformers";
  return c;
}

}  // namespace

Result<std::shared_ptr<const Checkpoint>> openCheckpoint(const std::string& path) {
  return capture([&]() -> std::shared_ptr<const Checkpoint> { return openImpl(path, false); });
}

Result<std::shared_ptr<const Checkpoint>> openCheckpointTolerant(const std::string& path) {
  return capture([&]() -> std::shared_ptr<const Checkpoint> { return openImpl(path, true); });
}

}  // namespace ws
