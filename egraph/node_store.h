// E-node storage: operator, attribute and children of every node, children
// in one shared arena. A node's record never moves; its children are
// rewritten to canonical ids in place by rebuild (see egraph.h).
#pragma once

#include <cstring>
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
    const auto begin = static_cast<uint32_t>(arena_.size());
    arena_.insert(arena_.end(), children.begin(), children.end());
    recs_.push_back(Rec{(op << 12) | static_cast<uint32_t>(children.size()), attr, begin});
    return static_cast<Id>(recs_.size() - 1);
  }

  size_t size() const { return recs_.size(); }
  OpId op(Id n) const { return recs_[n].op_arity >> 12; }
  // op << 12 | arity: the primary sort key of class node lists.
  uint32_t op_arity(Id n) const { return recs_[n].op_arity; }
  static uint32_t op_arity_key(OpId op, uint32_t arity) { return op << 12 | arity; }
  Id first_child(Id n) const { return arena_[recs_[n].begin]; }
  AttrId attr(Id n) const { return recs_[n].attr; }
  uint32_t arity(Id n) const { return recs_[n].op_arity & kMaxArity; }
  std::span<const Id> children(Id n) const { return {arena_.data() + recs_[n].begin, arity(n)}; }
  std::span<Id> mutable_children(Id n) { return {arena_.data() + recs_[n].begin, arity(n)}; }

  bool equals(Id n, OpId op, AttrId attr, std::span<const Id> children) const {
    const Rec& r = recs_[n];
    if ((r.op_arity >> 12) != op || r.attr != attr || (r.op_arity & kMaxArity) != children.size()) return false;
    const Id* mine = arena_.data() + r.begin;
    for (size_t i = 0; i < children.size(); ++i)  // arities are small: no memcmp call
      if (mine[i] != children[i]) return false;
    return true;
  }
  bool same(Id a, Id b) const { return equals(a, op(b), attr(b), children(b)); }

  // Total order by (op, attr, children): class node lists are kept sorted so
  // that matching finds an operator's nodes by binary search.
  bool less(Id a, Id b) const {
    const Rec &x = recs_[a], &y = recs_[b];
    if (x.op_arity != y.op_arity) return x.op_arity < y.op_arity;
    if (x.attr != y.attr) return x.attr < y.attr;
    const Id* cx = arena_.data() + x.begin;
    const Id* cy = arena_.data() + y.begin;
    for (uint32_t i = 0, n = x.op_arity & kMaxArity; i < n; ++i)
      if (cx[i] != cy[i]) return cx[i] < cy[i];
    return false;
  }

  size_t memory_bytes() const { return recs_.capacity() * sizeof(Rec) + arena_.capacity() * sizeof(Id); }

 private:
  struct Rec {
    uint32_t op_arity;  // op << 12 | arity
    AttrId attr;
    uint32_t begin;  // first child in arena_
  };
  std::vector<Rec> recs_;
  std::vector<Id> arena_;
};

}  // namespace sator::eg
