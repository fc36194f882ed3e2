// The e-class analysis hook (egg's Analysis: make / merge / modify).
//
// The engine calls make when a class is created, merge when two classes are
// unioned (and when rebuilding re-derives a node's data), and modify after
// either, where an analysis may add nodes, union classes or prune (e.g.
// constant folding). Data lives in the analysis, indexed by class id; the
// engine never sees its type.
#pragma once

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
};

// The usual way to write an analysis: a Data type, make and merge on values.
template <class Data>
class TypedAnalysis : public Analysis {
 public:
  const Data& data(Id canonical) const { return data_[canonical]; }
  Data& data(Id canonical) { return data_[canonical]; }

  virtual Data make_data(const EGraph& g, Id node) = 0;
  virtual DidMerge merge_data(Data& into, Data from) = 0;

  void make(const EGraph& g, Id id) final {
    Data d = make_data(g, id);
    if (data_.size() <= id) data_.resize(id + 1);
    data_[id] = std::move(d);
  }
  DidMerge merge(Id into, Id from) final { return merge_data(data_[into], std::move(data_[from])); }
  DidMerge merge_node(const EGraph& g, Id into, Id node) final { return merge_data(data_[into], make_data(g, node)); }

 private:
  std::vector<Data> data_;
};

}  // namespace sator::eg
