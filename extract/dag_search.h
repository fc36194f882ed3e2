// The dag extractor's local search (dag_extract.cpp starts it from the
// better of its greedy pass and the tree extraction).
#pragma once

#include <chrono>
#include <vector>

#include "extract/problem.h"

namespace sator::extract {

// Switches one reached class to another of its nodes (or a class and the
// classes that would share what the switch brings in) while that lowers the
// DAG cost `cost` of `choice`, until a pass finds nothing or `deadline`
// passes. `choice` must be acyclic with a finite cost, and stays so. Returns
// whether the search stopped at the deadline (false: it converged).
bool improve_dag(const Problem& p, std::vector<NodeIdx>& choice, double& cost,
                 std::chrono::steady_clock::time_point deadline);

}  // namespace sator::extract
