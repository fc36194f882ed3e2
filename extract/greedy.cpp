#include "extract/greedy.h"

#include <deque>

namespace sator::extract {

Extraction greedy_extract(const eg::EGraph& g, const std::function<double(eg::Id node)>& node_cost) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Extraction x;
  x.choice.assign(g.num_nodes(), eg::kNoId);
  x.cost.assign(g.num_nodes(), kInf);
  std::deque<eg::Id> work;
  std::vector<uint8_t> queued(g.num_nodes(), 0);
  for (eg::Id c : g.class_ids())
    for (eg::Id n : g.class_nodes(c))
      if (g.children(n).empty()) {
        work.push_back(n);
        queued[n] = 1;
      }
  while (!work.empty()) {
    const eg::Id n = work.front();
    work.pop_front();
    queued[n] = 0;
    double total = node_cost(n);
    for (eg::Id child : g.children(n)) total += x.cost[g.find(child)];
    const eg::Id c = g.find(n);
    if (!(total < x.cost[c])) continue;
    x.cost[c] = total;
    x.choice[c] = n;
    for (eg::Id parent : g.eclass(c).parents)
      if (!queued[parent]) {
        queued[parent] = 1;
        work.push_back(parent);
      }
  }
  return x;
}

}  // namespace sator::extract
