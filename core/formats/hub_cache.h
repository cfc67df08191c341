// The Hugging Face Hub's local cache, as huggingface_hub writes it ($HF_HUB_CACHE, else
// $HF_HOME/hub, else ~/.cache/huggingface/hub): models--ORG--REPO/refs/REV holds the commit a
// branch or tag named when it was downloaded, snapshots/COMMIT/PATH the files (links into
// blobs/). An hf:// location whose files are all there is read from there, with no request.
#pragma once

#include <optional>
#include <string>

namespace ws {

std::string hubCacheDir();

// hf://ORG/REPO[@REV][/PATH]: the snapshot folder (or file) in the local cache when it holds the
// checkpoint whole - the weight files, and every shard its index names; none otherwise.
std::optional<std::string> localHubPath(const std::string& location);

// A path inside a snapshot of the cache: the repository ("ORG/REPO") and commit it is of.
struct HubSnapshot {
  std::string repo, commit;
};
std::optional<HubSnapshot> hubSnapshotOf(const std::string& path);

}  // namespace ws
