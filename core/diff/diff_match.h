// Which logical tensor of checkpoint A corresponds to which of checkpoint B, across naming families
// (HF, GGUF, KTransformers) and expert layouts (per-expert, GGUF stacked, fused [E, 2I, H] or
// [E, H, 2I], gpt-oss interleaved). Both sides are cut into comparable units - one matrix each,
// in [out, in] orientation - named by a canonical key in llama.cpp's vocabulary:
// "blk.3.ffn_gate_exps.17", "blk.3.attn_q", "token_embd".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"

namespace ws::diff {

// One matrix cut out of a logical tensor.
struct Unit {
  uint32_t logical = 0;
  int64_t expert = -1;       // expert of a stacked or fused tensor (its leading dimension), else -1
  bool transposed = false;   // the stored matrix is [in, out]
  int half = -1;             // of a fused gate_up: 0 gate, 1 up; -1 the whole matrix
  bool interleaved = false;  // gate and up alternate along the output dimension (gpt-oss)
  int64_t member = -1;       // a bias (or lone buffer) read as plain values from this stored
                             // tensor instead of the logical tensor's weight
  // Undoing llama.cpp's converter (core/model/gguf_conversion.h), applied after the above:
  int64_t ropeHeads = 0;     // rows (a bias: its values) permuted for ggml's RoPE over this many heads
  int64_t transposeEach = 0; // a [n, a, b] tensor read as n matrices [a, b], each transposed: [n*b, a]
  uint64_t slicePeriod = 0, sliceOffset = 0, sliceCount = 0;  // keep rows r with offset <= r % period < offset + count
  // What was undone, for the report ("RoPE permutation over 8 heads", ...); empty: nothing.
  std::string undone;
};

struct UnitKey {
  std::string key;
  int32_t layer = -1;
  int32_t expert = -1;       // routed expert index, -1 for everything else
  std::string projection;    // "gate", "up", "down", or "" for non-expert tensors
  Unit unit;
};

// Every unit of a checkpoint, in catalog order: each weight (cut per expert and per gate/up half),
// each bias beside it (cut the same way, key + ".bias"), and lone biases or buffers.
std::vector<UnitKey> unitsOf(const Checkpoint& c);

struct Pair {
  std::string key;
  int32_t layer = -1, expert = -1;
  std::string projection;
  Unit a, b;
};

struct Matching {
  std::vector<Pair> pairs;           // in A's order
  std::vector<UnitKey> onlyA;        // units with no counterpart on the other side
  std::vector<UnitKey> onlyB;
};

Matching matchCheckpoints(const Checkpoint& a, const Checkpoint& b);

}  // namespace ws::diff
