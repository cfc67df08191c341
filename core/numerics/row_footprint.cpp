#include "core/numerics/row_footprint.h"

#include <algorithm>

namespace ws::num {

namespace {

struct Piece {
  const uint8_t* data;
  uint64_t bytes;
};

void whole(const Region& r, std::vector<Piece>& out) {
  if (r.data && r.bytes) out.push_back({r.data, r.bytes});
}

// A region the decoder reads row by row, every row the same size: the rows' slice. One whose size
// is no multiple of the rows cannot be that, and is named whole.
void rowsOf(const Region& r, uint64_t rows, uint64_t first, uint64_t n, std::vector<Piece>& out) {
  if (!r.data || !r.bytes) return;
  if (rows == 0 || r.bytes % rows) return whole(r, out);
  const uint64_t each = r.bytes / rows;
  out.push_back({r.data + first * each, n * each});
}

// FP8 block scales: every bm rows of each [M, cols] matrix share one row of gn scales, so the
// scale rows of consecutive rows are consecutive (Fp8ScaledDecoder's key).
void blockScalesOf(const DecodeDesc& d, uint64_t first, uint64_t n, std::vector<Piece>& out) {
  const Region& s = d.s;
  if (!s.data || !s.count || s.bytes % s.count || !d.M || !d.bm) return whole(s, out);
  auto key = [&](uint64_t r) { return (r / d.M) * d.gm + (r % d.M) / d.bm; };
  const uint64_t from = key(first) * d.gn, to = (key(first + n - 1) + 1) * d.gn, each = s.bytes / s.count;
  if (to > s.count) return whole(s, out);
  out.push_back({s.data + from * each, (to - from) * each});
}

// What decoding rows [first, first + n) reads of each region, by the decoder kind's layout
// (core/numerics/dequant.cpp, whose decode loops index these regions).
std::vector<Piece> piecesOf(const DecodeDesc& d, uint64_t first, uint64_t n) {
  std::vector<Piece> out;
  switch (d.kind) {
    case DescKind::Plain:
      rowsOf(d.w, d.rows, first, n, out);
      break;
    case DescKind::GgufBlocks: {  // a block's scales sit inside it: rows of blocks, whole groups of interleaved rows
      const uint64_t R = d.rowInterleave ? d.rowInterleave : 1, from = first / R * R, to = (first + n + R - 1) / R * R;
      rowsOf(d.w, d.rows, from, std::min(to, d.rows) - from, out);
      break;
    }
    case DescKind::Fp8Scaled:
      rowsOf(d.w, d.rows, first, n, out);
      if (d.mode == 1) rowsOf(d.s, d.rows, first, n, out);  // one scale per row
      else if (d.mode == 2) blockScalesOf(d, first, n, out);
      else whole(d.s, out);  // per tensor, or one per expert
      break;
    case DescKind::Nvfp4:
      rowsOf(d.w, d.rows, first, n, out);
      rowsOf(d.s, d.rows, first, n, out);  // one per 16 elements of the row
      whole(d.g, out);
      break;
    case DescKind::MxfpBlocks:
      rowsOf(d.w, d.rows, first, n, out);
      rowsOf(d.s, d.rows, first, n, out);  // one per 32 elements of the row
      break;
    case DescKind::PackedInt:
      rowsOf(d.w, d.rows, first, n, out);
      if (d.s.count == 1) whole(d.s, out);
      else rowsOf(d.s, d.rows, first, n, out);  // groups of the row
      if (d.zpPacked) whole(d.zp, out);  // packed along the rows: eight rows share a word
      else rowsOf(d.zp, d.rows, first, n, out);
      whole(d.gidx, out);  // indexed by column
      break;
    case DescKind::Kt:
      break;  // each NUMA part holds a slice of the rows with its own layout: named whole below
    case DescKind::GptqAwq:
    case DescKind::Bnb4:
      break;  // codes packed across the logical rows, scales by column or by flat block: whole
    case DescKind::Int8Rows:
      rowsOf(d.w, d.rows, first, n, out);
      rowsOf(d.s, d.rows, first, n, out);  // one SCB per row
      break;
  }
  return out;
}

}  // namespace

ByteSpan regionRowSpan(const DecodeDesc& d, const Region& r, uint64_t first, uint64_t n) {
  if (n)
    for (const Piece& p : piecesOf(d, first, n))
      if (r.data && p.data >= r.data && p.data < r.data + r.bytes) return {uint64_t(p.data - r.data), std::min(p.bytes, r.bytes - uint64_t(p.data - r.data))};
  return {0, r.bytes};
}

std::vector<StoredSpan> rowFootprint(const Checkpoint& c, const DequantRequest& req) {
  auto layout = makeLayoutDecoder(c, req.logical);
  if (!layout) throw CoreError(layout.error());
  return rowFootprint(c, *layout.value(), req);
}

std::vector<StoredSpan> rowFootprint(const Checkpoint& c, const RowDecoder& d, const DequantRequest& req) {
  const Selection sel = selectRows(d, req, c.logical[req.logical].name);
  const std::vector<Piece> pieces = sel.rows ? piecesOf(d.describe(), sel.firstRow, sel.rows) : std::vector<Piece>{};
  std::vector<StoredSpan> out;
  for (uint32_t m : c.logical[req.logical].members) {
    const TensorRecord& t = c.tensors[m];
    if (!t.bytes) continue;
    const auto& map = c.files[t.file].map;
    size_t named = out.size();
    if (map && !t.cut && t.offset <= map->size() && t.bytes <= map->size() - t.offset) {
      const uint8_t* base = map->bytes().data() + t.offset;
      for (const Piece& p : pieces)
        if (p.data >= base && p.data < base + t.bytes) {
          const uint64_t at = uint64_t(p.data - base);
          out.push_back({m, t.offset + at, std::min(p.bytes, t.bytes - at)});
        }
    }
    if (out.size() == named) out.push_back({m, t.offset, t.bytes});  // not read by rows: all of it
  }
  return out;
}

}  // namespace ws::num
