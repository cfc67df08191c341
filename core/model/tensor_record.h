// One stored tensor as the catalog sees it, plus what structure recognition found out about it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/dtype.h"

namespace ws {

enum class Role : uint8_t { Embedding, Attention, DenseMlp, Router, RoutedExpert, SharedExpert, Norm, LmHead, Mtp, Vision, Other };
enum class Projection : uint8_t { None, Gate, Up, Down, GateUp };
// LoraA / LoraB: the two factors of a LoRA adapter's update to the module they are named after
// (PEFT lora_A [r, in] and lora_B [out, r]; MLX lora_a [in, r] and lora_b [r, out]).
// KvScale: an attention layer's KV-cache (and query / softmax) quantization scales, vLLM's
// k_scale, v_scale, q_scale, prob_scale and the older kv_scale.
// QuantState: a writer's decoding metadata beside its weight (bitsandbytes' quant_map, nested
// absmax and packed quant_state, its int8 weight_format), read only by the weight's decoder.
enum class Component : uint8_t { Weight, Bias, Scale, GlobalScale, InputScale, KvScale, ZeroPoint, Shape, GIdx, LoraA, LoraB, QuantState };
enum class Layout : uint8_t { None, FusedOutIn, FusedInOut, Stacked };

std::string_view roleName(Role r);
std::string_view projectionName(Projection p);  // "" for None
std::string_view componentName(Component c);
std::string_view layoutName(Layout l);          // "" for None

struct TensorRecord {
  std::string name;
  uint32_t file = 0;         // index into Checkpoint::files
  uint64_t offset = 0;       // absolute byte offset in that file
  uint64_t bytes = 0;
  const DType* dtype = nullptr;
  std::vector<uint64_t> shape;  // PyTorch order; GGUF shapes are reversed ggml `ne`
  bool ggmlOrder = false;       // true when read from GGUF: reversing `shape` gives the original ne
  // Its data runs past the end of its file (a partial download, a header-only copy; only a
  // tolerant open keeps such a file). Nothing may read its bytes.
  bool cut = false;

  // Filled by structure recognition.
  Role role = Role::Other;
  int32_t layer = -1;        // -1: not in a layer
  int32_t expert = -1;       // -1: not a single expert (also for fused / stacked tensors)
  int32_t numaNode = -1;     // KTransformers NUMA shard, else -1
  Projection projection = Projection::None;
  Component component = Component::Weight;
  Layout layout = Layout::None;
  bool interleaved = false;  // gate and up rows alternate (gpt-oss)
  uint32_t logical = 0;      // index into Checkpoint::logical

  uint64_t elements() const {
    uint64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
};

}  // namespace ws
