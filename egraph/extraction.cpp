#include "egraph/extraction.h"

#include <deque>

namespace sator::eg {

Extraction greedy_extract(const EGraph& g, const std::function<double(Id node)>& node_cost) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Extraction x;
  x.choice.assign(g.num_nodes(), kNoId);
  x.cost.assign(g.num_nodes(), kInf);
  std::deque<Id> work;
  std::vector<uint8_t> queued(g.num_nodes(), 0);
  for (Id c : g.class_ids())
    for (Id n : g.class_nodes(c))
      if (g.children(n).empty()) {
        work.push_back(n);
        queued[n] = 1;
      }
  while (!work.empty()) {
    const Id n = work.front();
    work.pop_front();
    queued[n] = 0;
    double total = node_cost(n);
    for (Id child : g.children(n)) total += x.cost[g.find(child)];
    const Id c = g.find(n);
    if (!(total < x.cost[c])) continue;
    x.cost[c] = total;
    x.choice[c] = n;
    for (Id parent : g.eclass(c).parents)
      if (!queued[parent]) {
        queued[parent] = 1;
        work.push_back(parent);
      }
  }
  return x;
}

}  // namespace sator::eg
