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
  // Each forward attention call as "op causal|full masked|unmasked": a call
  // that changes kernel, mask or is_causal changes its line.
  std::vector<std::string> attention_calls;
  std::map<std::string, size_t> op_histogram;
  std::vector<NodeId> inputs;   // placeholders, in order
  std::vector<Value> outputs;   // the output node's results
};

GraphStats compute_stats(const Graph& g);

// How many of `out`'s attention calls `in` does not have (as multisets of
// GraphStats::attention_calls): fused blocks and calls rewritten alike.
size_t attention_calls_changed(const std::vector<std::string>& in, const std::vector<std::string>& out);

}  // namespace sator
