// Tensor-name conventions: natural ordering, the component suffix, and the role / layer /
// expert / projection a name encodes, across HF, GGUF and KTransformers naming families.
#pragma once

#include <string>
#include <string_view>

#include "core/model/model_description.h"
#include "core/model/tensor_record.h"

namespace ws {

// "experts.2" < "experts.10": runs of digits compare by value.
bool naturalLess(std::string_view a, std::string_view b);

// A byte string whose plain order is naturalLess's order: each digit run becomes '0', its
// significant-digit count (2 bytes), the significant digits and its leading-zero count (2 bytes).
// Sorting 200k names by precomputed keys is memcmp work instead of re-parsing digits per compare.
std::string naturalKey(std::string_view name);

struct NameParts {
  std::string logical;     // the name with the component suffix (and any KT ".numa.N") removed
  Component component = Component::Weight;
  Role role = Role::Other;
  int32_t layer = -1;
  int32_t expert = -1;
  int32_t numaNode = -1;
  Projection projection = Projection::None;
  bool fused = false;      // an experts tensor that holds every expert (HF fused, MLX switch_mlp)
  bool stacked = false;    // GGUF *_exps
  bool alwaysOutIn = false;  // MLX SwitchLinear stacks are [E, out, in] by construction
};

// The model prefix a name sits under, as the seed runtime detects it before classifying: the
// tokens before the layer index ("model.language_model." in "model.language_model.layers.3.mlp"),
// a vision or audio tower's own prefix up to its name ("model.visual."), or a top-level tensor's
// wrapper tokens ("model." of "model.embed_tokens"); "" for GGUF names and a bare lm_head.
std::string namePrefix(std::string_view name);

// Classifies one name. `model` supplies the layer count (to tell MTP layers) and MTP style.
NameParts parseTensorName(std::string_view name, const ModelDescription& model);

}  // namespace ws
