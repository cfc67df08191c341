// HTTP(S) range reads through libcurl (Debian's libcurl4-openssl-dev), for checkpoints read where
// they lie: redirects followed (the Hugging Face resolve URLs answer 302 to a CDN), connections
// kept alive and reused, retries with backoff on 5xx, 429, resets and short reads, every read
// bounded, and a server that ignores Range refused instead of downloading a whole file. Built
// only when CMake finds libcurl (WEIGHTSCOPE_HAVE_CURL), which is then opened on first use; without
// it, or when it cannot be opened, `httpAvailable()` is false and every call is an error saying so.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ws {

struct HttpOptions {
  std::string bearerToken;  // sent as "Authorization: Bearer ..." (HF_TOKEN), never logged
  int retries = 4;          // further tries of a request that failed in a way a retry can mend
  int initialBackoffMs = 100;  // doubled after each failed try
  long connectTimeoutS = 20;
  long lowSpeedTimeoutS = 60;  // abort a transfer slower than 1 byte/s for this long
  // Once set, the transfer in flight is aborted (libcurl asks about once a second, waiting or
  // not) and no retry is made: the request fails with "cancelled". Shared: every holder keeps it
  // alive, so it never dangles.
  std::shared_ptr<const std::atomic<bool>> cancel;
};

struct HttpStats {
  std::atomic<uint64_t> bytes{0};     // body bytes received
  std::atomic<uint64_t> requests{0};  // requests sent, retries included
  std::atomic<uint64_t> retries{0};
};

struct RangeReply {
  std::vector<uint8_t> bytes;  // exactly the bytes asked for, or fewer at the end of the file
  uint64_t totalSize = 0;      // the whole file's size, from Content-Range
  std::string etag;            // the ETag header, when the server sends one
};

// Whether URLs can be read: built with libcurl, and libcurl loads (curl_library.h); if not, why.
bool httpAvailable();
std::string httpUnavailableReason();

class HttpClient {
 public:
  explicit HttpClient(HttpOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Bytes [offset, offset + length) of url. Throws CoreError(Remote) naming the URL and offset:
  // 404, 401/403 (with a word on tokens), a server that answers a range request with the whole
  // file, a reply other than the range asked for, or a transfer that still fails after the retries.
  RangeReply getRange(const std::string& url, uint64_t offset, uint64_t length);
  // A whole small file (a config, an index, an API answer), refused past maxBytes.
  std::string getWhole(const std::string& url, uint64_t maxBytes);
  // As getWhole, but a 404 is "absent" (false) rather than an error: for optional side files.
  bool getIfPresent(const std::string& url, uint64_t maxBytes, std::string& out);

  const HttpStats& stats() const { return stats_; }
  // Called with the body bytes received so far, from whichever thread is reading.
  std::function<void(uint64_t)> onProgress;

 private:
  struct Pool;
  HttpOptions options_;
  HttpStats stats_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace ws
