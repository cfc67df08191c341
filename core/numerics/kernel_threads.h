// What one GPU thread of each dequantization kernel does, and the launch geometry, written once:
// kernels/device_numerics.cu's __global__ kernels only read blockIdx, threadIdx and gridDim and
// call these bodies, and tests run the same bodies for every thread of the same grid on the CPU
// (tst_decode_desc), so indexing, grid-stride loops, row offsets and launch geometry are proved
// without a device; the GPU run then only has to show the device executes the same code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

#include "core/numerics/decode_element.h"

namespace ws::num {

// A 1-D launch: `threads` per block, enough blocks to give each element a thread, at most 65535
// (past that each thread strides over several). No elements: no blocks (nothing is launched).
struct LaunchGrid {
  uint32_t blocks = 0, threads = 256;
};
WS_HD LaunchGrid launchGrid(uint64_t n) {
  LaunchGrid g;
  const uint64_t want = (n + g.threads - 1) / g.threads;
  g.blocks = uint32_t(want < 65535 ? want : 65535);
  return g;
}

// Which thread is running: its block and thread index and the grid's size.
struct ThreadIndex {
  uint64_t block, thread, blocks, threads;
  WS_HD_FN uint64_t first() const { return block * threads + thread; }
  WS_HD_FN uint64_t stride() const { return blocks * threads; }
};

// Rows [firstRow, firstRow + rows) of an element-wise description into out[(r - firstRow) * cols + j].
WS_HD void elementsThread(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, float* out, ThreadIndex t) {
  const uint64_t n = rows * d.cols;
  for (uint64_t i = t.first(); i < n; i += t.stride()) out[i] = decodeElement(d, firstRow + i / d.cols, i % d.cols);
}

// GGUF blocks [firstBlock, firstBlock + nblocks) into out[(b - firstBlock) * blockElems ...].
WS_HD void blocksThread(const DecodeDesc& d, uint64_t firstBlock, uint64_t nblocks, float* out, ThreadIndex t) {
  for (uint64_t i = t.first(); i < nblocks; i += t.stride()) decodeGgufBlock(d, firstBlock + i, out + i * d.blockElems);
}

// Rows [firstRow, firstRow + rows) as BF16, rounded to nearest even (hdToBf16Rne), for the
// preview and the load's derived buffers.
WS_HD void elementsBf16Thread(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, uint16_t* out, ThreadIndex t) {
  const uint64_t n = rows * d.cols;
  for (uint64_t i = t.first(); i < n; i += t.stride()) out[i] = hdToBf16Rne(decodeElement(d, firstRow + i / d.cols, i % d.cols));
}

WS_HD void blocksBf16Thread(const DecodeDesc& d, uint64_t firstBlock, uint64_t nblocks, uint16_t* out, ThreadIndex t) {
  for (uint64_t i = t.first(); i < nblocks; i += t.stride()) decodeGgufBlock(d, firstBlock + i, Bf16Out{out + i * d.blockElems});
}

// FP8 with a block scale grid (DeepSeek-V3, Kimi-K2 and kin), written for bandwidth: a thread takes
// 16 consecutive elements of a row - one 16-byte load of codes, one scale (16 elements never cross a
// scale block when its width is a multiple of 16), row and column from one division, 16 outputs
// stored as whole 16-byte words - instead of one element, four divisions and a byte load each.
// Out is float (F32) or uint16_t (BF16, rounded to nearest even). Needs fp8BlockVectorizable().
WS_HD bool fp8BlockVectorizable(const DecodeDesc& d) {
  return d.kind == DescKind::Fp8Scaled && d.mode == 2 && d.cols % 16 == 0 && d.bn % 16 == 0 &&
         (d.w.kind == ElemKind::E4M3 || d.w.kind == ElemKind::E5M2 || d.w.kind == ElemKind::E4M3Fnuz || d.w.kind == ElemKind::E5M2Fnuz);
}

WS_HD float hdFp8Code(ElemKind k, uint32_t x) {
  switch (k) {
    case ElemKind::E4M3: return hdE4m3ToFloat(uint8_t(x));
    case ElemKind::E5M2: return hdE5m2ToFloat(uint8_t(x));
    case ElemKind::E4M3Fnuz: return hdE4m3fnuzToFloat(uint8_t(x));
    default: return hdE5m2fnuzToFloat(uint8_t(x));
  }
}

// One output value as the low bits of a 32-bit word: F32 whole, BF16 rounded to nearest even.
WS_HD uint32_t hdOutBits(float v, float) { return hdFloatToBits(v); }
WS_HD uint32_t hdOutBits(float v, uint16_t) { return hdToBf16Rne(v); }

// `words` 32-bit words from p / to dst, as 16-byte loads and stores on the device (the rows of a
// described region, and every output run, are 16-byte aligned there).
template <int words>
WS_HD void loadWords(const uint8_t* p, uint32_t* w) {
#if defined(__CUDA_ARCH__)
  if constexpr (words == 2) {  // 8 bytes: 16 four-bit codes
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    w[0] = v.x, w[1] = v.y;
  } else {
    static_assert(words % 4 == 0);
    WS_UNROLL for (int q = 0; q < words / 4; ++q) {
      const uint4 v = reinterpret_cast<const uint4*>(p)[q];
      w[4 * q] = v.x, w[4 * q + 1] = v.y, w[4 * q + 2] = v.z, w[4 * q + 3] = v.w;
    }
  }
#else
  memcpy(w, p, 4 * words);
#endif
}

template <int words>
WS_HD void storeWords(void* dst, const uint32_t* w) {
#if defined(__CUDA_ARCH__)
  WS_UNROLL for (int q = 0; q < words / 4; ++q) reinterpret_cast<uint4*>(dst)[q] = make_uint4(w[4 * q], w[4 * q + 1], w[4 * q + 2], w[4 * q + 3]);
#else
  memcpy(dst, w, 4 * words);
#endif
}

// A run's 16 values as F32 or BF16 (hdOutBits) packed into 32-bit words and written with 16-byte
// stores: the output side every 16-values-a-thread body shares. Unrolled, v stays in registers.
template <class Out>
WS_HD void storeRun(const float* v, Out* dst) {
  constexpr int perWord = int(4 / sizeof(Out)), outWords = 16 / perWord;
  uint32_t o[outWords];
  WS_UNROLL for (int w = 0; w < outWords; ++w) o[w] = 0;
  WS_UNROLL for (int k = 0; k < 16; ++k) o[k / perWord] |= hdOutBits(v[k], Out{}) << ((k % perWord) * 8 * int(sizeof(Out)));
  storeWords<outWords>(dst, o);
}

// Four FP8 codes of one little-endian word as floats. On sm_89 and later, E4M3 and E5M2 go through
// the hardware's FP8-to-half conversion (two codes an instruction; every E4M3 and E5M2 value is
// a half exactly, and half to float is exact), the other kinds and the CPU through the bit formulas:
// the same values, NaN payloads aside (BF16 output makes every NaN 0x7FC0, hdToBf16Rne).
template <ElemKind K>
WS_HD void fp8Quad(uint32_t word, float* v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if constexpr (K == ElemKind::E4M3 || K == ElemKind::E5M2) {
    constexpr __nv_fp8_interpretation_t how = K == ElemKind::E4M3 ? __NV_E4M3 : __NV_E5M2;
    const float2 lo = __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(word & 0xFFFFu), how)));
    const float2 hi = __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(word >> 16), how)));
    v[0] = lo.x, v[1] = lo.y, v[2] = hi.x, v[3] = hi.y;
  } else
#endif
  {
    WS_UNROLL for (int k = 0; k < 4; ++k) v[k] = hdFp8Code(K, (word >> (8 * k)) & 0xFF);
  }
}

template <ElemKind K, class Out>
WS_HD void fp8Runs(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, ThreadIndex t) {
  const uint64_t runsPerRow = d.cols / 16, n = rows * runsPerRow;
  for (uint64_t i = t.first(); i < n; i += t.stride()) {
    const uint64_t r = firstRow + i / runsPerRow, j = (i % runsPerRow) * 16;
    const uint64_t b = r / d.M, row = r % d.M;
    const float s = scaleAt(d.s, (b * d.gm + row / d.bm) * d.gn + j / d.bn);
    uint32_t codes[4];
    loadWords<4>(d.w.data + r * d.cols + j, codes);
    float v[16];
    WS_UNROLL for (int q = 0; q < 4; ++q) fp8Quad<K>(codes[q], v + 4 * q);
    WS_UNROLL for (int k = 0; k < 16; ++k) v[k] = v[k] * s;
    storeRun(v, out + i * 16);
  }
}

// The element kind chosen once, outside the loop: each kind's conversion compiled on its own.
template <class Out>
WS_HD void fp8BlockVecThread(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, ThreadIndex t) {
  switch (d.w.kind) {
    case ElemKind::E4M3: fp8Runs<ElemKind::E4M3>(d, firstRow, rows, out, t); break;
    case ElemKind::E5M2: fp8Runs<ElemKind::E5M2>(d, firstRow, rows, out, t); break;
    case ElemKind::E4M3Fnuz: fp8Runs<ElemKind::E4M3Fnuz>(d, firstRow, rows, out, t); break;
    default: fp8Runs<ElemKind::E5M2Fnuz>(d, firstRow, rows, out, t); break;
  }
}

// NVFP4, MXFP4 and 4-bit packed integers (compressed-tensors, RAWINT4, MLX) 16 values a thread:
// 16 consecutive codes of a row are 8 bytes (one 8-byte load), share one scale, zero code or bias
// (codeParams, once) when their group is a multiple of 16 wide, and go out as 16-byte stores.
// g_idx (act-order) tensors and 8-bit codes stay with the element body.
WS_HD uint64_t nibbleRowBytes(const DecodeDesc& d) { return d.kind == DescKind::PackedInt ? d.packedCols * d.wordBytes : d.cols / 2; }

WS_HD bool nibbleRunsApply(const DecodeDesc& d) {
  if (d.cols % 16 || nibbleRowBytes(d) % 8) return false;
  if (d.kind == DescKind::Nvfp4 || d.kind == DescKind::MxfpBlocks) return true;
  return d.kind == DescKind::PackedInt && d.bits == 4 && !d.gidx.data && d.group % 16 == 0 && nibbleRowBytes(d) * 2 >= d.cols;
}

template <DescKind K, class Out>
WS_HD void nibbleRunsThread(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, ThreadIndex t) {
  const uint64_t runsPerRow = d.cols / 16, n = rows * runsPerRow, rowBytes = nibbleRowBytes(d);
  for (uint64_t i = t.first(); i < n; i += t.stride()) {
    const uint64_t r = firstRow + i / runsPerRow, j = (i % runsPerRow) * 16;
    const CodeParams p = codeParams(d, r, j);
    uint32_t codes[2];
    loadWords<2>(d.w.data + r * rowBytes + j / 2, codes);
    float v[16];
    WS_UNROLL for (int k = 0; k < 16; ++k) {
      const uint32_t code = (codes[k >> 3] >> ((k & 7) * 4)) & 0xF;  // element j + k: byte k / 2, low nibble first
      v[k] = K == DescKind::PackedInt ? intValue(d, p, code) : fp4Value(p, code);
    }
    storeRun(v, out + i * 16);
  }
}

// Q4_K 16 values a thread instead of a 256-value super-block (whose local array was a 1,296-byte
// stack frame): run k (0-15) of a super-block is half of sub-block k / 2, 16 bytes of its codes
// (low nibbles for even sub-blocks, high for odd) at one 16-byte load, its scale and min read with
// q4kSubScale as blocks::q4_k reads them. Neighbouring threads store neighbouring 32 or 64 bytes.
WS_HD bool q4kRunsApply(const DecodeDesc& d) { return d.kind == DescKind::GgufBlocks && d.ggmlId == 12 && d.blockElems == 256 && d.blockBytes == 144; }

template <class Out>
WS_HD void q4kRunsThread(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, ThreadIndex t) {
  const uint64_t runsPerRow = d.cols / 16, n = rows * runsPerRow, firstRun = firstRow * runsPerRow;
  for (uint64_t i = t.first(); i < n; i += t.stride()) {
    const uint64_t run = firstRun + i;
    const uint8_t* b = d.w.data + (run / 16) * d.blockBytes;
    const int k = int(run % 16), sub = k / 2, shift = (sub & 1) * 4;
    float scale, min;
    blocks::q4kSubScale(b, sub, scale, min);
    uint32_t q[4];
    loadWords<4>(b + 16 + 32 * (sub / 2) + 16 * (k & 1), q);
    float v[16];
    WS_UNROLL for (int l = 0; l < 16; ++l) v[l] = scale * float((q[l >> 2] >> ((l & 3) * 8 + shift)) & 0xF) - min;
    storeRun(v, out + i * 16);
  }
}

// The other GGUF block types that are not row-interleaved (Q4_K takes the body above; rows may
// begin with meta bytes) 16 values a thread the same way: run k of a block by the type's run formula (gguf_run_formulas.h) into registers, out as
// 16-byte stores - no block-sized array, no per-thread stack.
WS_HD bool ggufRunsApply(const DecodeDesc& d) {
  if (d.kind != DescKind::GgufBlocks || d.rowInterleave != 1) return false;
  switch (d.ggmlId) {
#define WS_GGUF_RUN_CASE(id, fn, elems, bytes) \
  case id: return !d.rowMeta && d.blockElems == (elems) && d.blockBytes == (bytes);
    WS_GGUF_RUN_TYPES(WS_GGUF_RUN_CASE)
#undef WS_GGUF_RUN_CASE
#define WS_GGUF_ROW_RUN_CASE(id, fn, elems, bytes, meta) \
  case id: return d.rowMeta == (meta) && d.blockElems == (elems) && d.blockBytes == (bytes);
    WS_GGUF_ROW_RUN_TYPES(WS_GGUF_ROW_RUN_CASE)
#undef WS_GGUF_ROW_RUN_CASE
    default: return false;
  }
}

template <class T, class Out>
WS_HD void ggufRuns(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, ThreadIndex t) {
  const uint64_t runsPerRow = d.cols / 16, n = rows * runsPerRow, firstRun = firstRow * runsPerRow;
  for (uint64_t i = t.first(); i < n; i += t.stride()) {
    const uint64_t run = firstRun + i;
    float v[16];
    T::run(d.w.data + (run / T::kRuns) * T::kBytes, int(run % T::kRuns), v);
    storeRun(v, out + i * 16);
  }
}

// Rows that begin with meta bytes: a run's row is found first, then its block in the row.
template <class T, class Out>
WS_HD void ggufRowRuns(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, ThreadIndex t) {
  const uint64_t runsPerRow = d.cols / 16, n = rows * runsPerRow, rowBytes = T::kMeta + (runsPerRow / T::kRuns) * T::kBytes;
  for (uint64_t i = t.first(); i < n; i += t.stride()) {
    const uint64_t row = firstRow + i / runsPerRow, inRow = i % runsPerRow;
    const uint8_t* meta = d.w.data + row * rowBytes;
    float v[16];
    T::run(meta, meta + T::kMeta + (inRow / T::kRuns) * T::kBytes, int(inRow % T::kRuns), v);
    storeRun(v, out + i * 16);
  }
}

// The type chosen once, outside the loop: each type's formula compiled on its own.
template <class Out>
WS_HD void ggufRunsThread(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, ThreadIndex t) {
  switch (d.ggmlId) {
#define WS_GGUF_RUN_CALL(id, fn, elems, bytes) \
  case id: ggufRuns<blocks::fn##_runs>(d, firstRow, rows, out, t); break;
    WS_GGUF_RUN_TYPES(WS_GGUF_RUN_CALL)
#undef WS_GGUF_RUN_CALL
#define WS_GGUF_ROW_RUN_CALL(id, fn, elems, bytes, meta) \
  case id: ggufRowRuns<blocks::fn##_runs>(d, firstRow, rows, out, t); break;
    WS_GGUF_ROW_RUN_TYPES(WS_GGUF_ROW_RUN_CALL)
#undef WS_GGUF_ROW_RUN_CALL
    default: break;
  }
}

// Which body decodes a tensor - the one table of it, read by the device launches, the host
// stand-in and the tests: a 16-values-a-thread body where the layout allows one, else a thread per
// element or per GGUF block.
// (Numbered in the kernels' mangled names, which scripts/sass_table.py reads: append only.)
enum class Body : uint8_t { Elements, Blocks, Fp8Runs, Fp4Runs, IntRuns, Q4kRuns, GgufRuns };

WS_HD Body bodyFor(const DecodeDesc& d) {
  if (q4kRunsApply(d)) return Body::Q4kRuns;
  if (ggufRunsApply(d)) return Body::GgufRuns;
  if (d.kind == DescKind::GgufBlocks) return Body::Blocks;
  if (fp8BlockVectorizable(d)) return Body::Fp8Runs;
  if (nibbleRunsApply(d)) return d.kind == DescKind::PackedInt ? Body::IntRuns : Body::Fp4Runs;
  return Body::Elements;
}

// Work items (threads' iterations) for `rows` rows: elements, GGUF blocks, or runs of 16.
WS_HD uint64_t workItems(Body b, const DecodeDesc& d, uint64_t rows) {
  if (b == Body::Elements) return rows * d.cols;
  if (b == Body::Blocks) return rows * (d.cols / d.blockElems);
  return rows * d.cols / 16;
}

// Rows [firstRow, firstRow + rows) into out, F32 (float) or BF16 (uint16_t), by body B.
template <Body B, class Out>
WS_HD void decodeThread(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, ThreadIndex t) {
  constexpr bool f32 = sizeof(Out) == 4;
  if constexpr (B == Body::Elements) {
    if constexpr (f32) elementsThread(d, firstRow, rows, out, t);
    else elementsBf16Thread(d, firstRow, rows, out, t);
  } else if constexpr (B == Body::Blocks) {
    const uint64_t perRow = d.cols / d.blockElems;
    if constexpr (f32) blocksThread(d, firstRow * perRow, rows * perRow, out, t);
    else blocksBf16Thread(d, firstRow * perRow, rows * perRow, out, t);
  } else if constexpr (B == Body::Fp8Runs) {
    fp8BlockVecThread(d, firstRow, rows, out, t);
  } else if constexpr (B == Body::Fp4Runs) {
    if (d.kind == DescKind::Nvfp4) nibbleRunsThread<DescKind::Nvfp4>(d, firstRow, rows, out, t);
    else nibbleRunsThread<DescKind::MxfpBlocks>(d, firstRow, rows, out, t);
  } else if constexpr (B == Body::IntRuns) {
    nibbleRunsThread<DescKind::PackedInt>(d, firstRow, rows, out, t);
  } else if constexpr (B == Body::Q4kRuns) {
    q4kRunsThread(d, firstRow, rows, out, t);
  } else {
    ggufRunsThread(d, firstRow, rows, out, t);
  }
}

// The transposed twin: `mats` row-major [rows, cols] matrices of T, each written as [cols, rows],
// a 32 x 32 tile at a time through shared memory so that both the loads and the stores are
// coalesced (a warp reads 32 consecutive elements of a source row, and writes 32 consecutive
// elements of a destination row); the tile has 33 columns so that a warp reading one of its
// columns touches 32 different banks. A block of 256 threads (8 rows of 32 lanes, 4 passes) moves
// one tile, then strides over the rest; the edge tiles of a matrix whose sides are not multiples
// of 32 move only what exists. Two phases with a barrier between them: load, then store.
constexpr uint32_t kTransposeTile = 32, kTransposeThreads = 256;

struct TransposeShape {
  uint64_t mats, rows, cols;
  WS_HD_FN uint64_t tilesDown() const { return (rows + kTransposeTile - 1) / kTransposeTile; }
  WS_HD_FN uint64_t tilesAcross() const { return (cols + kTransposeTile - 1) / kTransposeTile; }
  WS_HD_FN uint64_t tiles() const { return mats * tilesDown() * tilesAcross(); }
};

WS_HD LaunchGrid transposeGrid(const TransposeShape& s) {
  const uint64_t tiles = s.tiles();
  return LaunchGrid{uint32_t(tiles < 65535 ? tiles : 65535), kTransposeThreads};
}

// Phase `store` false: tile `index`'s source elements into `tile`; true: the tile's elements to
// their transposed places. `lane` is the thread's index in its block.
template <class T>
WS_HD void transposeTilePhase(const T* src, T* dst, T (*tile)[kTransposeTile + 1], const TransposeShape& s, uint64_t index, uint32_t lane, bool store) {
  const uint64_t perMat = s.tilesDown() * s.tilesAcross(), m = index / perMat, k = index % perMat;
  const uint64_t rowBase = (k / s.tilesAcross()) * kTransposeTile, colBase = (k % s.tilesAcross()) * kTransposeTile, per = s.rows * s.cols;
  const uint32_t x = lane % kTransposeTile, y = lane / kTransposeTile;
  for (uint32_t i = y; i < kTransposeTile; i += kTransposeThreads / kTransposeTile) {
    if (!store) {  // source row rowBase + i, column colBase + x
      if (rowBase + i < s.rows && colBase + x < s.cols) tile[i][x] = src[m * per + (rowBase + i) * s.cols + colBase + x];
    } else {  // destination row colBase + i (a source column), column rowBase + x (a source row)
      if (colBase + i < s.cols && rowBase + x < s.rows) dst[m * per + (colBase + i) * s.rows + rowBase + x] = tile[x][i];
    }
  }
}

// The whole transpose on the CPU as the device runs it: every block's tiles, all its threads'
// loads, then all their stores (the barrier), for elements of 1, 2, 4 or 8 bytes; false for any
// other size.
template <class T>
void emulateTransposeAs(const uint8_t* src, uint8_t* dst, const TransposeShape& s, LaunchGrid g) {
  T tile[kTransposeTile][kTransposeTile + 1];
  for (uint64_t b = 0; b < g.blocks; ++b)
    for (uint64_t index = b; index < s.tiles(); index += g.blocks)
      for (bool store : {false, true})
        for (uint32_t lane = 0; lane < g.threads; ++lane)
          transposeTilePhase(reinterpret_cast<const T*>(src), reinterpret_cast<T*>(dst), tile, s, index, lane, store);
}

inline bool emulateTranspose(const uint8_t* src, uint8_t* dst, const TransposeShape& s, uint32_t elemBytes, LaunchGrid g) {
  switch (elemBytes) {
    case 1: emulateTransposeAs<uint8_t>(src, dst, s, g); return true;
    case 2: emulateTransposeAs<uint16_t>(src, dst, s, g); return true;
    case 4: emulateTransposeAs<uint32_t>(src, dst, s, g); return true;
    case 8: emulateTransposeAs<uint64_t>(src, dst, s, g); return true;
    default: return false;
  }
}

// Runs a kernel body for every thread of its grid on the CPU, as the GPU would (in block and thread
// order; every body writes disjoint elements, so the order does not matter there either): what the
// host backend builds derived buffers with, and what the tests prove the geometry by.
template <class Fn>
void emulateGrid(LaunchGrid g, Fn body) {
  for (uint64_t b = 0; b < g.blocks; ++b)
    for (uint64_t t = 0; t < g.threads; ++t) body(ThreadIndex{b, t, g.blocks, g.threads});
}

// Body b over grid g on the CPU (tests pass odd grids); by default the grid a device launch uses.
template <class Out>
void emulateDecode(Body b, const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out, LaunchGrid g) {
  switch (b) {
    case Body::Elements: emulateGrid(g, [&](ThreadIndex t) { decodeThread<Body::Elements>(d, firstRow, rows, out, t); }); break;
    case Body::Blocks: emulateGrid(g, [&](ThreadIndex t) { decodeThread<Body::Blocks>(d, firstRow, rows, out, t); }); break;
    case Body::Fp8Runs: emulateGrid(g, [&](ThreadIndex t) { decodeThread<Body::Fp8Runs>(d, firstRow, rows, out, t); }); break;
    case Body::Fp4Runs: emulateGrid(g, [&](ThreadIndex t) { decodeThread<Body::Fp4Runs>(d, firstRow, rows, out, t); }); break;
    case Body::IntRuns: emulateGrid(g, [&](ThreadIndex t) { decodeThread<Body::IntRuns>(d, firstRow, rows, out, t); }); break;
    case Body::Q4kRuns: emulateGrid(g, [&](ThreadIndex t) { decodeThread<Body::Q4kRuns>(d, firstRow, rows, out, t); }); break;
    case Body::GgufRuns: emulateGrid(g, [&](ThreadIndex t) { decodeThread<Body::GgufRuns>(d, firstRow, rows, out, t); }); break;
  }
}

template <class Out>
void emulateDecode(const DecodeDesc& d, uint64_t firstRow, uint64_t rows, Out* out) {
  const Body b = bodyFor(d);
  emulateDecode(b, d, firstRow, rows, out, launchGrid(workItems(b, d, rows)));
}

}  // namespace ws::num
