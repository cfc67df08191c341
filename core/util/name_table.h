// A name -> uint32 table for the open path's largest map (index.json's 200k tensor names): open
// addressing in one array, keys viewing memory the caller keeps alive. No node per entry, so
// building it costs one allocation instead of 200k.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace ws {

class NameTable {
 public:
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    size_ = 0;
  }
  // False when the name is already there (the table keeps the first value).
  bool insert(std::string_view key, uint32_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    const uint64_t h = hash(key);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) {
        s = Slot{h, key, value, true};
        ++size_;
        return true;
      }
      if (s.hash == h && s.key == key) return false;
    }
  }
  const uint32_t* find(std::string_view key) const {
    if (slots_.empty()) return nullptr;
    const uint64_t h = hash(key);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.hash == h && s.key == key) return &s.value;
    }
  }
  size_t size() const { return size_; }
  template <class F>
  void forEach(F&& fn) const {  // fn(name, value), in no particular order
    for (const Slot& s : slots_)
      if (s.used) fn(s.key, s.value);
  }
  template <class F>
  void updateValues(F&& fn) {  // value = fn(value)
    for (Slot& s : slots_)
      if (s.used) s.value = fn(s.value);
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    std::string_view key;
    uint32_t value = 0;
    bool used = false;
  };
  static uint64_t hash(std::string_view k) { return std::hash<std::string_view>{}(k); }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    reserve(old.empty() ? 8 : old.size());
    for (const Slot& s : old)
      if (s.used) insert(s.key, s.value);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
};

}  // namespace ws
