#include "core/model/tensor_tree.h"

#include <algorithm>
#include <map>

namespace ws {

namespace {

const char* moduleLabel(Role r) {
  switch (r) {
    case Role::RoutedExpert: return "routed experts";
    case Role::SharedExpert: return "shared experts";
    case Role::Attention: return "attention";
    case Role::DenseMlp: return "dense MLP";
    case Role::Router: return "router";
    case Role::Norm: return "norms";
    case Role::Mtp: return "multi-token prediction";
    case Role::Vision: return "vision tower";
    case Role::Embedding: return "embeddings";
    case Role::LmHead: return "lm_head";
    case Role::Other: return "other";
  }
  return "other";
}

// A child of `p` of kind `k`: it inherits where it sits (layer, role, expert), not the children.
TreeNode below(const TreeNode& p, TreeNode::Kind k) {
  TreeNode n;
  n.kind = k;
  n.layer = p.layer;
  n.role = p.role;
  n.expert = p.expert;
  return n;
}

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The part of `name` (t's own, or its logical tensor's) below t's layer index, and below its
// expert index when there is one.
std::string belowLayer(const TensorRecord& t, const std::string& name) {
  size_t pos = 0;
  if (t.layer >= 0) {
    const std::string layerToken = "." + std::to_string(t.layer) + ".";
    if (size_t at = name.find(layerToken); at != std::string::npos) pos = at + layerToken.size();
    if (t.expert >= 0) {
      const std::string expertToken = "." + std::to_string(t.expert) + ".";
      if (size_t e = name.find(expertToken, pos ? pos - 1 : 0); e != std::string::npos) pos = e + expertToken.size();
    }
  }
  return name.substr(pos);
}

}  // namespace

TensorTree tensorTree(const Checkpoint& c, const std::function<bool(const TensorRecord&)>& keep) {
  TensorTree tree;
  tree.nodes.emplace_back();  // the root
  tree.nodeOfTensor.assign(c.tensors.size(), 0);
  auto child = [&](uint32_t parent, TreeNode n) {
    n.parent = parent;
    n.row = uint32_t(tree.nodes[parent].children.size());
    const uint32_t id = uint32_t(tree.nodes.size());
    tree.nodes.push_back(std::move(n));
    tree.nodes[parent].children.push_back(id);
    return id;
  };
  // A LoRA factor's logical tensor is the module it adapts: its factors share a node.
  auto isFactor = [](const TensorRecord& t) { return t.component == Component::LoraA || t.component == Component::LoraB; };
  std::map<int, std::vector<uint32_t>> byLayer;  // layer -1 (outside layers) first
  for (uint32_t i = 0; i < c.tensors.size(); ++i)
    if (!keep || keep(c.tensors[i])) byLayer[c.tensors[i].layer].push_back(i);
  for (const auto& [layer, members] : byLayer) {
    TreeNode ln;
    ln.kind = TreeNode::Kind::Layer;
    ln.layer = layer;
    const uint32_t layerNode = child(0, ln);
    std::map<Role, uint32_t> modules;
    std::map<std::pair<uint32_t, int64_t>, uint32_t> experts, adaptedNodes;
    for (uint32_t i : members) {
      const TensorRecord& t = c.tensors[i];
      auto m = modules.find(t.role);
      if (m == modules.end()) {
        TreeNode mn = below(tree.nodes[layerNode], TreeNode::Kind::Module);
        mn.role = t.role;
        m = modules.emplace(t.role, child(layerNode, mn)).first;
      }
      uint32_t parent = m->second;
      if (t.expert >= 0) {
        auto e = experts.find({parent, t.expert});
        if (e == experts.end()) {
          TreeNode en = below(tree.nodes[parent], TreeNode::Kind::Expert);
          en.expert = t.expert;
          e = experts.emplace(std::pair(parent, t.expert), child(parent, en)).first;
        }
        parent = e->second;
      }
      if (isFactor(t)) {
        auto a = adaptedNodes.find({parent, int64_t(t.logical)});
        if (a == adaptedNodes.end()) {
          TreeNode an = below(tree.nodes[parent], TreeNode::Kind::Adapted);
          an.tensor = int32_t(i);
          a = adaptedNodes.emplace(std::pair(parent, int64_t(t.logical)), child(parent, an)).first;
        }
        parent = a->second;
      }
      TreeNode tn = below(tree.nodes[parent], TreeNode::Kind::Tensor);
      tn.tensor = int32_t(i);
      const uint32_t leaf = child(parent, tn);
      tree.nodeOfTensor[i] = leaf;
      for (uint32_t n = leaf;; n = tree.nodes[n].parent) {
        tree.nodes[n].bytes += t.bytes;
        if (n == 0) break;
      }
    }
  }
  return tree;
}

std::string nodeLabel(const Checkpoint& c, const TreeNode& n) {
  switch (n.kind) {
    case TreeNode::Kind::Root: return "";
    case TreeNode::Kind::Layer: {
      if (n.layer < 0) return "(outside layers)";
      const auto& m = c.model;
      const char* kind = contains(m.mtpLayers, n.layer) ? "MTP" : contains(m.moeLayers, n.layer) ? "MoE" : "dense";
      return "layer " + std::to_string(n.layer) + " (" + kind + ")";
    }
    case TreeNode::Kind::Module: return moduleLabel(n.role);
    case TreeNode::Kind::Expert: return "expert " + std::to_string(n.expert);
    case TreeNode::Kind::Adapted: {  // the logical tensor's name is the adapted module's
      const TensorRecord& factor = c.tensors[size_t(n.tensor)];
      return "LoRA of " + belowLayer(factor, c.logical[factor.logical].name);
    }
    case TreeNode::Kind::Tensor: break;
  }
  const TensorRecord& t = c.tensors[size_t(n.tensor)];
  return belowLayer(t, t.name);
}

}  // namespace ws
