// Node names to node ids while a graph is read: an open-addressed table of
// (hash, id) pairs, 8 bytes a slot, with the names kept in id order beside
// it. A std::unordered_map of string_view to id touched a bucket array and a
// list node per insert and lookup, each a cache miss once the graph's index
// outgrew the cache: reading 17 copies of a training graph took 24x one
// copy's time, most of it in those misses (issue 40).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace sator {

class NameIndex {
 public:
  // Room for `names` names without growing.
  void reserve(size_t names) {
    names_.reserve(names);
    if (slots_.size() < 2 * names) rehash(capacity_for(names));
  }

  // Adds `name` as the next id (the count of names added before it);
  // false where it is there already.
  bool add(std::string_view name) {
    if (2 * (names_.size() + 1) > slots_.size()) rehash(capacity_for(names_.size() + 1));
    const uint64_t h = hash(name);
    for (size_t at = h & mask_;; at = (at + 1) & mask_) {
      const uint64_t s = slots_[at];
      if (s == kEmpty) {
        slots_[at] = (h & kHashBits) | names_.size();
        names_.push_back(name);
        return true;
      }
      if ((s & kHashBits) == (h & kHashBits) && names_[s & kIdBits] == name) return false;
    }
  }

  std::optional<NodeId> find(std::string_view name) const {
    if (slots_.empty()) return std::nullopt;
    const uint64_t h = hash(name);
    for (size_t at = h & mask_;; at = (at + 1) & mask_) {
      const uint64_t s = slots_[at];
      if (s == kEmpty) return std::nullopt;
      if ((s & kHashBits) == (h & kHashBits) && names_[s & kIdBits] == name) return static_cast<NodeId>(s & kIdBits);
    }
  }

 private:
  // A slot: the name hash's high 32 bits over the id's 32; all ones is empty.
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static constexpr uint64_t kIdBits = 0xffffffffu;
  static constexpr uint64_t kHashBits = ~kIdBits;

  static uint64_t hash(std::string_view s) { return std::hash<std::string_view>{}(s); }
  static size_t capacity_for(size_t names) {
    size_t c = 16;
    while (c < 2 * names) c *= 2;
    return c;
  }
  void rehash(size_t capacity) {
    slots_.assign(capacity, kEmpty);
    mask_ = capacity - 1;
    for (size_t id = 0; id < names_.size(); ++id)
      for (size_t at = hash(names_[id]) & mask_;; at = (at + 1) & mask_)
        if (slots_[at] == kEmpty) {
          slots_[at] = (hash(names_[id]) & kHashBits) | id;
          break;
        }
  }

  std::vector<uint64_t> slots_;
  std::vector<std::string_view> names_;  // by id
  size_t mask_ = 0;
};

}  // namespace sator
