#include "core/model/tensor_record.h"

namespace ws {

std::string_view roleName(Role r) {
  switch (r) {
    case Role::Embedding: return "embedding";
    case Role::Attention: return "attention";
    case Role::DenseMlp: return "dense_mlp";
    case Role::Router: return "router";
    case Role::RoutedExpert: return "routed_expert";
    case Role::SharedExpert: return "shared_expert";
    case Role::Norm: return "norm";
    case Role::LmHead: return "lm_head";
    case Role::Mtp: return "mtp";
    case Role::Vision: return "vision";
    case Role::Other: return "other";
  }
  return "other";
}

std::string_view projectionName(Projection p) {
  switch (p) {
    case Projection::Gate: return "gate";
    case Projection::Up: return "up";
    case Projection::Down: return "down";
    case Projection::GateUp: return "gate_up";
    case Projection::None: return "";
  }
  return "";
}

std::string_view componentName(Component c) {
  switch (c) {
    case Component::Weight: return "weight";
    case Component::Bias: return "bias";
    case Component::Scale: return "scale";
    case Component::GlobalScale: return "global_scale";
    case Component::InputScale: return "input_scale";
    case Component::KvScale: return "kv_scale";
    case Component::ZeroPoint: return "zero_point";
    case Component::Shape: return "shape";
    case Component::GIdx: return "g_idx";
    case Component::LoraA: return "lora_A";
    case Component::LoraB: return "lora_B";
    case Component::QuantState: return "quant_state";
  }
  return "weight";
}

std::string_view layoutName(Layout l) {
  switch (l) {
    case Layout::FusedOutIn: return "fused_out_in";
    case Layout::FusedInOut: return "fused_in_out";
    case Layout::Stacked: return "stacked";
    case Layout::None: return "";
  }
  return "";
}

}  // namespace ws
