// The extractors over a Problem (extract/problem.h):
//   tree — egg's bottom-up fixpoint: each class's cheapest node by tree cost;
//   dag  — greedy with sharing (extraction-gym's faster-greedy-dag: a class's
//          cost is the cost of the set of distinct nodes below its choice),
//          started also from the tree solution, then improved by local search
//          (switching one class's node while the DAG cost drops) within a
//          time budget; the best of these is returned;
//   ilp  — CBC: one binary per node, roots chosen, a chosen node's child
//          classes chosen, acyclicity by class levels; warm-started from dag,
//          time-limited, saying whether optimality was proved.
// Every solution returned is acyclic and covers the roots (or reports an
// infinite cost when the e-graph has no finite extraction).
#pragma once

#include "extract/problem.h"

namespace sator::extract {

Solution extract_tree(const Problem& p);

struct DagOptions {
  double improve_seconds = 0.5;  // local search budget (0: none)
  // A solution known to be feasible (by class; kNoNode where it chooses
  // nothing), e.g. the input graph's own form: where the search ends above
  // its DAG cost, it searches again from it, so that the result is never
  // dearer than it. Empty: none.
  std::vector<NodeIdx> known;
};
Solution extract_dag(const Problem& p, const DagOptions& options = {});

struct IlpOptions {
  double time_limit_s = 60.0;
  bool warm_start = true;  // from extract_dag
};
Solution extract_ilp(const Problem& p, const IlpOptions& options = {});

}  // namespace sator::extract
