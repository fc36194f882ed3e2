// The hashcons: (op, attr, canonical children) -> the node that has them.
//
// Open addressing with linear probing; each slot packs a 32-bit hash and a
// node id, and keys are compared against the node store, so the table itself
// is 8 bytes a slot. Deletion shifts entries back (no tombstones), which
// rebuild needs when it re-canonicalizes a node.
#pragma once

#include <span>
#include <vector>

#include "egraph/id.h"
#include "egraph/node_store.h"

namespace sator::eg {

class Hashcons {
 public:
  static uint32_t hash(OpId op, AttrId attr, std::span<const Id> children);

  // The node with this key, or kNoId.
  Id find(const NodeStore& store, OpId op, AttrId attr, std::span<const Id> children, uint32_t h) const;
  // Inserts node `n` (its key must not be present).
  void insert(Id n, uint32_t h);
  // Removes node `n`, stored under hash `h`; false if it was not there.
  bool erase(Id n, uint32_t h);

  size_t size() const { return size_; }
  size_t memory_bytes() const { return slots_.capacity() * sizeof(uint64_t); }
  // Calls fn(node) for every node in the table.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (uint64_t s : slots_)
      if (s != kEmpty) fn(static_cast<Id>(s));
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  void grow();
  size_t mask() const { return slots_.size() - 1; }

  std::vector<uint64_t> slots_;  // hash << 32 | node, or kEmpty
  size_t size_ = 0;
};

}  // namespace sator::eg
