#include "cost/graph_cost.h"

#include <algorithm>
#include <map>

#include "ir/chunked_node.h"

namespace sator::cost {

Operand operand_of(const Graph& g, const TensorType& t) {
  Operand o;
  o.dtype = t.dtype;
  for (const SymExpr& d : t.shape) o.shape.push_back(at_hints(g, d));
  return o;
}

namespace {

// A sator.chunked node: its body once per chunk (the last one smaller), each
// body op dispatched with its in-sequence overhead, plus per chunk a view of
// each sliced input and a kernel per result (a copy into its slice of the
// concatenation, or an add into the sum).
OpCost chunked_cost(const Graph& g, const Node& n, const Device& d) {
  const ChunkedSpec spec = read_chunked_spec(n);
  const Operand rows_operand = operand_of(g, TensorType{{spec.rows}, {}, DType::Int8});
  const std::vector<int64_t> bounds = chunk_bounds(rows_operand.shape.at(0), spec.chunks);
  OpCost total;
  total.kind = CostKind::Memory;
  std::map<int64_t, OpCost> by_size;  // chunks of one size cost the same
  for (size_t c = 0; c + 1 < bounds.size(); ++c) {
    const int64_t rows = bounds[c + 1] - bounds[c];
    if (!by_size.count(rows)) {
      const Graph body = body_with_symbols(g, n, rows);
      OpCost one;
      for (const NodeCost& nc : graph_costs(body, d)) {
        one.flops += nc.cost.flops;
        one.bytes += nc.cost.bytes;
        one.gpu_seconds += nc.cost.gpu_seconds;
        one.seconds += nc.cost.seconds;
        one.host_seconds += nc.cost.host_seconds + (nc.cost.dispatched ? d.eager_in_sequence_s : 0.0);
      }
      const auto& parts = body.nodes.back().args.at(0).list;  // the body's results
      for (size_t i = 0; i < spec.combines.size(); ++i) {
        const Operand out = operand_of(body, n.outputs.at(i).tensor);
        // A cat writes the chunk's rows of the result (read + write); a sum
        // reads the part (maybe narrower: it widens as it adds) and reads and
        // writes the whole result.
        const double moved =
            spec.combines[i].kind == ChunkCombine::Kind::Sum
                ? 2.0 * out.bytes() + operand_of(body, *tensor_of(body, parts.at(i).node)).bytes()
                : 2.0 * out.bytes() * static_cast<double>(rows) / static_cast<double>(std::max<int64_t>(rows_operand.shape[0], 1));
        one.bytes += moved;
        one.gpu_seconds += d.kernel_min_memory_s + moved / d.bandwidth;
        one.seconds += d.kernel_min_memory_s + moved / d.bandwidth + d.launch_s;
        one.host_seconds += d.eager_host_kernel_s + d.eager_in_sequence_s;
      }
      for (const auto& sl : spec.slices)
        if (sl) one.host_seconds += d.eager_host_view_s;
      by_size[rows] = one;
    }
    const OpCost& one = by_size[rows];
    total.flops += one.flops;
    total.bytes += one.bytes;
    total.gpu_seconds += one.gpu_seconds;
    total.seconds += one.seconds;
    total.host_seconds += one.host_seconds;
  }
  total.eager_seconds = std::max(total.host_seconds, total.gpu_seconds);
  total.pipelined_parts = static_cast<int64_t>(bounds.size()) - 1;
  return total;
}

}  // namespace

std::vector<NodeCost> graph_costs(const Graph& g, const Device& d) {
  std::vector<NodeCost> out;
  for (NodeId id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == kChunkedOp) {
      out.push_back({id, chunked_cost(g, n, d)});
      continue;
    }
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
    out.push_back({id, roofline_cost(d, n.op, in, res, op_flags(n.op, n.args, n.kwargs))});
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
    const double dispatch = c.cost.host_seconds + (c.cost.dispatched ? d.eager_in_sequence_s : 0.0);
    const double first_part = dispatch / static_cast<double>(std::max<int64_t>(c.cost.pipelined_parts, 1));
    if (c.cost.gpu_seconds > 0) gpu = std::max(gpu, host + first_part) + c.cost.gpu_seconds;
    host += dispatch;
  }
  return std::max(host, gpu);
}

}  // namespace sator::cost
