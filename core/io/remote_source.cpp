#include "core/io/remote_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io/text_file.h"
#include "core/util/error.h"

namespace ws {

namespace fs = std::filesystem;

RemoteSource::RemoteSource(std::string location, std::string mirror, std::shared_ptr<HttpClient> http, bool temporary)
    : location_(std::move(location)), mirror_(std::move(mirror)), http_(std::move(http)), temporary_(temporary) {}

namespace {

// Punches out every byte of a mirror file outside `keep` (sorted, disjoint [begin, end) spans).
void punchAllBut(const std::string& path, uint64_t size, const std::vector<std::pair<uint64_t, uint64_t>>& keep) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  uint64_t at = 0;
  auto punch = [&](uint64_t to) {
    if (to > at) (void)::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(at), off_t(to - at));
  };
  for (const auto& [a, b] : keep) {
    punch(std::min(a, size));
    at = std::max(at, b);
  }
  punch(size);
  ::close(fd);
}

}  // namespace

RemoteSource::~RemoteSource() {
  std::error_code ec;
  if (temporary_) {
    fs::remove_all(mirror_, ec);
    return;
  }
  // Another process still reads this mirror: what this one fetched stays until the last one leaves.
  if (lock_ && !lock_->becomeAlone()) return;
  const fs::path manifest = fs::path(mirror_) / "weightscope-remote.json";
  nlohmann::json m;
  try {
    m = nlohmann::json::parse(readTextFile(manifest.string()));
  } catch (const std::exception&) {
    m = nullptr;  // an unreadable manifest is made again at the next open
  }
  if (!m.is_object() || !m.contains("files") || !m["files"].is_array()) {
    // No manifest to say what a mirror file keeps: give back what this process wrote.
    for (const auto& [path, spans] : dataWritten_) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) continue;
      for (const auto& [a, n] : spans) (void)::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(a), off_t(n));
      ::close(fd);
    }
    return;
  }
  try {
    // Kept ranges join the manifest, so the next open marks them present.
    if (!kept_.empty()) {
      for (auto& f : m["files"]) {
        auto it = kept_.find((fs::path(mirror_) / f.value("name", "")).string());
        if (it == kept_.end()) continue;
        for (const auto& [a, n] : it->second) f["kept"].push_back({a, n});
      }
      std::ofstream(manifest) << m.dump(1);
    }
    // The cache keeps headers and kept ranges only: every tensor byte fetched - by this process or
    // by others that left before it - goes back to holes.
    for (const auto& f : m["files"]) {
      const std::string name = f.value("name", "");
      if (name.empty() || name.find('/') != std::string::npos || name == "..") continue;  // never outside the mirror
      std::vector<std::pair<uint64_t, uint64_t>> keep{{0, f.value("header", uint64_t(0))}};
      for (const auto& k : f.value("kept", nlohmann::json::array()))
        if (k.is_array() && k.size() == 2) keep.push_back({k[0].get<uint64_t>(), k[0].get<uint64_t>() + k[1].get<uint64_t>()});
      std::sort(keep.begin(), keep.end());
      punchAllBut((fs::path(mirror_) / name).string(), f.value("size", uint64_t(0)), keep);
    }
  } catch (const std::exception&) {
    // a malformed entry: the next open that cannot read it makes the mirror again
  }
}

const RemoteFile* RemoteSource::fileFor(const std::string& mirrorPath) const {
  const std::string name = fs::path(mirrorPath).filename().string();
  for (const auto& f : files)
    if (f.name == name) return &f;
  return nullptr;
}

void RemoteSource::markPresent(const std::string& path, uint64_t offset, uint64_t n) {
  std::lock_guard lock(mu_);
  auto& m = present_[path];
  uint64_t a = offset, b = offset + n;
  auto it = m.upper_bound(a);
  if (it != m.begin() && std::prev(it)->second >= a) --it;
  while (it != m.end() && it->first <= b) {  // merge every span touching [a, b)
    a = std::min(a, it->first);
    b = std::max(b, it->second);
    it = m.erase(it);
  }
  m[a] = b;
}

bool RemoteSource::present(const std::string& path, uint64_t offset, uint64_t n) const {
  if (n == 0) return true;
  std::lock_guard lock(mu_);
  auto f = present_.find(path);
  if (f == present_.end()) return false;
  auto it = f->second.upper_bound(offset);
  if (it == f->second.begin()) return false;
  --it;
  return it->first <= offset && it->second >= offset + n;
}

bool RemoteSource::touched(const std::string& path, uint64_t offset, uint64_t n) const {
  std::lock_guard lock(mu_);
  auto f = present_.find(path);
  if (f == present_.end()) return false;
  auto it = f->second.upper_bound(offset);
  if (it != f->second.begin() && std::prev(it)->second > offset) return true;
  return it != f->second.end() && it->first < offset + n;
}

void RemoteSource::ensure(const std::vector<Range>& wanted, bool keep) {
  // Whole ranges still missing, neighbours within 64 KiB merged into one request.
  std::vector<Range> todo;
  for (const auto& r : wanted)
    if (!present(r.path, r.offset, r.length)) todo.push_back(r);
  std::sort(todo.begin(), todo.end(), [](const Range& x, const Range& y) { return std::tie(x.path, x.offset) < std::tie(y.path, y.offset); });
  std::vector<Range> merged;
  for (const auto& r : todo) {
    const uint64_t gap = keep ? 0 : (64u << 10);  // kept bytes are only what was asked for
    if (!merged.empty() && merged.back().path == r.path && r.offset <= merged.back().offset + merged.back().length + gap) {
      Range& m = merged.back();
      m.length = std::max(m.offset + m.length, r.offset + r.length) - m.offset;
    } else {
      merged.push_back(r);
    }
  }
  if (merged.empty()) return;
  uint64_t total = 0;
  for (const auto& r : merged) total += r.length;
  if (total > budget)
    throw CoreError(Error{ErrorCode::Remote,
                          "this would fetch " + std::to_string(total) + " bytes of tensor data, more than the budget of " + std::to_string(budget) +
                              " (--max-fetch SIZE allows more)",
                          location_, std::nullopt, {}});
  std::atomic<uint64_t> done{0};
  std::mutex progressMu;
  if (!http_) throw CoreError(Error{ErrorCode::Remote, "tensor bytes are needed and this mirror has no connection", mirror_, std::nullopt, {}});
  std::atomic<size_t> next{0};
  std::mutex errMu;
  std::optional<Error> firstError;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < merged.size();) {
      const Range& r = merged[i];
      try {
        const RemoteFile* f = fileFor(r.path);
        if (!f) throw CoreError(Error{ErrorCode::Remote, "not a file of the remote checkpoint", r.path, r.offset, {}});
        RangeReply reply = http_->getRange(f->url, r.offset, r.length);
        const int fd = ::open(r.path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) throw CoreError(Error{ErrorCode::Io, "cannot write the mirror file", r.path, r.offset, {}});
        const ssize_t w = ::pwrite(fd, reply.bytes.data(), reply.bytes.size(), off_t(r.offset));
        ::close(fd);
        if (w != ssize_t(reply.bytes.size())) throw CoreError(Error{ErrorCode::Io, "cannot write the mirror file", r.path, r.offset, {}});
        markPresent(r.path, r.offset, reply.bytes.size());
        if (progress) {
          std::lock_guard lock(progressMu);
          progress("fetching tensor bytes", done += reply.bytes.size(), total);
        }
        std::lock_guard lock(mu_);
        (keep ? kept_ : dataWritten_)[r.path].push_back({r.offset, reply.bytes.size()});
      } catch (const CoreError& e) {
        std::lock_guard lock(errMu);
        if (!firstError) firstError = e.error();
        next = merged.size();  // stop the others
      }
    }
  };
  const size_t n = std::min<size_t>(8, merged.size());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (firstError) throw CoreError(*firstError);
}

}  // namespace ws
