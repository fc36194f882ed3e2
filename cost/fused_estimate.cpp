#include "cost/fused_estimate.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "ir/chunked_node.h"

namespace sator::cost {

namespace {

// What a node is to the fusion: graph input/output, an alias of another
// node's result (views, getitem), a memory-bound op Inductor generates a
// kernel for, or a library call (matmul, attention, convolution) it does not.
enum class Part : uint8_t { Io, Alias, Fusible, Extern };

Part part_of(const Node& n, const OpCost& c) {
  if (n.op == "placeholder" || n.op == "get_attr" || n.op == "output") return Part::Io;
  if (n.op == kChunkedOp) return Part::Extern;  // its own loop of kernels, priced by graph_cost
  switch (c.kind) {
    case CostKind::Free: return Part::Alias;
    case CostKind::Memory:
    case CostKind::Copy: return Part::Fusible;
    default: return Part::Extern;
  }
}

// The first node an op reads (an alias's base).
std::optional<NodeId> first_input(const Node& n) {
  std::optional<NodeId> first;
  for (const Value& v : n.args) {
    v.for_each_node([&](NodeId r) {
      if (!first) first = r;
    });
    if (first) break;
  }
  return first;
}

double result_bytes(const Graph& g, const Node& n) {
  double b = 0;
  if (n.result == Node::Result::Tensor) b += operand_of(g, n.tensor).bytes();
  for (const OutputSlot& s : n.outputs)
    if (s.kind == OutputSlot::Kind::Tensor) b += operand_of(g, s.tensor).bytes();
  return b;
}

// The numel of a node's largest tensor operand or result: the loop a
// kernel computing it runs over.
double iteration_space(const Graph& g, const Node& n) {
  double most = 0;
  const auto take = [&](const TensorType& t) {
    most = std::max(most, static_cast<double>(operand_of(g, t).numel()));
  };
  const auto read = [&](NodeId r) {
    if (const TensorType* t = tensor_of(g, r)) take(*t);
  };
  for (const Value& v : n.args) v.for_each_node(read);
  for (const auto& kv : n.kwargs) kv.second.for_each_node(read);
  if (n.result == Node::Result::Tensor) take(n.tensor);
  for (const OutputSlot& s : n.outputs)
    if (s.kind == OutputSlot::Kind::Tensor) take(s.tensor);
  return most;
}

struct Groups {
  std::vector<NodeId> parent;
  NodeId find(NodeId x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(NodeId a, NodeId b) { parent[find(a)] = find(b); }
};

}  // namespace

FusedEstimate fused_estimate(const Graph& g, const Device& d, const std::vector<NodeCost>& costs) {
  const size_t n = g.nodes.size();
  std::vector<Part> part(n);
  std::vector<NodeId> source(n);      // an alias's base, through aliases; else the node
  std::vector<bool> backward(n, false);  // reads a tangent, at any depth
  std::vector<double> space(n, 0);
  for (NodeId i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    part[i] = part_of(node, costs[i].cost);
    source[i] = i;
    if (part[i] == Part::Alias)
      if (const auto base = first_input(node)) source[i] = source[*base];
    backward[i] = node.op == "placeholder" && node.role == Role::Tangent;
    const auto from = [&](NodeId r) { backward[i] = backward[i] || backward[r]; };
    for (const Value& v : node.args) v.for_each_node(from);
    for (const auto& kv : node.kwargs) kv.second.for_each_node(from);
    if (part[i] == Part::Fusible) space[i] = iteration_space(g, node);
  }
  // Each node's readers, by the base they read (aliases see through).
  std::vector<std::vector<NodeId>> readers(n);
  for (NodeId i = 0; i < n; ++i) {
    if (part[i] == Part::Alias) continue;
    const auto add = [&](NodeId r) { readers[source[r]].push_back(i); };
    for (const Value& v : g.nodes[i].args) v.for_each_node(add);
    for (const auto& kv : g.nodes[i].kwargs) kv.second.for_each_node(add);
  }
  Groups groups{std::vector<NodeId>(n)};
  std::iota(groups.parent.begin(), groups.parent.end(), NodeId{0});
  for (NodeId c = 0; c < n; ++c) {
    if (part[c] != Part::Fusible) continue;
    const auto join = [&](NodeId r) {
      const NodeId p = source[r];
      if (part[p] == Part::Fusible && backward[p] == backward[c] && space[p] == space[c]) groups.unite(p, c);
    };
    for (const Value& v : g.nodes[c].args) v.for_each_node(join);
    for (const auto& kv : g.nodes[c].kwargs) kv.second.for_each_node(join);
  }
  // Each group's traffic: what it reads from outside (each base once, no
  // more than the alias read shows: a slice reads its part, an expansion its
  // base) and what it writes that is read outside it.
  std::unordered_map<NodeId, std::unordered_map<NodeId, double>> reads;  // group -> base -> bytes
  std::unordered_map<NodeId, double> writes;
  FusedEstimate e;
  for (NodeId i = 0; i < n; ++i) {
    if (part[i] == Part::Extern) {
      e.extern_seconds += costs[i].cost.seconds;
      continue;
    }
    if (part[i] != Part::Fusible) continue;
    const NodeId group = groups.find(i);
    auto& in = reads[group];
    writes[group];  // every group is a kernel, even one writing nothing read
    const auto read = [&](NodeId r) {
      const NodeId base = source[r];
      if (part[base] == Part::Fusible && groups.find(base) == group) return;
      const double bytes = std::min(result_bytes(g, g.nodes[r]), result_bytes(g, g.nodes[base]));
      double& b = in[base];
      b = std::max(b, bytes);
    };
    for (const Value& v : g.nodes[i].args) v.for_each_node(read);
    for (const auto& kv : g.nodes[i].kwargs) kv.second.for_each_node(read);
    const bool escapes = std::any_of(readers[i].begin(), readers[i].end(), [&](NodeId r) {
      return part[r] != Part::Fusible || groups.find(r) != group;
    });
    if (escapes) writes[group] += result_bytes(g, g.nodes[i]);
  }
  for (const auto& [group, written] : writes) {
    double bytes = written;
    for (const auto& [base, b] : reads[group]) bytes += b;
    e.group_bytes += bytes;
    e.seconds += d.kernel_min_memory_s + bytes / d.bandwidth + d.launch_s;
    ++e.groups;
  }
  e.seconds += e.extern_seconds;
  return e;
}

FusedEstimate fused_estimate(const Graph& g, const Device& d) { return fused_estimate(g, d, graph_costs(g, d)); }

}  // namespace sator::cost
