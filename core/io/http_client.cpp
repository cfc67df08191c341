#include "core/io/http_client.h"

#include <strings.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <mutex>
#include <thread>

#include "core/util/error.h"

#ifdef WEIGHTSCOPE_HAVE_CURL
#include "core/io/curl_library.h"
#endif

namespace ws {

namespace {

[[noreturn]] void remoteError(const std::string& url, std::string message, std::optional<uint64_t> offset = std::nullopt) {
  throw CoreError(Error{ErrorCode::Remote, std::move(message), url, offset, {}});
}

}  // namespace

#ifndef WEIGHTSCOPE_HAVE_CURL

bool httpAvailable() { return false; }
std::string httpUnavailableReason() { return "this build has no HTTP support (built without libcurl)"; }
struct HttpClient::Pool {};
HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)) {}
HttpClient::~HttpClient() = default;
RangeReply HttpClient::getRange(const std::string& url, uint64_t, uint64_t) { remoteError(url, "this build has no HTTP support (built without libcurl)"); }
std::string HttpClient::getWhole(const std::string& url, uint64_t) { remoteError(url, "this build has no HTTP support (built without libcurl)"); }
bool HttpClient::getIfPresent(const std::string& url, uint64_t, std::string&) { remoteError(url, "this build has no HTTP support (built without libcurl)"); }

#else

bool httpAvailable() { return curlLibrary() != nullptr; }
std::string httpUnavailableReason() { return curlProblem(); }

namespace {

// The library, once an HttpClient exists (its constructor checks it was loaded).
const CurlLibrary& curl() { return *curlLibrary(); }

// One transfer's state: the body is kept up to `limit` bytes; past it the write callback stops
// the transfer, so a server that ignores Range never streams a whole file to us.
struct Transfer {
  std::vector<uint8_t> body;
  uint64_t limit = 0;
  bool overflow = false;
  std::string contentRange, etag;
  HttpStats* stats = nullptr;
  const std::function<void(uint64_t)>* progress = nullptr;
};

size_t onBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  if (t->body.size() + bytes > t->limit) {
    t->overflow = true;
    return 0;  // CURLE_WRITE_ERROR: stop reading
  }
  t->body.insert(t->body.end(), data, data + bytes);
  const uint64_t total = t->stats->bytes.fetch_add(bytes) + bytes;
  if (t->progress && *t->progress) (*t->progress)(total);
  return bytes;
}

size_t onHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size * n);
  auto value = [&](const char* name) -> std::optional<std::string> {
    const size_t k = std::strlen(name);
    if (line.size() <= k || strncasecmp(line.c_str(), name, k) != 0) return std::nullopt;
    std::string v = line.substr(k);
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.pop_back();
    while (!v.empty() && v.front() == ' ') v.erase(v.begin());
    return v;
  };
  if (line.rfind("HTTP/", 0) == 0) t->contentRange.clear(), t->etag.clear();  // a new response (after a redirect)
  if (auto v = value("content-range:")) t->contentRange = *v;
  if (auto v = value("etag:")) t->etag = *v;
  return size * n;
}

// "bytes A-B/T" -> A, B, T.
bool parseContentRange(const std::string& s, uint64_t& a, uint64_t& b, uint64_t& total) {
  unsigned long long x, y, z;
  if (std::sscanf(s.c_str(), "bytes %llu-%llu/%llu", &x, &y, &z) != 3) return false;
  a = x, b = y, total = z;
  return a <= b && b < total;
}

bool retryable(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

}  // namespace

// Easy handles kept between requests so their connections stay alive; one per concurrent request.
struct HttpClient::Pool {
  std::mutex mu;
  std::vector<CURL*> idle;
  CURLSH* share = nullptr;  // DNS and TLS sessions shared between handles
  std::mutex shareMu[CURL_LOCK_DATA_LAST];
  Pool() {
    share = curl().share_init();
    curl().share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl().share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl().share_setopt(share, CURLSHOPT_USERDATA, this);
    curl().share_setopt(share, CURLSHOPT_LOCKFUNC, +[](CURL*, curl_lock_data d, curl_lock_access, void* p) { static_cast<Pool*>(p)->shareMu[d].lock(); });
    curl().share_setopt(share, CURLSHOPT_UNLOCKFUNC, +[](CURL*, curl_lock_data d, void* p) { static_cast<Pool*>(p)->shareMu[d].unlock(); });
  }
  ~Pool() {
    for (CURL* h : idle) curl().easy_cleanup(h);
    curl().share_cleanup(share);
  }
  CURL* take() {
    {
      std::lock_guard lock(mu);
      if (!idle.empty()) {
        CURL* h = idle.back();
        idle.pop_back();
        return h;
      }
    }
    CURL* h = curl().easy_init();
    if (!h) throw CoreError(Error{ErrorCode::Remote, "libcurl could not make a handle", {}, std::nullopt, {}});
    return h;
  }
  void give(CURL* h) {
    std::lock_guard lock(mu);
    idle.push_back(h);
  }
  // A handle for one request, back in the pool (its connection kept) when the request is done.
  struct Lease {
    Pool& pool;
    CURL* handle;
    explicit Lease(Pool& p) : pool(p), handle(p.take()) {}
    ~Lease() { pool.give(handle); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
  };
};

HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)) {
  if (!httpAvailable()) throw CoreError(Error{ErrorCode::Remote, httpUnavailableReason(), {}, std::nullopt, {}});
  pool_ = std::make_unique<Pool>();
}

HttpClient::~HttpClient() = default;

namespace {

struct Outcome {
  CURLcode rc = CURLE_OK;
  long status = 0;
  Transfer t;
  std::string curlMessage;
};

}  // namespace

// One logical request with its retries. `range` is "A-B" or empty for the whole body.
static Outcome perform(CURL* h, CURLSH* share, const HttpOptions& o, HttpStats& stats, const std::function<void(uint64_t)>& progress,
                       const std::string& url, const std::string& range, uint64_t limit, bool& gaveUp) {
  Outcome out;
  gaveUp = false;
  for (int attempt = 0;; ++attempt) {
    curl().easy_reset(h);
    out = Outcome{};
    out.t.limit = limit;
    if (!range.empty()) out.t.body.reserve(std::min<uint64_t>(limit, 64ull << 20));  // a range's bytes land once, not regrown
    out.t.stats = &stats;
    out.t.progress = &progress;
    char err[CURL_ERROR_SIZE] = {0};
    curl().easy_setopt(h, CURLOPT_URL, url.c_str());
    curl().easy_setopt(h, CURLOPT_SHARE, share);
    curl().easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl().easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
    // The token goes to the host asked, and on to a redirect's host only if it is the same one.
    curl().easy_setopt(h, CURLOPT_UNRESTRICTED_AUTH, 0L);
    curl().easy_setopt(h, CURLOPT_CONNECTTIMEOUT, o.connectTimeoutS);
    curl().easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl().easy_setopt(h, CURLOPT_LOW_SPEED_TIME, o.lowSpeedTimeoutS);
    curl().easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl().easy_setopt(h, CURLOPT_USERAGENT, "weightscope");
    curl().easy_setopt(h, CURLOPT_ERRORBUFFER, err);
    curl().easy_setopt(h, CURLOPT_WRITEFUNCTION, onBody);
    curl().easy_setopt(h, CURLOPT_WRITEDATA, &out.t);
    curl().easy_setopt(h, CURLOPT_HEADERFUNCTION, onHeader);
    curl().easy_setopt(h, CURLOPT_HEADERDATA, &out.t);
    curl().easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "identity");  // byte ranges of the file itself
    if (!range.empty()) curl().easy_setopt(h, CURLOPT_RANGE, range.c_str());
    if (o.cancel) {
      curl().easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
      curl().easy_setopt(h, CURLOPT_XFERINFODATA, o.cancel.get());
      curl().easy_setopt(h, CURLOPT_XFERINFOFUNCTION, +[](void* flag, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> int {
        return static_cast<const std::atomic<bool>*>(flag)->load() ? 1 : 0;  // non-zero aborts the transfer
      });
    }
    curl_slist* headers = nullptr;
    if (!o.bearerToken.empty()) {
      headers = curl().slist_append(headers, ("Authorization: Bearer " + o.bearerToken).c_str());
      curl().easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    }
    stats.requests.fetch_add(1);
    out.rc = curl().easy_perform(h);
    curl().easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out.status);
    curl().slist_free_all(headers);
    out.curlMessage = err[0] ? err : curl().easy_strerror(out.rc);
    if (o.cancel && *o.cancel) {
      if (out.rc == CURLE_ABORTED_BY_CALLBACK) out.curlMessage = "cancelled";
      return out;  // no retry of a cancelled request
    }
    const bool again = (out.rc != CURLE_OK && retryable(out.rc)) || (out.rc == CURLE_OK && (out.status >= 500 || out.status == 429));
    if (!again) return out;
    if (attempt >= o.retries) {
      gaveUp = true;
      return out;
    }
    stats.retries.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(int64_t(o.initialBackoffMs) << attempt));
  }
}

namespace {

std::string statusMessage(long status) {
  if (status == 401 || status == 403)
    return "the server refused access (HTTP " + std::to_string(status) +
           "): a gated or private repository needs a token - set HF_TOKEN, or log in with the Hugging Face CLI";
  if (status == 404) return "not found (HTTP 404)";
  return "HTTP " + std::to_string(status);
}

}  // namespace

RangeReply HttpClient::getRange(const std::string& url, uint64_t offset, uint64_t length) {
  if (length == 0) remoteError(url, "a range read of 0 bytes", offset);
  const Pool::Lease lease(*pool_);
  CURL* h = lease.handle;
  const std::string range = std::to_string(offset) + "-" + std::to_string(offset + length - 1);
  for (int shortTry = 0;; ++shortTry) {
    bool gaveUp = false;
    // A little room past the length asked: a server that sends more is answering another question.
    Outcome r = perform(h, pool_->share, options_, stats_, onProgress, url, range, length + 1, gaveUp);
    if (r.t.overflow || (r.rc == CURLE_OK && r.status == 200))
      remoteError(url, "the server ignores Range requests (it answered a request for bytes " + range +
                           " with the whole file); refusing to download it whole - use a server or mirror that honours Range",
                  offset);
    if (r.rc != CURLE_OK)
      remoteError(url, std::string(gaveUp ? "failed after " + std::to_string(options_.retries + 1) + " tries: " : "") + r.curlMessage, offset);
    if (r.status == 416) remoteError(url, "bytes " + range + " lie past the end of the file (HTTP 416)", offset);
    if (r.status != 206) remoteError(url, (gaveUp ? "failed after " + std::to_string(options_.retries + 1) + " tries: " : std::string()) + statusMessage(r.status), offset);
    uint64_t a = 0, b = 0, total = 0;
    if (!parseContentRange(r.t.contentRange, a, b, total) || a != offset)
      remoteError(url, "the server answered bytes " + range + " with Content-Range '" + r.t.contentRange + "'", offset);
    const uint64_t want = std::min<uint64_t>(length, total - offset);
    if (b - a + 1 != want || r.t.body.size() != b - a + 1) {
      if (shortTry < options_.retries) {  // a short read: the body ended before its Content-Range
        stats_.retries.fetch_add(1);
        continue;
      }
      remoteError(url, "short read: " + std::to_string(r.t.body.size()) + " of " + std::to_string(want) + " bytes arrived for bytes " + range, offset);
    }
    return RangeReply{std::move(r.t.body), total, r.t.etag};
  }
}

bool HttpClient::getIfPresent(const std::string& url, uint64_t maxBytes, std::string& out) {
  const Pool::Lease lease(*pool_);
  CURL* h = lease.handle;
  bool gaveUp = false;
  Outcome r = perform(h, pool_->share, options_, stats_, onProgress, url, {}, maxBytes, gaveUp);
  if (r.t.overflow) remoteError(url, "larger than the " + std::to_string(maxBytes) + " bytes allowed for it");
  if (r.rc != CURLE_OK) remoteError(url, std::string(gaveUp ? "failed after " + std::to_string(options_.retries + 1) + " tries: " : "") + r.curlMessage);
  if (r.status == 404) return false;
  if (r.status != 200) remoteError(url, (gaveUp ? "failed after " + std::to_string(options_.retries + 1) + " tries: " : std::string()) + statusMessage(r.status));
  out.assign(r.t.body.begin(), r.t.body.end());
  return true;
}

std::string HttpClient::getWhole(const std::string& url, uint64_t maxBytes) {
  std::string out;
  if (!getIfPresent(url, maxBytes, out)) remoteError(url, statusMessage(404));
  return out;
}

#endif

}  // namespace ws
