// Which matches of a rule written in the rule language need not run again
// (rulelang/rule_run.cpp): the e-graph's change clock per class
// (egraph/egraph.h, EGraph::changed_at) says what changed since a match ran.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "egraph/egraph.h"

namespace sator::rulelang {

// The matches a rule was applied to, each with the classes its run read
// or built and the e-graph's change clock when it began. Re-running such a
// match while none of those classes has changed (each still canonical, none
// changed after that clock) would find the same bindings and build nodes
// and unions that are already there: it is skipped. An e-graph only grows,
// so what the earlier run made is still in it. (Saturation re-searches
// every rule each iteration; most matches of a late iteration are such
// repeats: 70% of the last iterations' time on a large training graph.)
class MatchMemo {
 public:
  bool applied_unchanged(const eg::EGraph& g, const std::vector<eg::Id>& key) const {
    const uint32_t* slot = at_.find(hash(key));
    if (!slot) return false;
    const eg::Id* e = arena_.data() + *slot;
    const uint32_t clock = e[0], key_size = e[1], size = e[2];
    if (key_size != key.size() || !std::equal(key.begin(), key.end(), e + 3)) return false;
    for (uint32_t k = 1; k < size; ++k) {  // [0] is the root node, not a class
      const eg::Id c = e[3 + k];
      if (c == eg::kNoId) continue;
      if (!g.is_canonical(c) || g.changed_at(c) > clock) return false;
    }
    return true;
  }
  void remember(const std::vector<eg::Id>& seen, size_t key_size, uint32_t clock) {
    const std::span<const eg::Id> key(seen.data(), key_size);
    bool fresh = false;
    uint32_t& offset = at_.insert(hash(key), static_cast<uint32_t>(arena_.size()), fresh);
    // A match seen again is written over its old entry where the new one fits.
    const bool in_place = !fresh && arena_[offset + 2] >= seen.size();
    if (!in_place) offset = static_cast<uint32_t>(arena_.size());
    const size_t at = offset;
    if (!in_place) arena_.resize(arena_.size() + 3 + seen.size());
    arena_[at] = clock;
    arena_[at + 1] = static_cast<eg::Id>(key_size);
    arena_[at + 2] = static_cast<eg::Id>(seen.size());
    std::copy(seen.begin(), seen.end(), arena_.begin() + static_cast<std::ptrdiff_t>(at + 3));
  }

 private:
  static uint64_t hash(std::span<const eg::Id> key) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ key.size();
    for (eg::Id x : key) h = (h ^ x) * 0x100000001b3ull, h ^= h >> 29;
    return h;
  }
  // Key hash -> entry offset in arena_, open addressing (a node-based map's
  // allocation per entry made the memo cost more than it saved on a graph
  // whose matches are mostly new: a 100,000-deep view chain).
  class Index {
   public:
    const uint32_t* find(uint64_t h) const {
      if (keys_.empty()) return nullptr;
      h = h ? h : 1;
      for (size_t i = h & mask_;; i = (i + 1) & mask_) {
        if (keys_[i] == h) return &vals_[i];
        if (keys_[i] == 0) return nullptr;
      }
    }
    uint32_t& insert(uint64_t h, uint32_t v, bool& fresh) {
      if (2 * (count_ + 1) > keys_.size()) grow();
      h = h ? h : 1;  // 0 marks an empty slot
      size_t i = h & mask_;
      while (keys_[i] != 0 && keys_[i] != h) i = (i + 1) & mask_;
      fresh = keys_[i] == 0;
      if (fresh) keys_[i] = h, vals_[i] = v, ++count_;
      return vals_[i];
    }

   private:
    void grow() {
      std::vector<uint64_t> keys(std::max<size_t>(1024, 2 * keys_.size()), 0);
      std::vector<uint32_t> vals(keys.size());
      const size_t mask = keys.size() - 1;
      for (size_t j = 0; j < keys_.size(); ++j) {
        if (keys_[j] == 0) continue;
        size_t i = keys_[j] & mask;
        while (keys[i] != 0) i = (i + 1) & mask;
        keys[i] = keys_[j], vals[i] = vals_[j];
      }
      keys_ = std::move(keys), vals_ = std::move(vals), mask_ = mask;
    }
    std::vector<uint64_t> keys_;
    std::vector<uint32_t> vals_;
    size_t mask_ = 0, count_ = 0;
  };
  Index at_;
  std::vector<eg::Id> arena_;  // entries: clock, key size, size, then the key and the classes read
};

}  // namespace sator::rulelang
