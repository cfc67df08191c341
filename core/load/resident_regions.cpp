#include "core/load/resident_regions.h"

#include "core/numerics/row_footprint.h"

namespace ws::load {

void UploadedRanges::add(uint32_t file, uint64_t fileOffset, uint64_t bytes, const uint8_t* device) {
  if (!bytes) return;
  // The run that ends where this piece starts, in the file and on the device, grows by it.
  auto after = runs_.lower_bound({file, fileOffset});
  if (after != runs_.begin()) {
    auto prev = std::prev(after);
    if (prev->first.first == file && prev->second.end == fileOffset && prev->second.device + (fileOffset - prev->first.second) == device) {
      prev->second.end = fileOffset + bytes;
      // ... and may now reach the next run, which then joins it.
      if (after != runs_.end() && after->first.first == file && after->first.second == prev->second.end &&
          after->second.device == prev->second.device + (prev->second.end - prev->first.second)) {
        prev->second.end = after->second.end;
        runs_.erase(after);
      }
      return;
    }
  }
  if (after != runs_.end() && after->first.first == file && after->first.second == fileOffset + bytes && after->second.device == device + bytes) {
    const Run next = after->second;
    runs_.erase(after);
    runs_[{file, fileOffset}] = {next.end, device};
    return;
  }
  runs_[{file, fileOffset}] = {fileOffset + bytes, device};
}

const uint8_t* UploadedRanges::find(uint32_t file, uint64_t fileOffset, uint64_t bytes) const {
  auto it = runs_.upper_bound({file, fileOffset});
  if (it == runs_.begin()) return nullptr;
  --it;
  if (it->first.first != file || fileOffset + bytes > it->second.end) return nullptr;
  return it->second.device + (fileOffset - it->first.second);
}

std::optional<num::DecodeDesc> onUploadedBytes(const Checkpoint& c, const num::DecodeDesc& d, uint64_t first, uint64_t n, const UploadedRanges& uploaded) {
  if (d.kind == num::DescKind::Kt) return std::nullopt;
  num::DecodeDesc out = d;
  auto rebase = [&](num::Region& r, const num::Region& as) {
    if (!as.data || !as.bytes) return true;  // not part of this description
    const num::ByteSpan span = num::regionRowSpan(d, as, first, n);
    const uint8_t* at = as.data + span.from;
    for (uint32_t f = 0; f < c.files.size(); ++f) {
      const auto& map = c.files[f].map;
      if (!map || at < map->bytes().data() || at >= map->bytes().data() + map->size()) continue;
      const uint8_t* device = uploaded.find(f, uint64_t(at - map->bytes().data()), span.bytes);
      if (!device) return false;
      r.data = device - span.from;  // indexed from the region's start, as the formulas do
      return true;
    }
    return false;  // not in a checkpoint file (a table the decoder made): stage it
  };
  for (auto [r, as] : {std::pair{&out.w, &d.w}, std::pair{&out.s, &d.s}, std::pair{&out.g, &d.g}, std::pair{&out.zp, &d.zp}, std::pair{&out.gidx, &d.gidx},
                       std::pair{&out.nestedMap, &d.nestedMap}})
    if (!rebase(*r, *as)) return std::nullopt;
  return out;
}

}  // namespace ws::load
