// An extraction problem, independent of where the e-graph came from (sator's
// tensor e-graph, or an extraction-gym file): classes, nodes with a cost and
// child classes, and root classes. Extractors choose one node per class
// they need; the choice is costed as a tree (a shared child counted once per
// use) and as a DAG (each chosen node counted once).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace sator::extract {

using ClassIdx = uint32_t;
using NodeIdx = uint32_t;
constexpr NodeIdx kNoNode = UINT32_MAX;
constexpr double kInfinite = std::numeric_limits<double>::infinity();

struct ProblemNode {
  ClassIdx cls;
  std::vector<ClassIdx> children;  // in order, repeats allowed
  double cost;
};

struct Problem {
  std::vector<ProblemNode> nodes;
  std::vector<std::vector<NodeIdx>> class_nodes;  // by class
  std::vector<ClassIdx> roots;
  std::vector<std::string> node_names;  // optional: for messages and output

  size_t num_classes() const { return class_nodes.size(); }
  // Fills class_nodes from the nodes' classes (after nodes are added).
  void index_classes(size_t num_classes);
};

struct Solution {
  std::vector<NodeIdx> choice;  // by class; kNoNode where nothing is chosen
  double tree_cost = kInfinite, dag_cost = kInfinite;
  bool proved_optimal = false;  // ILP only: the solver proved it optimal
  bool search_cut = false;      // dag: the local search stopped at its time budget, not converged
  double micros = 0;            // time the extractor took
  std::string note;             // e.g. why an ILP stopped
};

// The DAG cost of a choice: each node reachable from the roots counted once;
// kInfinite if a reachable class has no choice or the choice has a cycle.
double dag_cost(const Problem& p, const std::vector<NodeIdx>& choice);
// The tree cost: each root's tree, shared children counted once per use;
// kInfinite under the same conditions.
double tree_cost(const Problem& p, const std::vector<NodeIdx>& choice);
// Fills both costs of a solution.
void cost_solution(const Problem& p, Solution& s);

// Parent lists: for each class, the nodes that have it as a child (once each).
std::vector<std::vector<NodeIdx>> parents_of(const Problem& p);

}  // namespace sator::extract
