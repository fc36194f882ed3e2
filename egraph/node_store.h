// E-node storage: operator, attribute and children of every node, children
// in a shared arena. Both live in fixed-size chunks, so growing never copies
// or moves a node (spans into the arena stay valid) and the slack is at most
// one chunk, not the half of a doubled vector. A node's children are
// rewritten to canonical ids in place by rebuild (see egraph.h).
#pragma once

#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "egraph/id.h"

namespace sator::eg {

class NodeStore {
 public:
  static constexpr uint32_t kMaxArity = (1u << 12) - 1;
  static constexpr uint32_t kMaxOps = 1u << 20;

  Id push(OpId op, AttrId attr, std::span<const Id> children) {
    if (children.size() > kMaxArity || op >= kMaxOps) throw std::length_error("e-node arity or op id too large");
    const auto n = static_cast<uint32_t>(children.size());
    if (arena_chunks_.empty() || arena_used_ + n > kArenaChunk) {
      arena_chunks_.push_back(std::make_unique<Id[]>(kArenaChunk));
      arena_used_ = 0;
    }
    const uint32_t begin = static_cast<uint32_t>(arena_chunks_.size() - 1) << kArenaBits | arena_used_;
    std::copy(children.begin(), children.end(), arena_chunks_.back().get() + arena_used_);
    arena_used_ += n;
    if ((size_ & (kRecChunk - 1)) == 0) rec_chunks_.push_back(std::make_unique<Rec[]>(kRecChunk));
    rec_chunks_.back()[size_ & (kRecChunk - 1)] = Rec{op << 12 | n, attr, begin};
    return static_cast<Id>(size_++);
  }

  size_t size() const { return size_; }
  OpId op(Id n) const { return rec(n).op_arity >> 12; }
  // op << 12 | arity: the primary sort key of class node lists.
  uint32_t op_arity(Id n) const { return rec(n).op_arity; }
  static uint32_t op_arity_key(OpId op, uint32_t arity) { return op << 12 | arity; }
  AttrId attr(Id n) const { return rec(n).attr; }
  uint32_t arity(Id n) const { return rec(n).op_arity & kMaxArity; }
  std::span<const Id> children(Id n) const { return {kids(rec(n)), arity(n)}; }
  std::span<Id> mutable_children(Id n) { return {kids(rec(n)), arity(n)}; }
  Id first_child(Id n) const { return *kids(rec(n)); }

  bool equals(Id n, OpId op, AttrId attr, std::span<const Id> children) const {
    const Rec& r = rec(n);
    if ((r.op_arity >> 12) != op || r.attr != attr || (r.op_arity & kMaxArity) != children.size()) return false;
    const Id* mine = kids(r);
    for (size_t i = 0; i < children.size(); ++i)  // arities are small: no memcmp call
      if (mine[i] != children[i]) return false;
    return true;
  }
  bool same(Id a, Id b) const { return equals(a, op(b), attr(b), children(b)); }

  // Total order by (op, arity, attr, children): class node lists are kept
  // sorted so that matching finds an operator's nodes by binary search.
  bool less(Id a, Id b) const {
    const Rec &x = rec(a), &y = rec(b);
    if (x.op_arity != y.op_arity) return x.op_arity < y.op_arity;
    if (x.attr != y.attr) return x.attr < y.attr;
    const Id *cx = kids(x), *cy = kids(y);
    for (uint32_t i = 0, n = x.op_arity & kMaxArity; i < n; ++i)
      if (cx[i] != cy[i]) return cx[i] < cy[i];
    return false;
  }

  size_t memory_bytes() const {
    return rec_chunks_.size() * kRecChunk * sizeof(Rec) + arena_chunks_.size() * kArenaChunk * sizeof(Id) +
           (rec_chunks_.capacity() + arena_chunks_.capacity()) * sizeof(void*);
  }

 private:
  static constexpr uint32_t kRecBits = 16, kRecChunk = 1u << kRecBits;
  static constexpr uint32_t kArenaBits = 18, kArenaChunk = 1u << kArenaBits;
  struct Rec {
    uint32_t op_arity;  // op << 12 | arity
    AttrId attr;
    uint32_t begin;  // arena chunk << kArenaBits | offset
  };
  const Rec& rec(Id n) const { return rec_chunks_[n >> kRecBits][n & (kRecChunk - 1)]; }
  Id* kids(const Rec& r) const { return arena_chunks_[r.begin >> kArenaBits].get() + (r.begin & (kArenaChunk - 1)); }

  std::vector<std::unique_ptr<Rec[]>> rec_chunks_;
  std::vector<std::unique_ptr<Id[]>> arena_chunks_;
  size_t size_ = 0;
  uint32_t arena_used_ = 0;
};

}  // namespace sator::eg
