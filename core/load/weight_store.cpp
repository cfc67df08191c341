#include "core/load/weight_store.h"

#include "core/util/glob.h"

namespace ws::load {

const ResidentTensor* WeightStore::find(const std::string& name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

uint64_t WeightStore::residentBytes() const {
  uint64_t n = 0;
  for (const auto& t : tensors_) n += t.buffer.bytes;
  for (const auto& d : derived_) n += d.buffer.bytes;
  return n;
}

std::pair<uint64_t, uint64_t> WeightStore::freeMatching(const std::string& glob) {
  uint64_t count = 0, bytes = 0;
  auto drop = [&](auto& list) {
    for (auto it = list.begin(); it != list.end();) {
      if (globMatch(glob, it->name)) {
        backend_.free(it->buffer);
        ++count;
        bytes += it->buffer.bytes;
        it = list.erase(it);
      } else {
        ++it;
      }
    }
  };
  drop(derived_);  // derived buffers first: they are built from the tensors
  drop(tensors_);
  return {count, bytes};
}

void WeightStore::release() {
  for (auto& d : derived_) backend_.free(d.buffer);
  for (auto& t : tensors_) backend_.free(t.buffer);
  derived_.clear();
  tensors_.clear();
}

}  // namespace ws::load
