#include "core/formats/hub_cache.h"

#include <cstdlib>
#include <filesystem>
#include <regex>

#include "core/formats/remote_open.h"
#include "core/formats/safetensors_index.h"
#include "core/io/text_file.h"
#include "core/util/error.h"

namespace ws {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool isWeightFile(const std::string& name) { return name.ends_with(".safetensors") || name.ends_with(".gguf"); }

// A folder holds the checkpoint whole: weight files, and every shard its index names.
bool holdsCheckpoint(const fs::path& dir) {
  std::error_code ec;
  const fs::path index = dir / "model.safetensors.index.json";
  if (fs::is_regular_file(index, ec)) {
    try {
      const SafetensorsIndex ix = parseSafetensorsIndex(readTextFile(index.string()), index.string());
      for (const auto& s : ix.shards)
        if (!fs::is_regular_file(dir / s, ec)) return false;  // a link into blobs/ whose blob is not there yet counts as absent
      return !ix.shards.empty();
    } catch (const CoreError&) {
      return false;  // read from the Hub instead, where the open names what is wrong
    }
  }
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (isWeightFile(e.path().filename().string()) && fs::is_regular_file(e.path(), ec)) return true;
  return false;
}

}  // namespace

std::string hubCacheDir() {
  if (std::string c = env("HF_HUB_CACHE"); !c.empty()) return c;
  if (std::string h = env("HF_HOME"); !h.empty()) return (fs::path(h) / "hub").string();
  const std::string xdg = env("XDG_CACHE_HOME");
  return (fs::path(!xdg.empty() ? xdg : (env("HOME").empty() ? "/tmp" : env("HOME")) + "/.cache") / "huggingface" / "hub").string();
}

std::optional<std::string> localHubPath(const std::string& location) {
  static const std::regex commit("[0-9a-f]{40}");
  const auto hub = parseHub(location);
  if (!hub) return std::nullopt;
  std::string folder = "models--" + hub->repo;  // ORG/REPO -> models--ORG--REPO, as huggingface_hub names it
  folder.replace(folder.find('/'), 1, "--");
  const fs::path repo = fs::path(hubCacheDir()) / folder;
  std::string rev = hub->revision;
  std::error_code ec;
  if (!std::regex_match(rev, commit)) {  // a branch or tag: the commit the cache recorded for it
    const fs::path ref = repo / "refs" / rev;
    if (!fs::is_regular_file(ref, ec)) return std::nullopt;
    try {
      rev = readTextFile(ref.string(), 4096);
    } catch (const CoreError&) {
      return std::nullopt;
    }
    while (!rev.empty() && (rev.back() == '\n' || rev.back() == '\r' || rev.back() == ' ')) rev.pop_back();
    if (!std::regex_match(rev, commit)) return std::nullopt;
  }
  fs::path at = repo / "snapshots" / rev;
  if (!hub->sub.empty()) at /= hub->sub;
  if (isWeightFile(at.filename().string())) return fs::is_regular_file(at, ec) ? std::optional(at.string()) : std::nullopt;
  if (!fs::is_directory(at, ec) || !holdsCheckpoint(at)) return std::nullopt;
  return at.string();
}

std::optional<HubSnapshot> hubSnapshotOf(const std::string& path) {
  static const std::regex re(R"((^|.*/)models--([^/]+)--([^/]+)/snapshots/([0-9a-f]{40})(/.*)?$)");
  std::smatch m;
  const std::string p = fs::absolute(path).lexically_normal().string();
  if (!std::regex_match(p, m, re)) return std::nullopt;
  return HubSnapshot{m[2].str() + "/" + m[3].str(), m[4].str()};
}

}  // namespace ws
