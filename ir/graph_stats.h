// Summary figures of a graph, as `sator info` and reports show them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace sator {

struct GraphStats {
  size_t nodes = 0;
  size_t layout_ops = 0;  // counted as corpus/manifest.json counts them
  size_t sdpa_ops = 0;    // ops whose name contains "scaled_dot_product"
  std::map<std::string, size_t> op_histogram;
  std::vector<NodeId> inputs;   // placeholders, in order
  std::vector<Value> outputs;   // the output node's results
};

GraphStats compute_stats(const Graph& g);

}  // namespace sator
