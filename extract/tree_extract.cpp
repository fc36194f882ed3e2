#include <chrono>
#include <deque>

#include "extract/extractors.h"

namespace sator::extract {

Solution extract_tree(const Problem& p) {
  const auto start = std::chrono::steady_clock::now();
  Solution s;
  s.choice.assign(p.num_classes(), kNoNode);
  std::vector<double> best(p.num_classes(), kInfinite);
  const auto parents = parents_of(p);
  // Worklist fixpoint: a node is re-examined whenever one of its child
  // classes gets cheaper (a node on a cycle never beats the way into it).
  std::deque<NodeIdx> work;
  std::vector<bool> queued(p.nodes.size(), true);
  for (NodeIdx n = 0; n < p.nodes.size(); ++n) work.push_back(n);
  while (!work.empty()) {
    const NodeIdx n = work.front();
    work.pop_front();
    queued[n] = false;
    const ProblemNode& node = p.nodes[n];
    double c = node.cost;
    for (ClassIdx k : node.children) c += best[k];
    if (!(c < best[node.cls])) continue;
    best[node.cls] = c;
    s.choice[node.cls] = n;
    for (NodeIdx parent : parents[node.cls])
      if (!queued[parent]) queued[parent] = true, work.push_back(parent);
  }
  cost_solution(p, s);
  s.micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace sator::extract
