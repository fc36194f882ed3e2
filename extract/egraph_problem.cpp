#include "extract/egraph_problem.h"

#include <cmath>
#include <unordered_map>

namespace sator::extract {

EGraphProblem problem_from_egraph(const eg::EGraph& g, const std::vector<eg::Id>& roots,
                                  const std::function<double(eg::Id node)>& node_cost) {
  EGraphProblem ep;
  std::unordered_map<eg::Id, ClassIdx> index;
  for (eg::Id c : g.class_ids()) {
    index.emplace(g.find(c), static_cast<ClassIdx>(ep.class_id.size()));
    ep.class_id.push_back(g.find(c));
  }
  for (eg::Id c : g.class_ids())
    for (eg::Id n : g.class_nodes(c)) {
      const double cost = node_cost(n);
      if (!std::isfinite(cost)) continue;  // a node the caller forbids
      ProblemNode pn{index.at(g.find(c)), {}, cost};
      for (eg::Id k : g.children(n)) pn.children.push_back(index.at(g.find(k)));
      ep.problem.nodes.push_back(std::move(pn));
      ep.node_id.push_back(n);
    }
  for (eg::Id r : roots) ep.problem.roots.push_back(index.at(g.find(r)));
  ep.problem.index_classes(ep.class_id.size());
  return ep;
}

eg::Extraction to_extraction(const eg::EGraph& g, const EGraphProblem& ep, const Solution& s) {
  eg::Extraction x;
  x.choice.assign(g.num_nodes(), eg::kNoId);
  x.cost.assign(g.num_nodes(), kInfinite);
  for (ClassIdx c = 0; c < s.choice.size(); ++c)
    if (s.choice[c] != kNoNode) {
      x.choice[ep.class_id[c]] = ep.node_id[s.choice[c]];
      x.cost[ep.class_id[c]] = ep.problem.nodes[s.choice[c]].cost;
    }
  return x;
}

}  // namespace sator::extract
