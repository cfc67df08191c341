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

uint64_t WeightStore::arenasHeld() const {
  uint64_t n = 0;
  for (const auto& a : arenas_) n += a.buffer.ptr ? 1 : 0;
  return n;
}

uint64_t WeightStore::arenaBytesHeld() const {
  uint64_t n = 0;
  for (const auto& a : arenas_) n += a.buffer.ptr ? a.buffer.bytes : 0;
  return n;
}

Result<std::vector<View>> WeightStore::allocate(const ArenaLayout& layout, const std::function<std::string(uint32_t)>& nameOf) {
  const uint32_t first = uint32_t(arenas_.size());
  for (uint32_t k = 0; k < layout.arenaBytes.size(); ++k) {
    auto b = backend_.allocate(layout.arenaBytes[k], nameOf(k));
    if (!b) {
      Error e = b.error();
      e.message = "allocating arena " + std::to_string(k + 1) + " of " + std::to_string(layout.arenaBytes.size()) + " (" + std::to_string(layout.arenaBytes[k]) +
                  " bytes): " + e.message;
      e.tensor = nameOf(k);
      return e;
    }
    arenas_.push_back({b.value(), 0});
  }
  std::vector<View> views(layout.places.size());
  for (size_t i = 0; i < layout.places.size(); ++i) {
    const auto& s = layout.places[i];
    if (s.arena == ArenaLayout::kNoArena) continue;  // zero bytes: no memory, no arena
    const DeviceBuffer& a = arenas_[first + s.arena].buffer;
    views[i].arena = first + s.arena;
    views[i].buffer = {a.id, static_cast<uint8_t*>(a.ptr) + s.offset, s.bytes, kArenaAlignment};
  }
  return views;
}

void WeightStore::add(ResidentTensor t) {
  if (t.arena != ArenaLayout::kNoArena) arenas_[t.arena].views++;
  tensors_.push_back(std::move(t));
}

void WeightStore::addDerived(DerivedBuffer d) {
  if (d.arena != ArenaLayout::kNoArena) arenas_[d.arena].views++;
  derived_.push_back(std::move(d));
}

void WeightStore::dropView(uint32_t arena, Freed& f) {
  if (arena == ArenaLayout::kNoArena) return;
  Arena& a = arenas_[arena];
  if (--a.views > 0 || !a.buffer.ptr) return;
  backend_.free(a.buffer);
  f.arenas++;
  f.arenaBytes += a.buffer.bytes;
  a.buffer.ptr = nullptr;
}

Freed WeightStore::freeMatching(const std::string& glob) {
  Freed f;
  auto drop = [&](auto& list) {
    for (auto it = list.begin(); it != list.end();) {
      if (globMatch(glob, it->name)) {
        f.views++;
        f.bytes += it->buffer.bytes;
        dropView(it->arena, f);
        it = list.erase(it);
      } else {
        ++it;
      }
    }
  };
  drop(derived_);  // derived buffers first: they are built from the tensors
  drop(tensors_);
  return f;
}

void WeightStore::release() {
  for (auto& a : arenas_)
    if (a.buffer.ptr) backend_.free(a.buffer);
  arenas_.clear();
  derived_.clear();
  tensors_.clear();
}

}  // namespace ws::load
