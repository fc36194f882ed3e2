// The roofline model applied to a whole graph: each node's operands at the
// symbols' hints, its estimated time, and the total.
#pragma once

#include <vector>

#include "cost/roofline.h"
#include "ir/graph.h"

namespace sator::cost {

struct NodeCost {
  NodeId node;
  OpCost cost;
};

// One entry per node (placeholders and outputs included, at cost 0).
std::vector<NodeCost> graph_costs(const Graph& g, const Device& d);
double total_seconds(const std::vector<NodeCost>& costs);        // compiled
// Eager: the host's dispatch and the GPU's kernels as a pipeline, in node order.
double total_eager_seconds(const std::vector<NodeCost>& costs, const Device& d);

// Concrete operands of a type at the symbols' hints.
Operand operand_of(const Graph& g, const TensorType& t);

}  // namespace sator::cost
