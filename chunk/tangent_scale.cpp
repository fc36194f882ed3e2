#include "chunk/tangent_scale.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "memory/peak_memory.h"
#include "chunk/region.h"
#include "ir/op_table.h"
#include "ir/chunked_node.h"
#include "ir/graph_builder.h"

namespace sator::chunk {

namespace {

constexpr NodeId kNone = ~NodeId{0};

bool is_zero_number(const Value& v) { return (v.kind == Value::Kind::Int && v.i == 0) || (v.kind == Value::Kind::Float && v.f == 0.0); }

// A constant zero tensor: adding it, or choosing it in a where, keeps any degree.
bool is_zero_tensor(const Graph& g, NodeId id) {
  const Node& n = g.nodes[id];
  if (n.op == "aten.scalar_tensor.default") return !n.args.empty() && is_zero_number(n.args[0]);
  if (n.op == "aten.full.default") return n.args.size() > 1 && is_zero_number(n.args[1]);
  return n.op == "aten.zeros.default" || n.op == "aten.zeros_like.default";
}

// The degree of an operand, and whether it is a constant zero.
struct Operand {
  int8_t degree = 0;
  bool zero = false;
};

Operand operand(const Graph& g, const std::vector<int8_t>& deg, const Value& v) {
  if (v.is_node()) return {deg[v.node], deg[v.node] == 0 && is_zero_tensor(g, v.node)};
  return {0, is_zero_number(v)};
}

// A sum of terms is homogeneous when its non-zero terms all are, of one degree.
int8_t sum_degree(const std::vector<Operand>& terms) {
  int8_t d = -2;  // no non-zero term yet
  for (const Operand& t : terms) {
    if (t.degree == kNotHomogeneous) return kNotHomogeneous;
    if (t.zero) continue;
    if (d != -2 && d != t.degree) return kNotHomogeneous;
    d = t.degree;
  }
  return d == -2 ? int8_t{0} : d;
}

int8_t product_degree(int8_t a, int8_t b) {
  if (a == kNotHomogeneous || b == kNotHomogeneous || a + b > 1) return kNotHomogeneous;
  return static_cast<int8_t>(a + b);
}


// Every node reference of `n` outside the listed argument positions.
bool others_constant(const Node& n, const std::vector<int8_t>& deg, std::initializer_list<size_t> positions) {
  bool ok = true;
  for (size_t i = 0; i < n.args.size(); ++i)
    if (std::find(positions.begin(), positions.end(), i) == positions.end())
      n.args[i].for_each_node([&](NodeId a) { ok &= deg[a] == 0; });
  for (const auto& kv : n.kwargs) kv.second.for_each_node([&](NodeId a) { ok &= deg[a] == 0; });
  return ok;
}

int8_t node_degree(const Graph& g, const Node& n, const std::vector<int8_t>& deg) {
  bool any = false;
  for (const Value& v : n.args) v.for_each_node([&](NodeId a) { any |= deg[a] != 0; });
  for (const auto& kv : n.kwargs) kv.second.for_each_node([&](NodeId a) { any |= deg[a] != 0; });
  if (!any) return 0;
  const std::string& op = n.op;
  auto arg = [&](size_t i) { return i < n.args.size() ? operand(g, deg, n.args[i]) : Operand{}; };
  if (op_has(op, OpFact::LinearInFirst)) return others_constant(n, deg, {0}) ? arg(0).degree : kNotHomogeneous;
  if (op == "aten.mul.Tensor" || op == "aten.mul.Scalar" || op == "aten.mm.default" || op == "aten.bmm.default" ||
      op == "aten.matmul.default")
    return others_constant(n, deg, {0, 1}) ? product_degree(arg(0).degree, arg(1).degree) : kNotHomogeneous;
  if (op == "aten.add.Tensor" || op == "aten.sub.Tensor")
    return others_constant(n, deg, {0, 1}) ? sum_degree({arg(0), arg(1)}) : kNotHomogeneous;
  if (op == "aten.where.self") return others_constant(n, deg, {1, 2}) ? sum_degree({arg(1), arg(2)}) : kNotHomogeneous;
  if (op == "aten.cat.default" && !n.args.empty() && n.args[0].is_list()) {
    std::vector<Operand> terms;
    for (const Value& v : n.args[0].list) terms.push_back(operand(g, deg, v));
    return others_constant(n, deg, {0}) ? sum_degree(terms) : kNotHomogeneous;
  }
  if (op == "aten.addmm.default")
    return others_constant(n, deg, {0, 1, 2})
               ? sum_degree({arg(0), Operand{product_degree(arg(1).degree, arg(2).degree), false}})
               : kNotHomogeneous;
  if (op == "aten.linear.default")
    return others_constant(n, deg, {0, 1, 2})
               ? sum_degree({arg(2), Operand{product_degree(arg(0).degree, arg(1).degree), false}})
               : kNotHomogeneous;
  if (op == "aten.scatter.value") {
    // scatter(self, dim, index, value): the written value is a constant.
    const bool value_zero = n.args.size() > 3 && is_zero_number(n.args[3]);
    if (!others_constant(n, deg, {0})) return kNotHomogeneous;
    return arg(0).degree == 0 || value_zero ? arg(0).degree : kNotHomogeneous;
  }
  if (op == "aten.scatter.src") return others_constant(n, deg, {0, 3}) ? sum_degree({arg(0), arg(3)}) : kNotHomogeneous;
  return kNotHomogeneous;
}

bool scalar_tensor_type(const Graph& g, const TensorType& t) {
  return memory::tensor_bytes(g, t) == static_cast<double>(dtype_bytes(t.dtype));
}

std::string unique_name(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int i = 2; std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.name == name; }); ++i)
    name = base + "_" + std::to_string(i);
  return name;
}

Value remap(const Value& v, const std::vector<NodeId>& to) {
  Value out = v;
  if (v.is_node()) out.node = to.at(v.node);
  for (Value& x : out.list) x = remap(x, to);
  return out;
}

}  // namespace

std::vector<int8_t> tangent_degrees(const Graph& g, std::vector<int8_t> deg) {
  deg.resize(g.nodes.size(), 0);
  for (NodeId id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == "placeholder" || n.op == "output") continue;
    if (n.op == kChunkedOp) {
      bool any = false;
      n.args.at(0).for_each_node([&](NodeId a) { any |= deg[a] != 0; });
      deg[id] = any ? kNotHomogeneous : 0;  // a node's results: see scale_by_tangent
      continue;
    }
    deg[id] = node_degree(g, n, deg);
  }
  return deg;
}

TangentScaling scale_by_tangent(const Graph& g, NodeId chunked) {
  TangentScaling r;
  r.graph = g;
  const Node& c = g.nodes.at(chunked);
  const ChunkedSpec spec = read_chunked_spec(c);
  // The tangents the node's inputs depend on, directly or through other
  // nodes: the tangent placeholders among their ancestors (one walk up;
  // a degree is nonzero exactly where a value depends on the tangent).
  std::vector<NodeId> tangents;
  {
    std::vector<bool> seen(g.nodes.size(), false);
    std::vector<NodeId> stack(spec.inputs.begin(), spec.inputs.end());
    while (!stack.empty()) {
      const NodeId id = stack.back();
      stack.pop_back();
      if (id >= g.nodes.size() || seen[id]) continue;
      seen[id] = true;
      const Node& n = g.nodes[id];
      if (n.op == "placeholder" && n.role == Role::Tangent) tangents.push_back(id);
      for (const Value& v : n.args) v.for_each_node([&](NodeId a) { stack.push_back(a); });
      for (const auto& kv : n.kwargs) kv.second.for_each_node([&](NodeId a) { stack.push_back(a); });
    }
    std::sort(tangents.begin(), tangents.end());
  }
  if (tangents.empty()) return r;
  if (tangents.size() > 1) {
    r.why_not = "it reads " + std::to_string(tangents.size()) + " tangents";
    return r;
  }
  const NodeId t = tangents.front();
  const Node& tn = g.nodes[t];
  if (!scalar_tensor_type(g, tn.tensor)) {
    r.why_not = "its tangent " + tn.name + " is not a scalar";
    return r;
  }
  std::vector<int8_t> seed(g.nodes.size(), 0);
  seed[t] = 1;
  const std::vector<int8_t> deg = tangent_degrees(g, seed);
  // The body's degrees from its inputs'; every result must be 0 or 1.
  const Graph& body = c.body.at(0);
  std::vector<int8_t> body_seed(body.nodes.size(), 0);
  size_t k = 0;
  for (NodeId b = 0; b < body.nodes.size(); ++b)
    if (body.nodes[b].op == "placeholder") {
      const int8_t d = deg[spec.inputs.at(k++)];
      if (d == kNotHomogeneous) {
        r.why_not = "input " + g.nodes[spec.inputs[k - 1]].name + " is not linear in the tangent " + tn.name;
        return r;
      }
      body_seed[b] = d;
    }
  const std::vector<int8_t> body_deg = tangent_degrees(body, body_seed);
  std::vector<int8_t> result_deg;
  for (const Value& v : body.nodes.back().args.at(0).list) {
    const int8_t d = v.is_node() ? body_deg[v.node] : 0;
    if (d == kNotHomogeneous) {
      r.why_not = "a result is not linear in the tangent " + tn.name;
      return r;
    }
    result_deg.push_back(d);
  }

  // The graph again: before the node, t = 1 and the t-dependent nodes the
  // node reads recomputed from it; after the node's getitems, the results of
  // degree 1 multiplied by t.
  std::vector<bool> cone(g.nodes.size(), false);  // degree-1 ancestors of the node's inputs
  std::vector<NodeId> stack;
  for (NodeId in : spec.inputs)
    if (deg[in] == 1) stack.push_back(in);
  while (!stack.empty()) {
    const NodeId x = stack.back();
    stack.pop_back();
    if (cone[x] || x == t || deg[x] != 1) continue;
    cone[x] = true;
    for (const Value& v : g.nodes[x].args) v.for_each_node([&](NodeId a) { stack.push_back(a); });
    for (const auto& kv : g.nodes[x].kwargs) kv.second.for_each_node([&](NodeId a) { stack.push_back(a); });
  }
  Graph out = g;
  out.nodes.clear();
  std::vector<NodeId> to(g.nodes.size(), kNone), to_one(g.nodes.size(), kNone);
  auto push = [&](Node n) {
    out.nodes.push_back(std::move(n));
    return static_cast<NodeId>(out.nodes.size() - 1);
  };
  NodeId id = 0;
  for (; id < chunked; ++id) {
    Node n = g.nodes[id];
    for (Value& v : n.args) v = remap(v, to);
    for (auto& kv : n.kwargs) kv.second = remap(kv.second, to);
    to[id] = push(std::move(n));
  }
  Node one;
  one.name = unique_name(g, tn.name + "_as_one");
  one.has_args = true;
  const bool zero_d = tn.tensor.shape.empty();
  one.op = zero_d ? "aten.scalar_tensor.default" : "aten.full.default";
  one.args = zero_d ? std::vector<Value>{Value::of_float(1.0)}
                    : std::vector<Value>{Value::of_list({}), Value::of_float(1.0)};
  if (!zero_d)
    for (const SymExpr& d : tn.tensor.shape) one.args[0].list.push_back(Value::of_int(d.as_constant().value_or(1)));
  one.kwargs = {{"dtype", Value::of_dtype(tn.tensor.dtype)}};
  if (auto dev = graph_device(g)) one.kwargs.push_back({"device", *dev});
  infer_tensor_node(out, one);
  to_one[t] = push(std::move(one));
  for (NodeId x = 0; x < chunked; ++x) {
    if (!cone[x]) continue;
    Node n = g.nodes[x];
    n.name = unique_name(g, n.name + "_t1");
    std::vector<NodeId> map = to;
    for (NodeId y = 0; y < chunked; ++y)
      if (to_one[y] != kNone) map[y] = to_one[y];
    for (Value& v : n.args) v = remap(v, map);
    for (auto& kv : n.kwargs) kv.second = remap(kv.second, map);
    to_one[x] = push(std::move(n));
  }
  Node cn = c;
  for (Value& v : cn.args[0].list) v.node = to_one[v.node] != kNone ? to_one[v.node] : to[v.node];
  const NodeId new_c = push(std::move(cn));
  to[chunked] = new_c;
  // The getitems that follow the node, then their scaled values.
  std::vector<NodeId> items;
  for (id = chunked + 1; id < g.nodes.size() && g.nodes[id].op == "getitem" && g.nodes[id].args.at(0).is_node() &&
                         g.nodes[id].args[0].node == chunked;
       ++id) {
    Node n = g.nodes[id];
    n.args[0].node = new_c;
    to[id] = push(std::move(n));
    items.push_back(id);
  }
  for (NodeId item : items) {
    const auto index = static_cast<size_t>(g.nodes[item].args.at(1).i);
    if (result_deg.at(index) != 1) continue;
    Node m;
    m.name = unique_name(g, g.nodes[item].name + "_by_tangent");
    m.op = "aten.mul.Tensor";
    m.has_args = true;
    m.args = {Value::of_node(to[item]), Value::of_node(to[t])};
    infer_tensor_node(out, m);
    to[item] = push(std::move(m));
    ++r.scaled_results;
  }
  for (; id < g.nodes.size(); ++id) {
    Node n = g.nodes[id];
    for (Value& v : n.args) v = remap(v, to);
    for (auto& kv : n.kwargs) kv.second = remap(kv.second, to);
    to[id] = push(std::move(n));
  }
  r.graph = std::move(out);
  r.tangent = tn.name;
  return r;
}

}  // namespace sator::chunk
