#include "ir/graph_stats.h"

#include "ir/op_table.h"

namespace sator {

GraphStats compute_stats(const Graph& g) {
  GraphStats s;
  s.nodes = g.nodes.size();
  for (NodeId id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    ++s.op_histogram[n.op];
    if (is_counted_layout_op(n.op)) ++s.layout_ops;
    if (n.op.find("scaled_dot_product") != std::string::npos) ++s.sdpa_ops;
    if (n.op == "placeholder") s.inputs.push_back(id);
    if (n.op == "output" && !n.args.empty()) s.outputs = n.args[0].list;
  }
  return s;
}

}  // namespace sator
