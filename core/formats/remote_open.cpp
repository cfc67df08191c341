#include "core/formats/remote_open.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/formats/data_extent.h"
#include "core/formats/gguf.h"
#include "core/formats/safetensors_index.h"
#include "core/io/mirror_lock.h"
#include "core/io/text_file.h"
#include "core/util/error.h"

namespace ws {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr uint64_t kFirstRead = 32 << 10;        // a weight file's first read when nothing says how long its header is
constexpr size_t kConcurrentRequests = 64;       // requests in flight at once, each on a pooled keep-alive connection
// A safetensors header entry is its quoted name and at most about 115 bytes of dtype (F8_E4M3),
// a 4-D shape and two 15-digit offsets with their keys; this bound, summed over the tensors the
// index gives a shard, holds its whole header in one read (a longer one costs a second request).
constexpr uint64_t kHeaderBytesPerTensor = 128, kHeaderSlack = 4 << 10;
constexpr uint64_t kSideFileLimit = 256ull << 20;  // as readTextFile: tokenizer.json can be tens of MB
constexpr uint64_t kHeaderLimit = 512ull << 20;  // a GGUF header (vocabulary included) grown up to this
const char* const kSideFiles[] = {"config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json", "special_tokens_map.json",
                                  "hf_quant_config.json", "model.safetensors.index.json"};

[[noreturn]] void remoteFail(const std::string& where, std::string message) { throw CoreError(Error{ErrorCode::Remote, std::move(message), where, std::nullopt, {}}); }

bool endsWith(const std::string& s, const std::string& suffix) { return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0; }
bool isWeightFile(const std::string& name) { return endsWith(name, ".safetensors") || endsWith(name, ".gguf"); }

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string hubEndpoint() {
  std::string e = env("HF_ENDPOINT");
  if (e.empty()) e = "https://huggingface.co";
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

// HF_TOKEN, else the file the Hugging Face CLI writes at login.
std::string hubToken() {
  if (std::string t = env("HF_TOKEN"); !t.empty()) return t;
  std::vector<std::string> files;
  if (std::string p = env("HF_TOKEN_PATH"); !p.empty()) files.push_back(p);
  if (std::string h = env("HF_HOME"); !h.empty()) files.push_back(h + "/token");
  if (std::string h = env("HOME"); !h.empty()) files.push_back(h + "/.cache/huggingface/token");
  for (const auto& f : files) {
    std::ifstream in(f);
    std::string t;
    if (in && std::getline(in, t)) {
      while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
      if (!t.empty()) return t;
    }
  }
  return {};
}

// A name from a listing or an index, safe to create in the mirror folder.
void checkName(const std::string& name, const std::string& where) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    remoteFail(where, "'" + name + "' is not a plain file name");
}

struct Listing {
  std::vector<std::pair<std::string, std::string>> weights, side;  // name, URL
  std::string revision;
  std::map<std::string, std::string> fetched;  // side files the listing already read whole (an index)
};

Listing listHub(HttpClient& http, const std::string& location) {
  const auto hub = parseHub(location);
  if (!hub) remoteFail(location, "not hf://ORG/REPO[@REVISION][/FOLDER]");
  const std::string& rev = hub->revision;
  std::string sub = hub->sub;
  const std::string api = hub->api();
  Json j;
  try {
    j = Json::parse(http.getWhole(api, 64ull << 20));
  } catch (const Json::exception& e) {
    remoteFail(api, std::string("the Hub's answer is not JSON: ") + e.what());
  }
  Listing out;
  out.revision = j.contains("sha") && j["sha"].is_string() ? j["sha"].get<std::string>() : rev;
  if (!j.contains("siblings") || !j["siblings"].is_array()) remoteFail(api, "the Hub's answer lists no files (no \"siblings\")");
  // hf://ORG/REPO/FILE.gguf: that file (with the other parts of its split set), among the many
  // quantizations a GGUF repository usually holds; its folder's side files come along.
  std::string only;
  if (isWeightFile(sub)) {
    static const std::regex split(R"((.*)-\d{5}-of-\d{5}(\.gguf|\.safetensors))");
    std::smatch ms;
    only = std::regex_match(sub, ms, split) ? ms[1].str() + "-" : sub;
    sub = sub.find('/') == std::string::npos ? "" : sub.substr(0, sub.rfind('/'));
  }
  const std::string prefix = sub.empty() ? "" : sub + "/";
  for (const auto& s : j["siblings"]) {
    if (!s.is_object() || !s.contains("rfilename") || !s["rfilename"].is_string()) continue;
    const std::string path = s["rfilename"].get<std::string>();
    if (path.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string name = path.substr(prefix.size());
    if (name.find('/') != std::string::npos) continue;  // deeper folders are other checkpoints
    const std::string url = hub->resolve(out.revision, path);
    const bool chosen = only.empty() || path == only || (only.back() == '-' && path.rfind(only, 0) == 0 && path.find("-of-") != std::string::npos);
    if (isWeightFile(name) && chosen) out.weights.push_back({name, url});
    else if (std::find(std::begin(kSideFiles), std::end(kSideFiles), name) != std::end(kSideFiles)) out.side.push_back({name, url});
  }
  if (out.weights.empty()) remoteFail(location, "the repository" + std::string(sub.empty() ? "" : " folder '" + sub + "'") + " holds no .safetensors or .gguf file");
  return out;
}

// The commit an hf:// branch or tag points at now, to tell whether a cached mirror of it is still
// that commit's: one small request. None when there is nothing to ask - a commit-pinned
// location (what a commit holds never changes), any other URL, HF_HUB_OFFLINE set - or when the
// Hub cannot be asked (the cached mirror is then used, as offline).
std::optional<std::string> currentHubRevision(HttpClient& http, const std::string& location) {
  const auto hub = parseHub(location);
  static const std::regex commit("[0-9a-f]{40}");
  if (!hub || !env("HF_HUB_OFFLINE").empty() || std::regex_match(hub->revision, commit)) return std::nullopt;
  try {
    const Json j = Json::parse(http.getWhole(hub->api(), 64ull << 20));
    if (j.contains("sha") && j["sha"].is_string()) return j["sha"].get<std::string>();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

Listing listUrl(HttpClient& http, const std::string& url) {
  Listing out;
  const std::string base = url.substr(0, url.rfind('/') + 1), name = url.substr(url.rfind('/') + 1);
  std::string index;
  if (name.empty()) {  // a folder: its index, else one model.safetensors
    if (http.getIfPresent(base + "model.safetensors.index.json", 64ull << 20, index)) out.side.push_back({"model.safetensors.index.json", base + "model.safetensors.index.json"});
    else out.weights.push_back({"model.safetensors", base + "model.safetensors"});
  } else if (endsWith(name, ".json")) {
    index = http.getWhole(url, 64ull << 20);
    out.side.push_back({"model.safetensors.index.json", url});
  } else if (isWeightFile(name)) {
    checkName(name, url);
    out.weights.push_back({name, url});
    static const std::regex split(R"((.*)-(\d{5})-of-(\d{5})(\.gguf|\.safetensors))");
    std::smatch m;
    if (std::regex_match(name, m, split)) {  // the other parts of a split set
      out.weights.clear();
      const int count = std::stoi(m[3]);
      for (int k = 1; k <= count; ++k) {
        char part[64];
        std::snprintf(part, sizeof part, "-%05d-of-%05d", k, count);
        const std::string n = m[1].str() + part + m[4].str();
        out.weights.push_back({n, base + n});
      }
    }
  } else {
    remoteFail(url, "not a .safetensors, .gguf or model.safetensors.index.json URL, nor a folder URL ending in '/'");
  }
  if (!index.empty()) {
    out.fetched["model.safetensors.index.json"] = index;
    const SafetensorsIndex ix = parseSafetensorsIndex(index, url);
    for (const auto& s : ix.shards) {
      checkName(s, url);
      out.weights.push_back({s, base + s});
    }
  }
  for (const char* side : kSideFiles)
    if (std::none_of(out.side.begin(), out.side.end(), [&](const auto& p) { return p.first == side; })) out.side.push_back({side, base + side});
  return out;
}

// FNV-1a: a stable name for a location's cache folder.
std::string cacheKey(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
  return buf;
}

fs::path sharedCacheRoot(const RemoteOptions& o) {
  if (!o.cacheDir.empty()) return o.cacheDir;
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty()) return fs::path(x) / "weightscope" / "remote";
  return fs::path(env("HOME").empty() ? "/tmp" : env("HOME")) / ".cache" / "weightscope" / "remote";
}

// A rank's cache lies beside the shared one (remote-rank-N), not inside it, where the shared
// cache's bound would count it as one of its mirrors and drop it.
fs::path cacheRoot(const RemoteOptions& o) {
  fs::path shared = sharedCacheRoot(o);
  if (!shared.has_filename()) shared = shared.parent_path();  // a cacheDir given as "dir/"
  return o.rank < 0 ? shared : shared.parent_path() / (shared.filename().string() + "-rank-" + std::to_string(o.rank));
}

// Bytes [0, end) of a weight file with its header whole: safetensors' length prefix says how far;
// a GGUF is read further until its key-value pairs and tensor infos parse.
std::vector<uint8_t> fetchHeader(HttpClient& http, const RemoteFile& f, uint64_t firstRead, uint64_t& total, std::string& etag) {
  RangeReply r = http.getRange(f.url, 0, firstRead);
  total = r.totalSize, etag = r.etag;
  std::vector<uint8_t> bytes = std::move(r.bytes);
  auto grow = [&](uint64_t to) {
    to = std::min(to, total);
    if (to <= bytes.size()) return;
    RangeReply more = http.getRange(f.url, bytes.size(), to - bytes.size());
    bytes.insert(bytes.end(), more.bytes.begin(), more.bytes.end());
  };
  // Only the header is kept: the cache never holds tensor bytes it was not asked for.
  if (endsWith(f.name, ".safetensors")) {
    if (bytes.size() >= 8) {
      uint64_t n = 0;
      std::memcpy(&n, bytes.data(), 8);
      if (n <= 100'000'000) {  // larger is refused by the parser, which names it
        grow(8 + n);
        bytes.resize(std::min<uint64_t>(bytes.size(), 8 + n));
      }
    }
    return bytes;
  }
  while (true) {
    try {
      const GgufFile g = parseGguf(std::span<const uint8_t>(bytes.data(), bytes.size()), f.url, DataExtent::Partial);
      grow(g.dataStart);
      bytes.resize(std::min<uint64_t>(bytes.size(), g.dataStart));
      return bytes;
    } catch (const CoreError& e) {
      if (e.error().code != ErrorCode::GgufTruncated || bytes.size() >= total || bytes.size() >= kHeaderLimit) return bytes;  // the open names it
      grow(bytes.size() * 4);
    }
  }
}

// Runs task(i) for i in [0, n) on up to kConcurrentRequests threads, each request blocking on its
// own pooled connection: the round trips overlap. The first error stops the rest and is thrown.
void forEachConcurrently(size_t n, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::optional<Error> firstError;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        task(i);
      } catch (const CoreError& e) {
        std::lock_guard lock(mu);
        if (!firstError) firstError = e.error();
        next = n;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(kConcurrentRequests, n); ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (firstError) throw CoreError(*firstError);
}

// An hf:// listing, with the index and config.json asked for at the same time, where a Hub
// checkpoint keeps them (its folder, at the revision asked for): one round trip for the three, a
// 404 costing a request and no wait. What the listing does not name is dropped; what it names and
// was not fetched (an error, say) is fetched with the headers.
Listing listHubOverlapped(HttpClient& http, const std::string& location) {
  const auto hub = parseHub(location);
  if (!hub || isWeightFile(hub->sub)) return listHub(http, location);
  const std::string folder = hub->sub.empty() ? "" : hub->sub + "/";
  const std::string names[] = {"model.safetensors.index.json", "config.json"};
  std::string bodies[2];
  bool present[2] = {false, false};
  Listing list;
  forEachConcurrently(3, [&](size_t i) {
    if (i == 2) {
      list = listHub(http, location);
      return;
    }
    try {
      present[i] = http.getIfPresent(hub->resolve(hub->revision, folder + names[i]), 64ull << 20, bodies[i]);
    } catch (const CoreError&) {  // the listing's own request says what is wrong
    }
  });
  for (int i = 0; i < 2; ++i)
    if (present[i] && std::any_of(list.side.begin(), list.side.end(), [&](const auto& f) { return f.first == names[i]; })) list.fetched[names[i]] = bodies[i];
  return list;
}

// The first read of each weight file: its header whole in one request where the index says which
// tensors it holds, else kFirstRead.
std::map<std::string, uint64_t> firstReads(const Listing& list, const std::string& location) {
  std::map<std::string, uint64_t> reads;
  const auto index = list.fetched.find("model.safetensors.index.json");
  if (index == list.fetched.end()) return reads;
  try {
    const SafetensorsIndex ix = parseSafetensorsIndex(index->second, location);
    std::vector<uint64_t> bytes(ix.shards.size(), kHeaderSlack);
    ix.weightMap.forEach([&](std::string_view name, uint32_t shard) { bytes[shard] += name.size() + kHeaderBytesPerTensor; });
    for (size_t k = 0; k < ix.shards.size(); ++k) reads[ix.shards[k]] = std::max(kFirstRead, bytes[k]);
  } catch (const CoreError&) {  // the open names what is wrong with the index
  }
  return reads;
}

void writeFile(const fs::path& p, const void* data, uint64_t n, uint64_t size) {
  const int fd = ::open(p.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) throw CoreError(Error{ErrorCode::Io, "cannot create the mirror file", p.string(), std::nullopt, {}});
  const bool ok = ::ftruncate(fd, off_t(size)) == 0 && (n == 0 || ::pwrite(fd, data, n, 0) == ssize_t(n));
  ::close(fd);
  if (!ok) throw CoreError(Error{ErrorCode::Io, "cannot write the mirror file", p.string(), std::nullopt, {}});
}

uint64_t allocatedBytes(const fs::path& dir) {
  uint64_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    struct stat st {};
    if (::stat(e.path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) n += uint64_t(st.st_blocks) * 512;
  }
  return n;
}

// Drops the least recently made mirrors until the cache holds at most `limit` bytes on disk.
void boundCache(const fs::path& root, const fs::path& keep, uint64_t limit) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    if (!e.is_directory()) continue;
    total += allocatedBytes(e.path());
    entries.push_back({fs::last_write_time(e.path(), ec), e.path()});
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& [when, p] : entries) {
    if (total <= limit) break;
    // Another process's mirror in the making, or one a process reads now (its lock held), stays.
    if (p == keep || p.filename().string().find(".partial-") != std::string::npos) continue;
    std::unique_ptr<MirrorLock> alone;
    try {
      alone = MirrorLock::tryAlone((root / (p.filename().string() + ".lock")).string());
    } catch (const CoreError&) {
    }
    if (!alone) continue;
    const uint64_t n = allocatedBytes(p);
    fs::remove_all(p, ec);
    total -= std::min(total, n);
  }
}

std::shared_ptr<RemoteSource> fromManifest(const fs::path& dir, const std::string& location, std::shared_ptr<HttpClient> http) {
  Json m;
  try {
    m = Json::parse(readTextFile((dir / "weightscope-remote.json").string()));
  } catch (const std::exception&) {
    return nullptr;  // an unreadable entry is made again
  }
  if (!m.is_object() || m.value("location", "") != location || !m.contains("files")) return nullptr;
  auto src = std::make_shared<RemoteSource>(location, dir.string(), std::move(http), false);
  src->revision = m.value("revision", "");
  src->fromCache = true;
  for (const auto& f : m["files"]) {
    RemoteFile rf{f.value("name", ""), f.value("url", ""), f.value("size", uint64_t(0)), f.value("etag", "")};
    std::error_code ec;
    if (rf.name.empty() || fs::file_size(dir / rf.name, ec) != rf.size) return nullptr;
    src->markPresent((dir / rf.name).string(), 0, f.value("header", uint64_t(0)));
    for (const auto& k : f.value("kept", Json::array()))  // weight_shape tensors an open read
      if (k.is_array() && k.size() == 2) src->markPresent((dir / rf.name).string(), k[0].get<uint64_t>(), k[1].get<uint64_t>());
    src->files.push_back(std::move(rf));
  }
  for (const auto& s : m.value("side", Json::array())) src->sideFiles.push_back(s.get<std::string>());
  return src;
}

}  // namespace

HubRecord hubRecord(const std::string& location) {
  const auto hub = parseHub(location);
  if (!hub) remoteFail(location, "not hf://ORG/REPO[@REVISION][/FOLDER]");
  if (!httpAvailable()) remoteFail(location, httpUnavailableReason());
  HttpOptions ho;
  ho.bearerToken = hubToken();
  HttpClient http(ho);
  const std::string api = hub->api() + "?blobs=true";
  Json j;
  try {
    j = Json::parse(http.getWhole(api, 256ull << 20));
  } catch (const Json::exception& e) {
    remoteFail(api, std::string("the Hub's answer is not JSON: ") + e.what());
  }
  if (!j.contains("siblings") || !j["siblings"].is_array()) remoteFail(api, "the Hub's answer lists no files (no \"siblings\")");
  HubRecord r{location, hub->repo, j.contains("sha") && j["sha"].is_string() ? j["sha"].get<std::string>() : hub->revision, {}};
  // The folder's files: of hf://ORG/REPO/DIR/FILE.gguf, DIR's.
  std::string folder = hub->sub;
  if (isWeightFile(folder)) folder = folder.find('/') == std::string::npos ? "" : folder.substr(0, folder.rfind('/'));
  const std::string prefix = folder.empty() ? "" : folder + "/";
  for (const auto& s : j["siblings"]) {
    if (!s.is_object() || !s.contains("rfilename") || !s["rfilename"].is_string()) continue;
    const std::string path = s["rfilename"].get<std::string>();
    if (path.compare(0, prefix.size(), prefix) != 0 || path.find('/', prefix.size()) != std::string::npos) continue;
    HubFileRecord f;
    f.name = path.substr(prefix.size());
    if (s.contains("size") && s["size"].is_number_unsigned()) f.size = s["size"].get<uint64_t>(), f.sized = true;
    if (s.contains("blobId") && s["blobId"].is_string()) f.blobSha1 = s["blobId"].get<std::string>();
    if (s.contains("lfs") && s["lfs"].is_object()) {
      const Json& lfs = s["lfs"];
      if (lfs.contains("sha256") && lfs["sha256"].is_string()) f.sha256 = lfs["sha256"].get<std::string>();
      if (lfs.contains("size") && lfs["size"].is_number_unsigned()) f.size = lfs["size"].get<uint64_t>(), f.sized = true;  // the file's, not its pointer's
    }
    r.files.push_back(std::move(f));
  }
  return r;
}

std::string HubLocation::api() const { return hubEndpoint() + "/api/models/" + repo + "/revision/" + revision; }
std::string HubLocation::resolve(const std::string& rev, const std::string& path) const { return hubEndpoint() + "/" + repo + "/resolve/" + rev + "/" + path; }

std::optional<HubLocation> parseHub(const std::string& location) {
  static const std::regex re(R"(hf://([^/@]+)/([^/@]+)(@([^/]+))?(/(.*))?)");
  std::smatch m;
  if (!std::regex_match(location, m, re)) return std::nullopt;
  HubLocation h{m[1].str() + "/" + m[2].str(), m[4].matched ? m[4].str() : "main", m[6].matched ? m[6].str() : ""};
  while (!h.sub.empty() && h.sub.back() == '/') h.sub.pop_back();
  return h;
}

bool isRemoteLocation(const std::string& p) { return p.rfind("hf://", 0) == 0 || p.rfind("http://", 0) == 0 || p.rfind("https://", 0) == 0; }

RemoteOptions& remoteOptions() {
  static RemoteOptions o;
  return o;
}

std::shared_ptr<RemoteSource> openRemote(const std::string& location, const RemoteOptions& options) {
  if (!httpAvailable()) remoteFail(location, httpUnavailableReason() + ": download the checkpoint and open it locally");
  HttpOptions ho;
  if (location.rfind("hf://", 0) == 0 || location.rfind(hubEndpoint(), 0) == 0) ho.bearerToken = hubToken();
  ho.cancel = options.cancel;
  auto http = std::make_shared<HttpClient>(ho);
  const fs::path root = cacheRoot(options);
  const fs::path dir = root / cacheKey(location);
  auto configured = [&](std::shared_ptr<RemoteSource> s) {
    s->budget = options.fetchBudget;
    s->progress = options.progress;
    return s;
  };
  // A cached mirror is used under its lock (mirror_lock.h): shared by its readers; replaced only
  // by a process that holds it alone. One that finds it stale while others read it makes a
  // temporary mirror of its own instead.
  std::unique_ptr<MirrorLock> lock;
  bool useCache = options.useCache;
  if (useCache) {
    std::error_code ec;
    fs::create_directories(root, ec);
    lock = MirrorLock::acquire((root / (cacheKey(location) + ".lock")).string(), options.cancel.get());
    if (!lock) remoteFail(location, "cancelled");
    if (auto cached = fromManifest(dir, location, http)) {
      // A branch (main) moves: its mirror is used only while the branch still names its commit.
      const auto now = currentHubRevision(*http, location);
      if (!now || *now == cached->revision) {
        lock->share();
        cached->holdLock(std::move(lock));
        return configured(cached);
      }
    }
    if (!lock->alone()) useCache = false, lock.reset();
  }

  auto stopIfCancelled = [&] {
    if (options.cancel && *options.cancel) remoteFail(location, "cancelled");
  };
  stopIfCancelled();
  const Listing list = location.rfind("hf://", 0) == 0 ? listHubOverlapped(*http, location) : listUrl(*http, location);
  std::error_code ec;
  fs::path work;
  if (useCache) {
    work = root / (cacheKey(location) + ".partial-" + std::to_string(::getpid()));
  } else {
    work = fs::temp_directory_path() / ("weightscope-remote-" + cacheKey(location) + "-" + std::to_string(::getpid()));
  }
  fs::remove_all(work, ec);
  fs::create_directories(work, ec);
  if (ec) throw CoreError(Error{ErrorCode::Io, "cannot create the mirror folder: " + ec.message(), work.string(), std::nullopt, {}});
  struct Cleanup {
    fs::path p;
    bool armed = true;
    ~Cleanup() {
      std::error_code e;
      if (armed) fs::remove_all(p, e);
    }
  } cleanup{work};

  Json manifest = {{"location", location}, {"revision", list.revision}, {"files", Json::array()}, {"side", Json::array()}};
  // Every side file not fetched yet and every weight file's header, overlapped (163 shards of
  // DeepSeek-V3: 163 requests, 32 in flight).
  std::vector<RemoteFile> files(list.weights.size());
  std::vector<uint64_t> headerBytes(files.size());
  std::vector<char> sidePresent(list.side.size(), 0);
  const std::map<std::string, uint64_t> reads = firstReads(list, location);
  std::mutex mu;
  uint64_t headersDone = 0;
  forEachConcurrently(list.side.size() + files.size(), [&](size_t i) {
    stopIfCancelled();
    if (i < list.side.size()) {
      const auto& [name, url] = list.side[i];
      std::string text;
      if (auto known = list.fetched.find(name); known != list.fetched.end()) text = known->second;
      else if (!http->getIfPresent(url, kSideFileLimit, text)) return;
      writeFile(work / name, text.data(), text.size(), text.size());
      sidePresent[i] = 1;
      return;
    }
    i -= list.side.size();
    RemoteFile& f = files[i];
    f.name = list.weights[i].first;
    f.url = list.weights[i].second;
    checkName(f.name, f.url);
    const auto planned = reads.find(f.name);
    const std::vector<uint8_t> head = fetchHeader(*http, f, planned == reads.end() ? kFirstRead : planned->second, f.size, f.etag);
    writeFile(work / f.name, head.data(), head.size(), f.size);
    headerBytes[i] = head.size();
    if (options.progress) {
      std::lock_guard lock(mu);
      options.progress("fetching headers", ++headersDone, files.size());
    }
  });
  std::vector<std::string> side;
  for (size_t i = 0; i < list.side.size(); ++i)
    if (sidePresent[i]) side.push_back(list.side[i].first), manifest["side"].push_back(list.side[i].first);
  for (size_t i = 0; i < files.size(); ++i)
    manifest["files"].push_back({{"name", files[i].name}, {"url", files[i].url}, {"size", files[i].size}, {"etag", files[i].etag}, {"header", headerBytes[i]}});
  {
    std::ofstream out(work / "weightscope-remote.json");
    out << manifest.dump(1);
  }

  fs::path final = work;
  if (useCache) {  // alone: nobody reads the mirror it replaces
    fs::remove_all(dir, ec);
    fs::rename(work, dir, ec);
    if (!ec) final = dir;
    boundCache(root, final, options.cacheLimit);
  }
  cleanup.armed = false;
  auto src = std::make_shared<RemoteSource>(location, final.string(), http, !useCache || final != dir);
  if (useCache && final == dir) {
    lock->share();
    src->holdLock(std::move(lock));
  }
  src->revision = list.revision;
  for (size_t i = 0; i < files.size(); ++i) {
    src->markPresent((final / files[i].name).string(), 0, headerBytes[i]);
    src->files.push_back(files[i]);
  }
  src->sideFiles = side;
  return configured(src);
}

}  // namespace ws
