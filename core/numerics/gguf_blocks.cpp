#include "core/numerics/gguf_blocks.h"


#include "core/numerics/gguf_block_formulas.h"

namespace ws::num {

namespace {

using namespace blocks;

using RunFn = void (*)(const uint8_t*, uint64_t, float*);

#define WS_RUNNER(fn, elems, bytes)                                                  \
  __attribute__((target_clones("avx2", "default"))) void run_##fn(const uint8_t* src, uint64_t n, float* dst) { \
    for (uint64_t i = 0; i < n; ++i) fn(src + i * (bytes), dst + i * (elems));       \
  }
WS_RUNNER(q4_0, 32, 18)
WS_RUNNER(q4_1, 32, 20)
WS_RUNNER(q5_0, 32, 22)
WS_RUNNER(q5_1, 32, 24)
WS_RUNNER(q8_0, 32, 34)
WS_RUNNER(q8_1, 32, 36)
WS_RUNNER(q2_k, 256, 84)
WS_RUNNER(q3_k, 256, 110)
WS_RUNNER(q4_k, 256, 144)
WS_RUNNER(q5_k, 256, 176)
WS_RUNNER(q6_k, 256, 210)
WS_RUNNER(q8_k, 256, 292)
WS_RUNNER(iq4_nl, 32, 18)
WS_RUNNER(iq4_xs, 256, 136)
WS_RUNNER(iq2_xxs, 256, 66)
WS_RUNNER(iq2_xs, 256, 74)
WS_RUNNER(iq2_s, 256, 82)
WS_RUNNER(iq3_xxs, 256, 98)
WS_RUNNER(iq3_s, 256, 110)
WS_RUNNER(iq1_s, 256, 50)
WS_RUNNER(iq1_m, 256, 56)
WS_RUNNER(tq1_0, 256, 54)
WS_RUNNER(tq2_0, 256, 66)
WS_RUNNER(mxfp4, 32, 17)
WS_RUNNER(nvfp4, 64, 36)
WS_RUNNER(q1_0, 128, 18)
WS_RUNNER(q2_0, 64, 18)
WS_RUNNER(q6_0, 32, 26)
WS_RUNNER(iq2_k, 256, 76)
WS_RUNNER(iq3_k, 256, 110)
WS_RUNNER(iq4_k, 256, 144)
WS_RUNNER(iq5_k, 256, 176)
// IQ6_K's fused cubic (fmaf) needs the FMA instruction, which the avx2 clone lacks (there fmaf is a
// libm call, 7x slower than ik_llama.cpp's own to_float): an FMA clone has it. Contraction stays
// off in this file, so the clone changes no other operation.
#define WS_FMA_RUNNER(fn, elems, bytes)                                                                                   \
  __attribute__((target_clones("fma", "default"))) void run_##fn(const uint8_t* src, uint64_t n, float* dst) { \
    for (uint64_t i = 0; i < n; ++i) fn(src + i * (bytes), dst + i * (elems));                                           \
  }
WS_FMA_RUNNER(iq6_k, 256, 212)

// Types whose rows carry meta bytes before their blocks (ik_llama.cpp's row scales): one row at a time.
using RowFn = void (*)(const uint8_t*, const uint8_t*, uint64_t, float*);
#define WS_ROW_RUNNER(fn, elems, bytes, meta)                                                                       \
  __attribute__((target_clones("avx2", "default"))) void row_##fn(const uint8_t* row, const uint8_t*, uint64_t n, float* dst) { \
    for (uint64_t i = 0; i < n; ++i) fn(row, row + (meta) + i * (bytes), dst + i * (elems));                       \
  }
WS_ROW_RUNNER(iq4_ks, 256, 136, 4)
WS_ROW_RUNNER(iq5_ks, 256, 168, 4)
WS_ROW_RUNNER(iq2_ks, 256, 70, 2)
WS_ROW_RUNNER(iq4_kss, 256, 128, 4)
WS_ROW_RUNNER(iq3_ks, 256, 102, 2)
WS_ROW_RUNNER(iq2_kl, 256, 86, 2)
WS_ROW_RUNNER(iq1_kt, 256, 56, 4)
WS_ROW_RUNNER(iq2_kt, 256, 68, 4)
WS_ROW_RUNNER(iq3_kt, 256, 100, 4)
WS_ROW_RUNNER(iq4_kt, 256, 128, 4)
WS_ROW_RUNNER(iq1_bn, 64, 13, 2)
WS_ROW_RUNNER(iq2_bn, 64, 16, 4)

// Row-interleaved types (ik_llama.cpp's _R4 / _R8): row k of a group from each of its column
// blocks, the block formula given the group's row meta, the block's group of R blocks and k.
using InterleavedFn = void (*)(const uint8_t*, uint64_t, int, float*);
#define WS_INTERLEAVED_RUNNER(fn, R, elems, bytes, meta)                                                                            \
  __attribute__((target_clones("avx2", "default"))) void interleaved_##fn(const uint8_t* group, uint64_t n, int k, float* dst) { \
    for (uint64_t i = 0; i < n; ++i) fn(group, group + (R) * (meta) + i * (R) * (bytes), k, dst + i * (elems));                   \
  }
WS_INTERLEAVED_RUNNER(q8_0_r8, 8, 32, 34, 0)
WS_INTERLEAVED_RUNNER(q6_k_r4, 4, 256, 210, 0)
WS_INTERLEAVED_RUNNER(iq4_xs_r8, 8, 256, 136, 0)
WS_INTERLEAVED_RUNNER(iq2_k_r4, 4, 256, 76, 0)
WS_INTERLEAVED_RUNNER(iq3_k_r4, 4, 256, 110, 0)
WS_INTERLEAVED_RUNNER(iq4_k_r4, 4, 256, 144, 0)
WS_INTERLEAVED_RUNNER(iq5_k_r4, 4, 256, 176, 0)
WS_INTERLEAVED_RUNNER(iq4_ks_r4, 4, 256, 136, 4)
WS_INTERLEAVED_RUNNER(iq5_ks_r4, 4, 256, 168, 4)
WS_INTERLEAVED_RUNNER(q4_k_r4, 4, 256, 144, 0)
WS_INTERLEAVED_RUNNER(q4_0_r8, 8, 32, 18, 0)
WS_INTERLEAVED_RUNNER(q5_0_r4, 4, 32, 22, 0)
WS_INTERLEAVED_RUNNER(iq4_nl_r4, 4, 32, 18, 0)
WS_INTERLEAVED_RUNNER(q6_0_r4, 4, 32, 26, 0)
WS_INTERLEAVED_RUNNER(iq2_bn_r4, 4, 64, 16, 4)
WS_INTERLEAVED_RUNNER(mxfp4_r8, 8, 32, 17, 0)
WS_INTERLEAVED_RUNNER(q8_k_r16, 16, 256, 258, 0)
WS_INTERLEAVED_RUNNER(bf16_r16, 16, 1, 2, 0)
WS_INTERLEAVED_RUNNER(q8_kv_r8, 8, 32, 32, 4)
WS_INTERLEAVED_RUNNER(q8_k_r8, 8, 256, 258, 0)
WS_INTERLEAVED_RUNNER(q2_k_r4, 4, 256, 84, 0)
WS_INTERLEAVED_RUNNER(q3_k_r4, 4, 256, 110, 0)
WS_INTERLEAVED_RUNNER(q5_k_r4, 4, 256, 176, 0)
WS_INTERLEAVED_RUNNER(iq2_xxs_r4, 4, 256, 66, 0)
WS_INTERLEAVED_RUNNER(iq2_xs_r4, 4, 256, 74, 0)
WS_INTERLEAVED_RUNNER(iq3_xxs_r4, 4, 256, 98, 0)
WS_INTERLEAVED_RUNNER(iq1_s_r4, 4, 32, 6, 2)
WS_INTERLEAVED_RUNNER(iq3_s_r4, 4, 256, 110, 0)
WS_INTERLEAVED_RUNNER(iq2_s_r4, 4, 256, 82, 0)
WS_INTERLEAVED_RUNNER(iq1_m_r4, 4, 32, 7, 2)

InterleavedFn interleavedFn(int id) {
  switch (id) {
    case 208: return interleaved_q8_0_r8;
    case 212: return interleaved_q4_k_r4;
    case 214: return interleaved_q6_k_r4;
    case 223: return interleaved_iq4_xs_r8;
    case 337: return interleaved_iq2_k_r4;
    case 338: return interleaved_iq3_k_r4;
    case 339: return interleaved_iq4_k_r4;
    case 340: return interleaved_iq5_k_r4;
    case 344: return interleaved_iq4_ks_r4;
    case 352: return interleaved_iq5_ks_r4;
    case 202: return interleaved_q4_0_r8;
    case 206: return interleaved_q5_0_r4;
    case 220: return interleaved_iq4_nl_r4;
    case 233: return interleaved_q6_0_r4;
    case 335: return interleaved_iq2_bn_r4;
    case 353: return interleaved_mxfp4_r8;
    case 397: return interleaved_q8_k_r16;
    case 230: return interleaved_bf16_r16;
    case 398: return interleaved_q8_kv_r8;
    case 399: return interleaved_q8_k_r8;
    case 210: return interleaved_q2_k_r4;
    case 211: return interleaved_q3_k_r4;
    case 213: return interleaved_q5_k_r4;
    case 216: return interleaved_iq2_xxs_r4;
    case 217: return interleaved_iq2_xs_r4;
    case 218: return interleaved_iq3_xxs_r4;
    case 219: return interleaved_iq1_s_r4;
    case 221: return interleaved_iq3_s_r4;
    case 222: return interleaved_iq2_s_r4;
    case 229: return interleaved_iq1_m_r4;
    default: return nullptr;
  }
}

RowFn rowFn(int id) {
  switch (id) {
    case 144: return row_iq4_ks;
    case 152: return row_iq5_ks;
    case 145: return row_iq2_ks;
    case 146: return row_iq4_kss;
    case 156: return row_iq3_ks;
    case 157: return row_iq2_kl;
    case 158: return row_iq1_kt;
    case 153: return row_iq2_kt;
    case 154: return row_iq3_kt;
    case 155: return row_iq4_kt;
    case 134: return row_iq1_bn;
    case 135: return row_iq2_bn;
    default: return nullptr;
  }
}

RunFn runFn(int id) {
  switch (id) {
    case 2: return run_q4_0;
    case 3: return run_q4_1;
    case 6: return run_q5_0;
    case 7: return run_q5_1;
    case 8: return run_q8_0;
    case 9: return run_q8_1;
    case 10: return run_q2_k;
    case 11: return run_q3_k;
    case 12: return run_q4_k;
    case 13: return run_q5_k;
    case 14: return run_q6_k;
    case 15: return run_q8_k;
    case 16: return run_iq2_xxs;
    case 17: return run_iq2_xs;
    case 18: return run_iq3_xxs;
    case 19: return run_iq1_s;
    case 20: return run_iq4_nl;
    case 21: return run_iq3_s;
    case 22: return run_iq2_s;
    case 23: return run_iq4_xs;
    case 29: return run_iq1_m;
    case 34: return run_tq1_0;
    case 35: return run_tq2_0;
    case 39: return run_mxfp4;
    case 40: return run_nvfp4;
    case 41: return run_q1_0;
    case 42: return run_q2_0;
    case 133: return run_q6_0;
    case 137: return run_iq2_k;
    case 138: return run_iq3_k;
    case 139: return run_iq4_k;
    case 140: return run_iq5_k;
    case 141: return run_iq6_k;
    default: return nullptr;
  }
}

}  // namespace

bool ggufBlockTypeSupported(const DType& t) {
  if (!t.isBlockQuant()) return false;
  if (t.rowInterleave > 1) return interleavedFn(t.ggmlId) != nullptr;
  return t.rowMetaBytes ? rowFn(t.ggmlId) != nullptr : runFn(t.ggmlId) != nullptr;
}

void dequantizeGgufBlocks(const DType& t, const uint8_t* src, uint64_t nblocks, float* dst) { runFn(t.ggmlId)(src, nblocks, dst); }

void dequantizeGgufRows(const DType& t, const uint8_t* src, uint64_t rows, uint64_t cols, float* dst) {
  const uint64_t blocks = cols / t.blockElems, rowBytes = t.rowMetaBytes + blocks * t.blockBytes;
  if (!t.rowMetaBytes) return dequantizeGgufBlocks(t, src, rows * blocks, dst);
  const RowFn fn = rowFn(t.ggmlId);
  for (uint64_t r = 0; r < rows; ++r) fn(src + r * rowBytes, nullptr, blocks, dst + r * cols);
}

void dequantizeGgufInterleavedRows(const DType& t, const uint8_t* base, uint64_t first, uint64_t n, uint64_t cols, float* dst) {
  const uint64_t R = t.rowInterleave, blocks = cols / t.blockElems, rowBytes = t.rowMetaBytes + blocks * t.blockBytes;
  const InterleavedFn fn = interleavedFn(t.ggmlId);
  for (uint64_t r = first; r < first + n; ++r) fn(base + (r / R) * R * rowBytes, blocks, int(r % R), dst + (r - first) * cols);
}

}  // namespace ws::num
