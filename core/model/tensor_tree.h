// The tensor tree: layers (tensors outside any layer first), in each layer its modules by role
// (attention, dense MLP, routed experts ...), under a module one node per expert where tensors
// carry an expert index, a LoRA adapter's factors in one node per module they adapt, then the
// tensors; bytes summed on every node. One grouping for the GUI's
// tree and `inspect`'s text tree. Layers in index order; modules, experts and tensors in the
// catalog's natural order of first appearance.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/model/checkpoint.h"

namespace ws {

struct TreeNode {
  enum class Kind : uint8_t { Root, Layer, Module, Expert, Adapted, Tensor };
  Kind kind = Kind::Root;
  int32_t layer = -1;       // Layer and below (-1: outside layers)
  Role role = Role::Other;  // Module and below
  int64_t expert = -1;      // Expert and below
  int32_t tensor = -1;      // Tensor: its catalog index; Adapted: its first factor's
  uint32_t parent = 0;      // node index (the root is its own parent)
  uint32_t row = 0;         // position among the parent's children
  uint64_t bytes = 0;
  std::vector<uint32_t> children;
};

struct TensorTree {
  std::vector<TreeNode> nodes;          // nodes[0] is the root
  std::vector<uint32_t> nodeOfTensor;   // catalog index -> its Tensor node; 0 when left out
};

// `keep` chooses the tensors shown (inspect --filter); empty keeps all.
TensorTree tensorTree(const Checkpoint& c, const std::function<bool(const TensorRecord&)>& keep = {});

// What a node is called: "layer 3 (MoE)", "(outside layers)", "routed experts", "expert 7",
// "LoRA of self_attn.q_proj", and
// for a tensor the part of its name below its group ("self_attn.q_proj.weight" under layer 3,
// "down_proj.weight" under expert 7).
std::string nodeLabel(const Checkpoint& c, const TreeNode& n);

}  // namespace ws
