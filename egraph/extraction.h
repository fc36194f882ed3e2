// An extraction (a node chosen per class: what a writer reads back out of
// an e-graph) and egg's greedy bottom-up extractor: for every class, the
// node with the least cost(node) + the costs of its children's classes, found
// by a worklist that re-examines a node's parents whenever a class gets
// cheaper (cycles are harmless: a node on a cycle never beats the entry into
// it). Tree costs count a shared child once per use; extract/'s DAG and ILP
// extractors do not.
#pragma once

#include <functional>
#include <limits>
#include <vector>

#include "egraph/egraph.h"

namespace sator::eg {

struct Extraction {
  std::vector<Id> choice;  // by canonical class id: the chosen node, kNoId if none
  std::vector<double> cost;    // by canonical class id
  bool has(Id cls) const { return cls < choice.size() && choice[cls] != kNoId; }
};

Extraction greedy_extract(const EGraph& g, const std::function<double(Id node)>& node_cost);

}  // namespace sator::eg
