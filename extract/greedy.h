// Greedy bottom-up extraction: for every class, the node with the least
// cost(node) + the costs of its children's classes, found by a worklist that
// re-examines a node's parents whenever a class gets cheaper (cycles are
// harmless: a node on a cycle never beats the entry into it). Tree costs
// count a shared child once per use; the DAG and ILP extractors of the
// extraction issue will not.
#pragma once

#include <functional>
#include <limits>
#include <vector>

#include "egraph/egraph.h"

namespace sator::extract {

struct Extraction {
  std::vector<eg::Id> choice;  // by canonical class id: the chosen node, kNoId if none
  std::vector<double> cost;    // by canonical class id
  bool has(eg::Id cls) const { return cls < choice.size() && choice[cls] != eg::kNoId; }
};

Extraction greedy_extract(const eg::EGraph& g, const std::function<double(eg::Id node)>& node_cost);

}  // namespace sator::extract
