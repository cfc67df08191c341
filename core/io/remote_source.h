// Where a remote checkpoint's bytes come from, and which of them are here. A remote checkpoint is
// opened through a local mirror folder (core/formats/remote_open): its small files whole, and each
// weight file as a sparse file of the remote size holding only what was fetched - the header at
// first. Everything above reads the mirror as it reads a local checkpoint; code that needs tensor
// bytes asks `ensure` for them first, and the decoders refuse bytes that were never fetched.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/io/http_client.h"
#include "core/io/mirror_lock.h"

namespace ws {

struct RemoteFile {
  std::string name;  // its name in the mirror folder
  std::string url;
  uint64_t size = 0;
  std::string etag;
};

class RemoteSource {
 public:
  RemoteSource(std::string location, std::string mirror, std::shared_ptr<HttpClient> http, bool temporary);
  // Gives the tensor bytes back: a temporary mirror is removed; a cached one is punched back to
  // its headers (and kept ranges) by the last process using it, the others leave it as it is.
  ~RemoteSource();
  // A cached mirror: the lock this source holds (shared) while it reads the mirror.
  void holdLock(std::unique_ptr<MirrorLock> lock) { lock_ = std::move(lock); }

  const std::string& location() const { return location_; }  // what the user named
  const std::string& mirror() const { return mirror_; }
  std::string revision;        // hf://: the commit the files were read at
  bool fromCache = false;      // the mirror was there already: opened without the network
  std::vector<RemoteFile> files;  // weight files
  std::vector<std::string> sideFiles;  // configs and tokenizer files fetched whole

  // The file a mirror path stands for; nullptr when it is not one of the weight files.
  const RemoteFile* fileFor(const std::string& mirrorPath) const;
  // Marks [offset, offset + n) of a mirror file as present (the header written at mirror time).
  void markPresent(const std::string& mirrorPath, uint64_t offset, uint64_t n);
  bool present(const std::string& mirrorPath, uint64_t offset, uint64_t n) const;
  // True when any fetched byte lies in [offset, offset + n): the range was asked for, whole or in part.
  bool touched(const std::string& mirrorPath, uint64_t offset, uint64_t n) const;
  // Fetches the ranges not yet present, several requests at once, into the mirror file. Throws
  // CoreError(Remote) naming the URL and offset.
  struct Range {
    std::string path;
    uint64_t offset, length;
  };
  // `keep`: small tensors the open itself reads (weight_shape), kept in the cached mirror and its
  // manifest so that the next open needs no request; anything else goes back to holes at the end.
  void ensure(const std::vector<Range>& ranges, bool keep = false);

  // Tensor bytes one ensure may fetch before it refuses (the headers are not counted), and who
  // hears how far it got.
  uint64_t budget = UINT64_MAX;
  std::function<void(const char* stage, uint64_t done, uint64_t total)> progress;

  uint64_t bytesFetched() const { return http_ ? http_->stats().bytes.load() : 0; }
  uint64_t requests() const { return http_ ? http_->stats().requests.load() : 0; }

 private:
  std::string location_, mirror_;
  std::shared_ptr<HttpClient> http_;
  bool temporary_;
  std::unique_ptr<MirrorLock> lock_;
  mutable std::mutex mu_;
  std::map<std::string, std::map<uint64_t, uint64_t>> present_;  // path -> begin -> end, disjoint
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> dataWritten_;  // to give back
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> kept_;         // for the manifest
};

}  // namespace ws
