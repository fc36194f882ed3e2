// An e-graph of the engine as an extraction Problem, and a Solution back as
// the engine-level Extraction the graph writer reads.
#pragma once

#include <functional>
#include <vector>

#include "egraph/egraph.h"
#include "egraph/extraction.h"
#include "extract/problem.h"

namespace sator::extract {

struct EGraphProblem {
  Problem problem;
  std::vector<eg::Id> class_id;  // problem class -> canonical e-class
  std::vector<eg::Id> node_id;   // problem node -> e-node
};

// Every canonical class and every node of finite cost; `roots` are e-classes.
EGraphProblem problem_from_egraph(const eg::EGraph& g, const std::vector<eg::Id>& roots,
                                  const std::function<double(eg::Id node)>& node_cost);

eg::Extraction to_extraction(const eg::EGraph& g, const EGraphProblem& ep, const Solution& s);

}  // namespace sator::extract
