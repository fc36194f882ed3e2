// A graph loaded into an e-graph, and an extracted choice written back as a
// graph.
//
// Loading adds every node (except `output`) in order, each with its recorded
// type; identical pure nodes fold into one class on the way. Writing back
// keeps every placeholder in its original order and the outputs in theirs,
// reuses original node names where the chosen node is an original one, gives
// new nodes fresh names, re-derives strides where the inputs changed
// (tensor/written_layout.h), and emits `aten.view` only where the input's
// strides are known to allow it (`aten.reshape` otherwise), so the output
// runs in PyTorch.
#pragma once

#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "egraph/egraph.h"
#include "egraph/extraction.h"
#include "tensor/tensor_analysis.h"

namespace sator {

class TensorEGraph {
 public:
  // `explanations`: the e-graph records why each union holds (egraph/explain.h;
  // `optimize --explain` names the rules behind each removal).
  explicit TensorEGraph(const Graph& source, bool explanations = false);
  TensorEGraph(const TensorEGraph&) = delete;

  TensorLanguage lang;
  ShapeProver prover;
  TensorAnalysis analysis;
  eg::EGraph egraph;

  const Graph& source() const { return source_; }
  eg::Id class_of(NodeId n) const { return egraph.find(node_class_[n]); }
  // The e-node loaded for graph node n (shared when n folded into an
  // identical earlier node), and whether an e-node came from the source.
  eg::Id node_of(NodeId n) const { return node_class_[n]; }
  bool is_original(eg::Id node) const { return original_node(node) >= 0; }
  // The input graph's node an e-node came from, or -1 for one a rule made.
  int64_t original_node(eg::Id node) const {
    return node < original_.size() ? original_[node] : -1;
  }
  // The graph's outputs, in order: a class, or nothing for a null output.
  const std::vector<std::optional<eg::Id>>& outputs() const { return outputs_; }

  // Writes the chosen nodes back as a graph named like the source.
  // With `enode_of`: for each written node, the e-node it writes (kNoId for
  // the placeholders and the output node).
  // With `source_of`: for each written node, the source node it copies
  // (-1 for a node a rule made).
  // With `recompute`, a value the source computes at several places with
  // the same op (AOTAutograd's partitioner recomputing a forward value in
  // the backward rather than saving it; hash-consing and the rules make the
  // places one class) is written at each place again, so the recomputation
  // saves the memory it was made to save. Without, it is written once (the
  // fastest form, held from the first place on).
  // `recompute_only`, where given, limits that to these classes.
  Graph write(const eg::Extraction& x, std::vector<eg::Id>* enode_of = nullptr,
              std::vector<int64_t>* source_of = nullptr, bool recompute = true,
              const std::unordered_set<eg::Id>* recompute_only = nullptr) const;

 private:
  const Graph& source_;
  std::vector<eg::Id> node_class_;                 // graph node -> e-node added for it
  std::vector<std::optional<eg::Id>> outputs_;
  // By e-node: the graph node it came from (the first, where the graph
  // computes it twice), or -1. A vector: the writer asks for every node it
  // writes, and a hash map's lookups were a tenth of a 165,000-node write.
  std::vector<int64_t> original_;
  std::map<SymExpr, NodeId> symint_nodes_;         // a graph node computing each symbolic value
  friend class GraphWriter;
};

}  // namespace sator
