#include "extract/graph_cost.h"

#include <algorithm>

namespace sator::extract {

Operand operand_of(const Graph& g, const TensorType& t) {
  Operand o;
  o.dtype = t.dtype;
  for (const SymExpr& d : t.shape) {
    const auto v = d.evaluate([&](const std::string& name) -> std::optional<int64_t> {
      const Symbol* s = g.find_symbol(name);
      return s ? std::optional<int64_t>(s->hint) : std::nullopt;
    });
    o.shape.push_back(v.value_or(1));
  }
  return o;
}

std::vector<NodeCost> graph_costs(const Graph& g, const Device& d) {
  std::vector<NodeCost> out;
  for (NodeId id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    std::vector<Operand> in, res;
    for (const Value& v : n.args)
      v.for_each_node([&](NodeId ref) {
        if (const TensorType* t = tensor_of(g, ref)) in.push_back(operand_of(g, *t));
      });
    for (const auto& kv : n.kwargs)
      kv.second.for_each_node([&](NodeId ref) {
        if (const TensorType* t = tensor_of(g, ref)) in.push_back(operand_of(g, *t));
      });
    if (n.result == Node::Result::Tensor) res.push_back(operand_of(g, n.tensor));
    for (const OutputSlot& s : n.outputs)
      if (s.kind == OutputSlot::Kind::Tensor) res.push_back(operand_of(g, s.tensor));
    out.push_back({id, roofline_cost(d, n.op, in, res)});
  }
  return out;
}

double total_seconds(const std::vector<NodeCost>& costs) {
  double t = 0;
  for (const NodeCost& c : costs) t += c.cost.seconds;
  return t;
}

double total_eager_seconds(const std::vector<NodeCost>& costs, const Device& d) {
  // Eager PyTorch is a two-stage pipeline: the host dispatches op after op
  // (each costing its dispatch plus the in-sequence overhead), and the GPU
  // runs each kernel once it is queued and the previous one is done. The
  // run ends when both are done.
  double host = 0, gpu = 0;
  for (const NodeCost& c : costs) {
    host += c.cost.host_seconds + (c.cost.dispatched ? d.eager_in_sequence_s : 0.0);
    if (c.cost.gpu_seconds > 0) gpu = std::max(gpu, host) + c.cost.gpu_seconds;
  }
  return std::max(host, gpu);
}

}  // namespace sator::extract
