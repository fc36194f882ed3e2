// Builds small graphs in code, each node typed by its op's own shape
// function: check-rules' instances of a rule's left-hand side, tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace sator {

struct Inferred;

// Types a node of a single-tensor op from its arguments in `g` (shape and
// dtype from the op's shape function, contiguous strides); throws ShapeError.
void infer_tensor_node(const Graph& g, Node& n);

// Types node `n` as its op's shape function inferred it: one tensor, a
// symbolic integer or a tuple's slots, every tensor with contiguous strides.
void set_inferred_type(Node& n, const Inferred& r);

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name);

  // A new size symbol `s<k>` with a lower bound and a hint (a valid value).
  SymExpr symbol(int64_t min, int64_t hint);
  // A tensor placeholder (role "input") with contiguous strides.
  NodeId input(std::vector<SymExpr> shape, DType dtype = DType::Float32);
  // A node of `op` with its type inferred from the arguments; throws
  // ShapeError (naming the op) if they do not fit its schema or shapes.
  NodeId op(const std::string& op, std::vector<Value> args,
            std::vector<std::pair<std::string, Value>> kwargs = {});
  // `getitem(tuple, index)` for a tuple-producing node.
  NodeId item(NodeId tuple, size_t index);

  const TensorType& type(NodeId n) const;
  // The graph with an output node returning `outputs`.
  Graph finish(const std::vector<NodeId>& outputs) const;

  // Argument helpers.
  static Value ref(NodeId n) { return Value::of_node(n); }
  static Value sizes(const std::vector<SymExpr>& s);  // ints and {"sym"}s
  static Value ints(const std::vector<int64_t>& v);

 private:
  Graph g_;
};

}  // namespace sator
