#include "extract/problem.h"

#include <algorithm>

namespace sator::extract {

void Problem::index_classes(size_t num_classes) {
  class_nodes.assign(num_classes, {});
  for (NodeIdx n = 0; n < nodes.size(); ++n) class_nodes.at(nodes[n].cls).push_back(n);
}

std::vector<std::vector<NodeIdx>> parents_of(const Problem& p) {
  std::vector<std::vector<NodeIdx>> parents(p.num_classes());
  // Each parent once per child class: `last[c]` is the last node that
  // listed c (a search of the children was quadratic in an output e-node's).
  std::vector<NodeIdx> last(p.num_classes(), static_cast<NodeIdx>(p.nodes.size()));
  for (NodeIdx n = 0; n < p.nodes.size(); ++n)
    for (ClassIdx k : p.nodes[n].children)
      if (last[k] != n) {
        last[k] = n;
        parents[k].push_back(n);
      }
  return parents;
}

namespace {

// Depth-first over the chosen nodes from the roots: calls visit(class) once
// per reachable class in post-order; false on a missing choice or a cycle.
template <class Visit>
bool walk_choice(const Problem& p, const std::vector<NodeIdx>& choice, Visit visit) {
  enum : uint8_t { kNew, kOpen, kDone };
  std::vector<uint8_t> state(p.num_classes(), kNew);
  std::vector<std::pair<ClassIdx, size_t>> stack;  // class, next child index
  for (ClassIdx root : p.roots) {
    if (state[root] == kDone) continue;
    if (choice[root] == kNoNode) return false;
    stack.emplace_back(root, 0);
    state[root] = kOpen;
    while (!stack.empty()) {
      auto& [cls, next] = stack.back();
      const auto& kids = p.nodes[choice[cls]].children;
      if (next < kids.size()) {
        const ClassIdx c = kids[next++];
        if (state[c] == kOpen) return false;  // a cycle
        if (state[c] == kDone) continue;
        if (choice[c] == kNoNode) return false;
        state[c] = kOpen;
        stack.emplace_back(c, 0);
      } else {
        state[cls] = kDone;
        visit(cls);
        stack.pop_back();
      }
    }
  }
  return true;
}

}  // namespace

double dag_cost(const Problem& p, const std::vector<NodeIdx>& choice) {
  double total = 0;
  const bool ok = walk_choice(p, choice, [&](ClassIdx c) { total += p.nodes[choice[c]].cost; });
  return ok ? total : kInfinite;
}

double tree_cost(const Problem& p, const std::vector<NodeIdx>& choice) {
  std::vector<double> cost(p.num_classes(), 0.0);
  const bool ok = walk_choice(p, choice, [&](ClassIdx c) {
    const ProblemNode& n = p.nodes[choice[c]];
    double t = n.cost;
    for (ClassIdx k : n.children) t += cost[k];
    cost[c] = t;
  });
  if (!ok) return kInfinite;
  double total = 0;
  for (ClassIdx r : p.roots) total += cost[r];
  return total;
}

void cost_solution(const Problem& p, Solution& s) {
  s.dag_cost = dag_cost(p, s.choice);
  s.tree_cost = tree_cost(p, s.choice);
}

}  // namespace sator::extract
