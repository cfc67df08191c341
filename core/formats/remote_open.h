// Opening a checkpoint where it lies, without downloading its weights: hf://ORG/REPO[@REV][/SUBDIR]
// (the file list from the Hub API, files from its resolve URLs; HF_ENDPOINT, HF_TOKEN or the
// token file the Hugging Face CLI writes), a plain http(s) URL of a .safetensors, .gguf or
// model.safetensors.index.json, or a URL folder ending in '/'. The files are mirrored into a
// local folder (core/io/remote_source.h): configs and tokenizer files whole, weight files sparse
// with their headers only. The mirror is the header cache: kept under $XDG_CACHE_HOME/weightscope
// (bounded, headers only) and opened again without the network, unless told not to.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/io/remote_source.h"

namespace ws {

bool isRemoteLocation(const std::string& path);

// hf://ORG/REPO[@REV][/SUBDIR], split (revision "main" when none); none when it is not that.
struct HubLocation {
  std::string repo, revision, sub;
  std::string api() const;  // the model API's answer for this revision ($HF_ENDPOINT)
  std::string resolve(const std::string& rev, const std::string& path) const;  // a file's URL at rev
};
std::optional<HubLocation> parseHub(const std::string& location);

struct RemoteOptions {
  bool useCache = true;      // false: a temporary mirror, fetched anew and removed afterwards
  std::string cacheDir;      // empty: $XDG_CACHE_HOME/weightscope/remote (or ~/.cache/...)
  // Under --distributed, this process's MPI rank: its mirrors lie in a cache of its own (beside
  // the shared one, remote-rank-N). Ranks on one node, or on nodes sharing a home, would
  // otherwise rename the same mirror into place under each other and give back (punch out)
  // bytes another rank still reads.
  int rank = -1;
  uint64_t cacheLimit = uint64_t(2) << 30;  // header bytes the cache keeps before it drops the oldest
  uint64_t fetchBudget = uint64_t(8) << 30;  // tensor bytes one command may fetch (--max-fetch)
  // Called as headers and tensor bytes arrive: ("fetching headers", files done, files) and
  // ("fetching tensor bytes", bytes done, bytes).
  std::function<void(const char* stage, uint64_t done, uint64_t total)> progress;
  // The GUI's Cancel: once set, the open stops - the request in flight aborted, no other made -
  // with CoreError(Remote, "cancelled"), its partial mirror removed. The connection keeps it, so a
  // checkpoint whose open was cancelled late fetches nothing more either.
  std::shared_ptr<const std::atomic<bool>> cancel;
};
// Process-wide, set by the command line (--no-cache) before anything is opened.
RemoteOptions& remoteOptions();

// The mirror of `location`, made now or found in the cache. Throws CoreError(Remote) naming the
// URL: a missing repository or file, a refusal without a token, a server that ignores Range.
std::shared_ptr<RemoteSource> openRemote(const std::string& location, const RemoteOptions& options);

// The Hub's own record of the files of an hf://ORG/REPO[@REV][/FOLDER] location (that folder's
// files, not deeper ones): each file's size, the sha256 of an LFS file and the git blob SHA-1 of
// every file (the model API with ?blobs=true, as huggingface_hub's files_metadata asks for it).
// Throws CoreError(Remote) naming the API URL.
struct HubFileRecord {
  std::string name;
  uint64_t size = 0;
  bool sized = false;  // the Hub gave a size
  std::string sha256, blobSha1;
};
struct HubRecord {
  std::string location, repo, commit;
  std::vector<HubFileRecord> files;
};
HubRecord hubRecord(const std::string& location);

}  // namespace ws
