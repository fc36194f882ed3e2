// The e-class analysis hook (egg's Analysis: make / merge / modify).
//
// The engine calls make when a class is created, merge when two classes are
// unioned (and when rebuilding re-derives a node's data), and modify after
// either, where an analysis may add nodes, union classes or prune (e.g.
// constant folding). Data lives in the analysis, indexed by class id; the
// engine never sees its type.
#pragma once

#include <deque>
#include <vector>

#include "egraph/id.h"

namespace sator::eg {

class EGraph;

// Whether merging changed the first / the second operand's data, so that the
// parents of that class must have their data recomputed.
struct DidMerge {
  bool first = false;
  bool second = false;
};

class Analysis {
 public:
  virtual ~Analysis() = default;
  // Data for the new class `id`, whose only node is `node` (== id).
  virtual void make(const EGraph& g, Id id) = 0;
  // Merges class `from`'s data into class `into` (`from` is going away).
  virtual DidMerge merge(Id into, Id from) = 0;
  // Recomputes node `node`'s data and merges it into class `into`.
  virtual DidMerge merge_node(const EGraph& g, Id into, Id node) = 0;
  virtual void modify(EGraph&, Id) {}
  virtual size_t memory_bytes() const { return 0; }
};

// The usual way to write an analysis: a Data type, make and merge on values.
// Data is kept for live classes only: a class merged away frees its entry for
// the next new class, so memory follows the number of classes, not of ids.
// The pool is a deque: a reference to a class's data stays valid while new
// classes are added (rule appliers read a shape, then add nodes, then read it
// again; with a vector, growing it freed what they held).
template <class Data>
class TypedAnalysis : public Analysis {
 public:
  const Data& data(Id canonical) const { return pool_[where_[canonical]]; }
  Data& data(Id canonical) { return pool_[where_[canonical]]; }

  virtual Data make_data(const EGraph& g, Id node) = 0;
  virtual DidMerge merge_data(Data& into, Data from) = 0;

  void make(const EGraph& g, Id id) final {
    Data d = make_data(g, id);
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
      pool_[slot] = std::move(d);
    } else {
      slot = static_cast<uint32_t>(pool_.size());
      pool_.push_back(std::move(d));
    }
    if (where_.size() <= id) where_.resize(static_cast<size_t>(id) + 1);
    where_[id] = slot;
  }
  DidMerge merge(Id into, Id from) final {
    const uint32_t gone = where_[from];
    const DidMerge did = merge_data(pool_[where_[into]], std::move(pool_[gone]));
    free_.push_back(gone);
    return did;
  }
  DidMerge merge_node(const EGraph& g, Id into, Id node) final {
    Data d = make_data(g, node);
    return merge_data(pool_[where_[into]], std::move(d));
  }
  size_t memory_bytes() const override {
    return where_.capacity() * sizeof(uint32_t) + pool_.size() * sizeof(Data) + free_.capacity() * sizeof(uint32_t);
  }

 private:
  std::vector<uint32_t> where_;  // class id -> entry in pool_
  std::deque<Data> pool_;
  std::vector<uint32_t> free_;
};

}  // namespace sator::eg
