#include "core/validate/expert_fingerprints.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include "core/io/mapped_file.h"
#include "core/io/mapped_read_guard.h"
#include "core/numerics/mapped_reads.h"
#include "core/numerics/remote_reads.h"

#ifdef WEIGHTSCOPE_HAVE_XXHASH
#include <xxhash.h>
#endif

namespace ws::val {

namespace {

constexpr uint64_t kWindow = 4096, kWindows = 4;

// Chains `bytes` onto `seed`: XXH3 seeded with the hash so far; std::hash's bytes otherwise.
uint64_t hashOn(uint64_t seed, const uint8_t* bytes, uint64_t n) {
#ifdef WEIGHTSCOPE_HAVE_XXHASH
  return XXH3_64bits_withSeed(bytes, size_t(n), seed);
#else
  const uint64_t h = std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(bytes), size_t(n)));
  return h ^ (seed * 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
#endif
}

// Experts of one layer grouped by the fingerprints of all their projections; each group of two
// or more, with the prints of each expert (by expert, then projection).
std::vector<std::vector<std::vector<const ExpertPrint*>>> alike(const std::vector<ExpertPrint>& prints) {
  std::map<std::pair<int32_t, int64_t>, std::vector<const ExpertPrint*>> experts;
  for (const ExpertPrint& p : prints) experts[{p.layer, p.expert}].push_back(&p);
  std::map<std::pair<int32_t, std::string>, std::vector<std::vector<const ExpertPrint*>>> groups;
  for (auto& [at, ps] : experts) {
    std::sort(ps.begin(), ps.end(), [](auto* a, auto* b) { return a->projection < b->projection; });
    std::string key;
    for (const ExpertPrint* p : ps) key += p->projection + ":" + std::to_string(p->hash) + ";";
    groups[{at.first, key}].push_back(ps);
  }
  std::vector<std::vector<std::vector<const ExpertPrint*>>> out;
  for (auto& [key, g] : groups)
    if (g.size() >= 2) out.push_back(std::move(g));
  return out;
}

}  // namespace

std::optional<uint64_t> fingerprintExpert(const Checkpoint& c, const LogicalTensor& l, uint64_t e, uint64_t slices, bool whole, num::ByteCounter* counter) {
  uint64_t h = slices;
  uint8_t window[kWindow * kWindows];
  for (uint32_t mi : l.members) {
    const TensorRecord& t = c.tensors[mi];
    const auto& map = c.files[size_t(t.file)].map;
    if (!map || t.offset + t.bytes > map->bytes().size()) return std::nullopt;
    const bool sliced = slices > 1 && t.bytes % slices == 0;
    const uint64_t n = sliced ? t.bytes / slices : t.bytes;
    const uint64_t at = t.offset + (sliced ? e * n : 0);
    if (whole) {  // a candidate's every byte, through the mapping (MappedReadGuard covers a cut file)
      h = hashOn(h, map->bytes().data() + at, n);
      continue;
    }
    // The windows by pread (MappedFile::readAt), not through the mapping: a few KiB of each of
    // thousands of tensors cost more in page faults and their unmapping than in hashing
    // (docs/benchmarks.md, expert health). A failed read throws CoreError naming file and offset.
    if (n <= kWindow * kWindows) {
      map->readAt(at, window, n);
      if (counter) counter->add(n);
      h = hashOn(h, window, n);
      continue;
    }
    for (uint64_t w = 0; w < kWindows; ++w) {
      map->readAt(at + w * ((n - kWindow) / (kWindows - 1)), window, kWindow);
      if (counter) counter->add(kWindow);
      h = hashOn(h, window, kWindow);
    }
  }
  return h;
}

void judgeDuplicateExperts(const Checkpoint& c, std::vector<ExpertPrint> prints, Sink& sink) {
  // Candidates: experts whose samples agree. Their prints again, of every byte.
  std::vector<ExpertPrint> whole;
  std::set<uint32_t> logical;
  for (const auto& group : alike(prints))
    for (const auto& expert : group)
      for (const ExpertPrint* p : expert) whole.push_back(*p), logical.insert(p->logical);
  if (whole.empty()) return;
  if (c.remote) num::fetchWhole(c, std::vector<uint32_t>(logical.begin(), logical.end()));
  MappedReadGuard guard;
  std::set<uint32_t> unread;  // a file cut under the scan: those experts are WS-I024's
  for (ExpertPrint& p : whole) {
    const LogicalTensor& l = c.logical[p.logical];
    const auto h = fingerprintExpert(c, l, p.slice, p.slices, true);
    try {
      num::checkMappedReads(guard, c, l);
    } catch (const CoreError&) {
      unread.insert(p.logical);
    }
    if (!h) unread.insert(p.logical);
    p.hash = h.value_or(0);
  }
  std::erase_if(whole, [&](const ExpertPrint& p) { return unread.count(p.logical) > 0; });
  for (const auto& group : alike(whole)) {
    std::string list, projections;
    for (size_t i = 0; i < group.size(); ++i) list += (i ? (i + 1 == group.size() ? " and " : ", ") : "") + std::to_string(group[i].front()->expert);
    for (const ExpertPrint* p : group[1]) projections += (projections.empty() ? "" : ", ") + p->projection;
    sink.add("WS-V013", "experts " + list + " of layer " + std::to_string(group[1].front()->layer) + " are byte-identical (" + projections + ")", group[1].front()->tensor);
  }
}

}  // namespace ws::val
