#include "core/validate/hub_rules.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "core/formats/hub_cache.h"
#include "core/io/file_hash.h"
#include "core/util/format_bytes.h"

namespace ws::val {

namespace fs = std::filesystem;

namespace {

bool isWeight(const std::string& name) { return name.ends_with(".safetensors") || name.ends_with(".gguf"); }

// The files a model is: weights, its JSON (config, index, tokenizer), a sentencepiece model. A
// README or an image the download left out is said once, not an error.
bool modelFile(const std::string& name) {
  return isWeight(name) || name.ends_with(".json") || name.ends_with(".model") || name.ends_with(".tiktoken");
}

struct Job {
  std::string name, path;
  const HubFileRecord* hub;
  FileDigest kind;
  std::string expected;
  uint64_t size;
};

}  // namespace

std::string hubLocationOf(const std::string& path) {
  const auto s = hubSnapshotOf(path);
  return s ? "hf://" + s->repo + "@" + s->commit : "";
}

void hubRules(const Checkpoint& c, const HubRecord& record, Sink& sink, const ValidateOptions& opt) {
  std::error_code ec;
  const fs::path dir = fs::is_directory(c.root, ec) ? fs::path(c.root) : fs::path(c.root).parent_path();
  std::map<std::string, std::string> local;  // name -> path: the folder's regular files (links followed)
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (fs::is_regular_file(e.path(), ec)) local[e.path().filename().string()] = e.path().string();
  std::vector<Job> jobs;
  std::vector<std::string> notDownloaded;
  for (const auto& h : record.files) {
    const auto at = local.find(h.name);
    if (at == local.end()) {
      if (modelFile(h.name)) sink.add("WS-H002", h.name + " is in " + record.location + " (commit " + record.commit + ") but not in " + dir.string(), {}, (dir / h.name).string());
      else notDownloaded.push_back(h.name);
      continue;
    }
    const uint64_t size = fs::file_size(at->second, ec);
    if (h.sized && size != h.size) {
      sink.add("WS-H001",
               size < h.size ? h.name + " is cut short: " + formatCount(size) + " of the Hub's " + formatCount(h.size) + " bytes, " + formatCount(h.size - size) + " missing"
                             : h.name + " holds " + formatCount(size) + " bytes, the Hub's " + formatCount(h.size),
               {}, at->second);
      continue;
    }
    if (!h.sha256.empty()) jobs.push_back({h.name, at->second, &h, FileDigest::Sha256, h.sha256, size});
    else if (isWeight(h.name) && size > (10u << 20))
      sink.add("WS-H004", "the Hub gave no sha256 for " + h.name + " (" + record.location + "): its bytes cannot be checked", {}, at->second);
    else if (!h.blobSha1.empty()) jobs.push_back({h.name, at->second, &h, FileDigest::GitBlobSha1, h.blobSha1, size});
    else sink.add("WS-H004", "the Hub gave no sha256 or blob id for " + h.name + " (" + record.location + "): its bytes cannot be checked", {}, at->second);
  }
  for (const auto& file : local)  // (not a structured binding: clang 14 cannot capture one)
    if (std::none_of(record.files.begin(), record.files.end(), [&](const HubFileRecord& h) { return h.name == file.first; }))
      sink.add("WS-H003", file.first + " is not in " + record.location + " (commit " + record.commit + ")", {}, file.second);
  if (!notDownloaded.empty()) {
    std::string list;
    for (const auto& n : notDownloaded) list += (list.empty() ? "" : ", ") + n;
    sink.add("WS-H005", std::to_string(notDownloaded.size()) + " of the Hub's files are not in " + dir.string() + " (none a model file): " + list);
  }
  // The digests, the largest files first, on all cores: each file read sequentially in 8 MiB runs.
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.size > b.size; });
  uint64_t total = 0;
  for (const auto& j : jobs) total += j.size;
  std::atomic<uint64_t> done{0};
  std::atomic<bool> cancel{false};
  std::atomic<size_t> next{0};
  std::mutex progressMu;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size() && !cancel;) {
      const Job& j = jobs[i];
      uint64_t counted = 0;
      std::string got;
      try {
        got = digestFile(j.path, j.kind, [&](uint64_t n) {
          done += n - counted;
          counted = n;
          if (opt.progress) {
            std::lock_guard lock(progressMu);
            if (!opt.progress("hashing against the Hub", done, total)) cancel = true;
          }
        }, &cancel);
      } catch (const CoreError& e) {
        if (!cancel) sink.add("WS-H001", j.name + ": " + e.error().message, {}, j.path);
        continue;
      }
      if (got != j.expected)
        sink.add("WS-H001", j.name + (j.kind == FileDigest::Sha256 ? ": sha256 " : ": git blob sha1 ") + got + ", the Hub's " + j.expected + " (" + record.location +
                                " commit " + record.commit + "): the bytes differ",
                 {}, j.path);
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(opt.threads ? opt.threads : std::thread::hardware_concurrency(), unsigned(jobs.size())));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (cancel) fail(ErrorCode::Io, "cancelled");
}

}  // namespace ws::val
