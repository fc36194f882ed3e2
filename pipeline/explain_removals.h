// `optimize --explain`'s other half: the input's nodes the output no longer
// computes, and the rules that took each away (issue 42: two user rules took
// a graph from 6 nodes to 3 and --explain named only the one node a rule
// had made). A node is removed where the output computes its class by
// another node (the rules on the proof that the two are equal, from the
// e-graph's explanations), or no longer computes its class at all (what
// read it was rewritten), or computes it by an identical input node
// (loading folded the two into one e-node; no rule).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "tensor/tensor_egraph.h"

namespace sator::pipeline {

struct Removal {
  std::string node;         // the input node's name
  std::string replaced_by;  // the output node computing its value, or "" (no longer read)
  std::vector<std::string> rules;  // the rules proving the two equal, in proof order, each once
  bool explained = true;    // false: past kMaxExplainedRemovals, the rules not looked up
};

// Removals explained with their rules (each a walk of the proof forest);
// the rest are listed without.
constexpr size_t kMaxExplainedRemovals = 500;

// t must have been built with explanations (TensorEGraph's `explanations`);
// enode_of maps each output node to the e-node it writes (kNoId: none).
std::vector<Removal> explain_removals(const TensorEGraph& t, const Graph& output, const std::vector<eg::Id>& enode_of);

}  // namespace sator::pipeline
