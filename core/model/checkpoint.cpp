#include "core/model/checkpoint.h"

#include <algorithm>

#include "core/model/naming.h"

namespace ws {

uint64_t Checkpoint::totalBytes() const {
  uint64_t n = 0;
  for (const auto& t : tensors) n += t.bytes;
  return n;
}

uint64_t Checkpoint::totalParameters() const {
  uint64_t n = 0;
  for (const auto& l : logical) n += l.parameters;
  return n;
}

bool Checkpoint::isCut(const LogicalTensor& l) const {
  return std::any_of(l.members.begin(), l.members.end(), [&](uint32_t m) { return tensors[m].cut; });
}

const TensorRecord* Checkpoint::find(const std::string& name) const {
  auto it = std::lower_bound(tensors.begin(), tensors.end(), name,
                             [](const TensorRecord& t, const std::string& n) { return naturalLess(t.name, n); });
  if (it != tensors.end() && it->name == name) return &*it;
  return nullptr;
}

const MetaEntry* Checkpoint::findMeta(const std::string& key) const {
  for (const auto& e : meta)
    if (e.key == key) return &e;
  return nullptr;
}

}  // namespace ws
