// Runs every known op's shape function over a graph and compares the result
// with what the file recorded (symbolic sizes compared through the prover).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_prover.h"

namespace sator {

struct ShapeIssue {
  NodeId node;
  std::string message;
};

struct ShapeCheckReport {
  size_t checked = 0;  // nodes whose type was inferred and compared
  size_t opaque = 0;   // nodes of ops without a shape function (recorded type kept)
  std::vector<std::string> opaque_ops;  // distinct, in first-seen order
  std::vector<ShapeIssue> issues;       // mismatches and argument errors
};

ShapeCheckReport check_shapes(const Graph& g, ShapeProver& prover);

// Throws GraphError for the first issue check_shapes finds, naming `file`,
// the node, and how many more there are.
void require_consistent_shapes(const Graph& g, const ShapeCheckReport& report, const std::string& file);

// Reads, validates and shape-checks a file; throws GraphError naming the file
// and the first offending node.
Graph load_graph(const std::string& path);

}  // namespace sator
