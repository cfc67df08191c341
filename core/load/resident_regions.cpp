#include "core/load/resident_regions.h"

#include <algorithm>

#include "core/numerics/row_footprint.h"

namespace ws::load {

UploadedRanges::UploadedRanges(std::vector<Piece> pieces) {
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.file != b.file ? a.file < b.file : a.fileOffset < b.fileOffset; });
  for (const Piece& p : pieces) {
    if (!p.bytes) continue;
    Piece* last = runs_.empty() ? nullptr : &runs_.back();
    if (last && last->file == p.file && last->fileOffset + last->bytes == p.fileOffset && last->device + last->bytes == p.device) last->bytes += p.bytes;
    else runs_.push_back(p);
  }
}

const uint8_t* UploadedRanges::find(uint32_t file, uint64_t fileOffset, uint64_t bytes) const {
  // The last run starting at or before the offset, in that file.
  auto it = std::upper_bound(runs_.begin(), runs_.end(), std::pair{file, fileOffset},
                             [](const std::pair<uint32_t, uint64_t>& k, const Piece& r) { return k.first != r.file ? k.first < r.file : k.second < r.fileOffset; });
  if (it == runs_.begin()) return nullptr;
  --it;
  if (it->file != file || fileOffset + bytes > it->fileOffset + it->bytes) return nullptr;
  return it->device + (fileOffset - it->fileOffset);
}

std::optional<num::DecodeDesc> onUploadedBytes(const Checkpoint& c, uint32_t logical, const num::DecodeDesc& d, uint64_t first, uint64_t n,
                                               const UploadedRanges& uploaded) {
  if (d.kind == num::DescKind::Kt) return std::nullopt;
  num::DecodeDesc out = d;
  auto rebase = [&](num::Region& r, const num::Region& as) {
    if (!as.data || !as.bytes) return true;  // not part of this description
    const num::ByteSpan span = num::regionRowSpan(d, as, first, n);
    const uint8_t* at = as.data + span.from;
    for (uint32_t m : c.logical[logical].members) {  // the member the region reads, as rowFootprint finds it
      const TensorRecord& t = c.tensors[m];
      const auto& map = c.files[t.file].map;
      if (!map || t.offset > map->size()) continue;
      const uint8_t* base = map->bytes().data() + t.offset;
      if (at < base || at >= base + t.bytes) continue;
      const uint8_t* device = uploaded.find(t.file, t.offset + uint64_t(at - base), span.bytes);
      if (!device) return false;
      r.data = device - span.from;  // indexed from the region's start, as the formulas do
      return true;
    }
    return false;  // not in a stored member (a table the decoder made): stage it
  };
  for (auto [r, as] : {std::pair{&out.w, &d.w}, std::pair{&out.s, &d.s}, std::pair{&out.g, &d.g}, std::pair{&out.zp, &d.zp}, std::pair{&out.gidx, &d.gidx},
                       std::pair{&out.nestedMap, &d.nestedMap}})
    if (!rebase(*r, *as)) return std::nullopt;
  return out;
}

}  // namespace ws::load
