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
#include "core/formats/adapter_config.h"
#include "core/formats/prepartitioned.h"
#include "core/formats/remote_open.h"
#include "core/formats/hf_config.h"
#include "core/formats/hub_cache.h"
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
  DataExtent extent() const { return tolerant ? DataExtent::Partial : DataExtent::Exact; }
};

// "name-00003-of-00011.<ext>": the parts of a split set, numbered from 1.
struct SplitName {
  std::string stem;  // "name"
  int part = 0, count = 0;
  std::string partPath(int k, const std::string& ext) const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "-%05d-of-%05d", k, count);
    return stem + buf + ext;
  }
};

std::optional<SplitName> splitName(const std::string& path, const std::string& ext) {
  static const std::regex re(R"((.*)-(\d{5})-of-(\d{5}))");
  if (path.size() <= ext.size() || path.compare(path.size() - ext.size(), ext.size(), ext) != 0) return std::nullopt;
  std::smatch m;
  const std::string base = path.substr(0, path.size() - ext.size());
  if (!std::regex_match(base, m, re)) return std::nullopt;
  SplitName s{m[1].str(), std::stoi(m[2].str()), std::stoi(m[3].str())};
  if (s.count < 1 || s.part < 1 || s.part > s.count) return std::nullopt;
  return s;
}

// Reports each part of `name`'s set that does not exist; a lone part still opens on its own.
void reportMissingParts(const SplitName& name, const std::string& ext, const OpenMode& mode) {
  for (int k = 1; k <= name.count; ++k) {
    const std::string f = name.partPath(k, ext);
    if (fs::exists(f)) continue;
    mode.c->incomplete = true;
    mode.report(Error{ErrorCode::MissingShard, "part " + std::to_string(k) + " of " + std::to_string(name.count) + " is missing", f, std::nullopt, {}});
  }
}

// Marks the records whose bytes run past the end of their mapped file; true if any does.
bool markCut(std::vector<TensorRecord>& records, size_t from, uint64_t fileSize) {
  bool any = false;
  for (size_t i = from; i < records.size(); ++i) {
    TensorRecord& r = records[i];
    r.cut = r.offset > fileSize || r.bytes > fileSize - r.offset;
    any |= r.cut;
  }
  return any;
}

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

// A GGUF file and the rest of its split set, in split order, each with the split.no it must
// declare; parts that do not exist are reported (a lone part opens on its own).
struct GgufSet {
  std::vector<std::string> files;
  std::vector<int> splitNo;
  int count = 1;     // parts the file names declare
  bool whole() const { return int(files.size()) == count; }
};

GgufSet ggufSplitSet(const std::string& path, const OpenMode& mode) {
  auto name = splitName(path, ".gguf");
  if (!name) return {{path}, {0}, 1};
  GgufSet set;
  set.count = name->count;
  reportMissingParts(*name, ".gguf", mode);
  for (int k = 1; k <= name->count; ++k) {
    const std::string f = name->partPath(k, ".gguf");
    if (!fs::exists(f)) continue;  // reported above
    set.files.push_back(f);
    set.splitNo.push_back(k - 1);
  }
  return set;
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
    headers[i] = parseSafetensors(*map, HeaderParser::Auto, mode.extent());
    files[i] = SourceFile{paths[i], "safetensors", map->size(), headers[i].dataStart, map};
  });
  auto good = keepGood(errors, mode);
  size_t total = 0;
  for (size_t g : good) total += headers[g].tensors.size();
  c.tensors.reserve(total);
  for (size_t k = 0; k < good.size(); ++k) {
    const size_t i = good[k];
    if (headers[i].extentProblem) mode.report(*headers[i].extentProblem);
    const size_t first = c.tensors.size();
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
    if (markCut(c.tensors, first, c.files.back().size)) c.incomplete = true;
    for (auto& [key, v] : headers[i].metadata) {
      MetaEntry e;
      e.key = key, e.type = "STRING", e.value = v, e.file = int32_t(k);
      c.meta.push_back(std::move(e));
      c.metadata.emplace(key, v);
    }
  }
}

// Checks each part's split KVs against its file name and, for a whole set, the declared tensor
// count against the parts' sum.
void checkSplitKeys(const std::vector<GgufFile>& parsed, const std::vector<std::string>& paths, const std::vector<int>& splitNo, const GgufSet& set,
                    const OpenMode& mode) {
  int64_t declared = -1, sum = 0;
  for (size_t i = 0; i < parsed.size(); ++i) {
    const GgufKv* no = parsed[i].find("split.no");
    const GgufKv* count = parsed[i].find("split.count");
    const GgufKv* tc = parsed[i].find("split.tensors.count");
    if (!no || !count || !no->asInt() || !count->asInt()) {
      mode.report(Error{ErrorCode::InconsistentSplit, "split file lacks split.no / split.count", paths[i], std::nullopt, {}});
      continue;
    }
    if (*no->asInt() != splitNo[i])
      mode.report(Error{ErrorCode::InconsistentSplit, "split.no is " + std::to_string(*no->asInt()) + ", expected " + std::to_string(splitNo[i]), paths[i], no->offset, {}});
    if (*count->asInt() != set.count)
      mode.report(Error{ErrorCode::InconsistentSplit,
                        "split.count is " + std::to_string(*count->asInt()) + " but the file names say " + std::to_string(set.count) + " parts", paths[i],
                        count->offset, {}});
    if (tc && tc->asInt()) declared = *tc->asInt();
    sum += int64_t(parsed[i].tensors.size());
  }
  if (set.whole() && declared >= 0 && declared != sum)
    mode.report(Error{ErrorCode::InconsistentSplit, "split.tensors.count says " + std::to_string(declared) + " tensors but the splits hold " + std::to_string(sum),
                      paths[0], std::nullopt, {}});
}

void addGguf(Checkpoint& c, const GgufSet& set, const OpenMode& mode) {
  const std::vector<std::string>& all = set.files;
  std::vector<GgufFile> parsedAll(all.size());
  std::vector<SourceFile> filesAll(all.size());
  auto errors = parseAll(all, [&](size_t i) {
    auto map = MappedFile::open(all[i]);
    parsedAll[i] = parseGguf(map->bytes(), all[i], mode.extent());
    filesAll[i] = SourceFile{all[i], "gguf", map->size(), parsedAll[i].dataStart, map};
  });
  // Strict: the first bad part stops the open. Tolerant: the readable parts are cataloged.
  std::vector<GgufFile> parsed;
  std::vector<std::string> paths;
  std::vector<int> splitNo;
  for (size_t i : keepGood(errors, mode)) {
    parsed.push_back(std::move(parsedAll[i]));
    paths.push_back(all[i]);
    splitNo.push_back(set.splitNo[i]);
    c.files.push_back(std::move(filesAll[i]));
  }
  if (parsed.empty()) return;
  if (set.count > 1) checkSplitKeys(parsed, paths, splitNo, set, mode);
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (parsed[i].extentProblem) mode.report(*parsed[i].extentProblem);
    const size_t first = c.tensors.size();
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
    if (markCut(c.tensors, first, c.files[i].size)) c.incomplete = true;
    for (auto& kv : parsed[i].kv) {
      MetaEntry e;
      e.key = kv.key, e.type = ggufTypeName(kv.type), e.file = int32_t(i), e.offset = kv.offset;
      if (kv.type == GgufType::Array) {
        e.elementType = ggufTypeName(kv.arrayType), e.length = kv.arrayCount, e.first = kv.first, e.dataOffset = kv.dataOffset;
      } else {
        e.value = kv.value;
      }
      c.meta.push_back(std::move(e));
    }
    for (auto& n : parsed[i].notes) c.notes.push_back(paths[i] + ": " + n);
    if (parsed[i].nonCanonical) c.runtimeConcerns.push_back(*parsed[i].nonCanonical);
  }
  // Model KV pairs live in the first split only.
  if (splitNo[0] != 0) {
    c.notes.push_back("the model description lives in part 1 of the split set, which could not be read; layers and experts are recognised from tensor names");
    return;
  }
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
  if (order.size() < 4096 || workerCount() < 2) {
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

// compressed-tensors' weight_shape tensors are read while the structure is recognised; of a remote
// checkpoint they are fetched first (neighbours coalesced into one request by ensure).
void fetchWeightShapes(const Checkpoint& c) {
  std::vector<RemoteSource::Range> ranges;
  for (const auto& t : c.tensors)
    if (t.name.size() > 13 && t.name.compare(t.name.size() - 13, 13, ".weight_shape") == 0 && t.bytes <= 64)
      ranges.push_back({c.files[t.file].path, t.offset, t.bytes});
  c.remote->ensure(ranges, /*keep=*/true);
}

std::shared_ptr<Checkpoint> openLocal(const std::string& location, bool tolerant, std::shared_ptr<RemoteSource> remote) {
  auto c = std::make_shared<Checkpoint>();
  c->root = location;
  c->remote = std::move(remote);
  const std::string path = c->remote ? c->remote->mirror() : location;
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
  GgufSet ggufSet;
  std::optional<std::map<int, std::vector<std::string>>> ranks;  // a pre-partitioned folder's files by rank

  if (fs::is_directory(st)) {
    auto indexes = listWithSuffix(dir, ".safetensors.index.json");
    auto st_files = listWithSuffix(dir, ".safetensors");
    auto gguf_files = listWithSuffix(dir, ".gguf");
    if (!indexes.empty()) {
      indexPath = indexes.front();
    } else if (!st_files.empty()) {
      ranks = vllmShardedStateFiles(st_files);
      files = ranks ? ranks->begin()->second : st_files;
    } else if (!gguf_files.empty()) {
      gguf = true;
      ggufSet = ggufSplitSet(gguf_files.front(), mode);
      if (ggufSet.count == 1 && gguf_files.size() > 1)
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
    if (gguf) {
      ggufSet = ggufSplitSet(path, mode);
    } else {
      files = {path};
      if (auto name = splitName(path, ".safetensors")) reportMissingParts(*name, ".safetensors", mode);
    }
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
    addGguf(*c, ggufSet, mode);
    c->format = "gguf";
  } else {
    try {
      readHfConfig(dir.string(), c->model);
    } catch (const CoreError& e) {
      mode.report(e.error());  // tolerant: go on without a model description
    }
    try {
      c->adapter = readAdapterConfig(dir.string());
    } catch (const CoreError& e) {
      mode.report(e.error());
    }
    addSafetensors(*c, files, mode);
    c->format = "safetensors";
  }
  sortAndDeduplicate(*c, mode);
  if (ranks) describeRanks(*c, *ranks, [&](const Error& e) { mode.report(e); });
  if (index) checkIndexAgainstShards(*c, *index, indexPath, missingShards);
  if (c->remote) fetchWeightShapes(*c);  // read at open: the mirror holds headers only
  recognizeStructure(*c);
  if (std::any_of(c->tensors.begin(), c->tensors.end(), [](const TensorRecord& t) { return t.numaNode >= 0; })) c->format = "ktransformers";
  return c;
}

// A remote checkpoint opens through its local mirror (headers only: remote_open.h); what it says
// about a file names the file's URL, not the mirror's path.
std::shared_ptr<const Checkpoint> openImpl(const std::string& location, bool tolerant, const RemoteOptions& options = remoteOptions()) {
  if (!isRemoteLocation(location)) return openLocal(location, tolerant, nullptr);
  // hf:// whose files are all in the local Hub cache: read there, as huggingface_hub would, with
  // no request (hub_cache.h).
  if (const auto local = localHubPath(location)) {
    auto c = openLocal(*local, tolerant, nullptr);
    c->notes.push_back("read from the local Hugging Face cache (" + *local + "), no network: " + location + " as the cache holds it");
    return c;
  }
  auto remote = openRemote(location, options);
  auto named = [&](Error e) {
    if (const RemoteFile* f = remote->fileFor(e.file)) e.file = f->url;
    else if (!e.file.empty() && e.file.rfind(remote->mirror(), 0) == 0) e.file = location + e.file.substr(remote->mirror().size());
    return e;
  };
  try {
    auto c = openLocal(location, tolerant, remote);
    for (Error& e : c->issues) e = named(e);
    return c;
  } catch (const CoreError& e) {
    throw CoreError(named(e.error()));
  }
}

}  // namespace

Result<std::shared_ptr<const Checkpoint>> openCheckpoint(const std::string& path) {
  return capture([&]() -> std::shared_ptr<const Checkpoint> { return openImpl(path, false); });
}

Result<std::shared_ptr<const Checkpoint>> openCheckpointTolerant(const std::string& path) {
  return capture([&]() -> std::shared_ptr<const Checkpoint> { return openImpl(path, true); });
}

Result<std::shared_ptr<const Checkpoint>> openCheckpointPartial(const std::string& path) { return openCheckpointPartial(path, remoteOptions()); }

Result<std::shared_ptr<const Checkpoint>> openCheckpointPartial(const std::string& path, const RemoteOptions& remote) {
  auto r = capture([&]() -> std::shared_ptr<const Checkpoint> { return openImpl(path, true, remote); });
  if (r && r.value()->tensors.empty() && !r.value()->issues.empty()) return r.value()->issues.front();
  return r;
}

}  // namespace ws
