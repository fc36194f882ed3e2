#include "interp/verify_regions.h"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "interp/compare.h"
#include "ir/name_index.h"

namespace sator::interp {

namespace {

// Node names to ids (the graph's names are unique: the reader refuses two).
NameIndex index_names(const Graph& g) {
  NameIndex index;
  index.reserve(g.nodes.size());
  for (const Node& n : g.nodes) index.add(n.name);
  return index;
}

bool is_tensor_placeholder(const Node& n) { return n.op == "placeholder" && n.result == Node::Result::Tensor; }

// Two argument values alike, node references compared by name.
bool same_value(const Value& a, const Graph& ga, const Value& b, const Graph& gb) {
  if (a.kind != b.kind) return false;
  if (a.kind == Value::Kind::Node) return ga.nodes[a.node].name == gb.nodes[b.node].name;
  if (a.kind != Value::Kind::List) return a == b;
  if (a.list.size() != b.list.size()) return false;
  for (size_t k = 0; k < a.list.size(); ++k)
    if (!same_value(a.list[k], ga, b.list[k], gb)) return false;
  return true;
}

// The same op on arguments naming the same nodes.
bool same_definition(const Node& a, const Graph& ga, const Node& b, const Graph& gb) {
  if (a.op != b.op || a.result != b.result || a.args.size() != b.args.size() || a.kwargs.size() != b.kwargs.size() ||
      a.body != b.body || a.value != b.value)
    return false;
  for (size_t k = 0; k < a.args.size(); ++k)
    if (!same_value(a.args[k], ga, b.args[k], gb)) return false;
  for (size_t k = 0; k < a.kwargs.size(); ++k)
    if (a.kwargs[k].first != b.kwargs[k].first || !same_value(a.kwargs[k].second, ga, b.kwargs[k].second, gb))
      return false;
  return true;
}

template <class Fn>
void for_each_operand(const Node& n, Fn&& fn) {
  for (const Value& v : n.args) v.for_each_node(fn);
  for (const auto& kv : n.kwargs) kv.second.for_each_node(fn);
}

const Value* output_list(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.op == "output" && !n.args.empty() && n.args[0].is_list()) return &n.args[0];
  return nullptr;
}

// What the output graph's nodes are, against the input's.
struct Anchors {
  std::vector<std::optional<NodeId>> in_node;  // the input node of the same name and tensor type
  std::vector<char> leaf;                      // an anchor computed from the graph's inputs
  std::vector<char> unchanged;                 // computed as the input computes it

  Anchors(const Graph& input, const NameIndex& in_index, const Graph& output) {
    const size_t n = output.nodes.size();
    in_node.resize(n);
    leaf.assign(n, 0);
    unchanged.assign(n, 0);
    std::vector<char> data(n, 0);  // depends on a tensor placeholder
    for (NodeId j = 0; j < n; ++j) {
      const Node& o = output.nodes[j];
      data[j] = is_tensor_placeholder(o);
      for_each_operand(o, [&](NodeId k) { data[j] |= data[k]; });
      const auto i = in_index.find(o.name);
      if (i && o.result == Node::Result::Tensor && input.nodes[*i].result == Node::Result::Tensor &&
          o.tensor.shape == input.nodes[*i].tensor.shape && o.tensor.dtype == input.nodes[*i].tensor.dtype)
        in_node[j] = i;
      leaf[j] = (in_node[j] && data[j]) || is_tensor_placeholder(o);
      if (!i || !same_definition(o, output, input.nodes[*i], input)) continue;
      bool alike = true;
      for_each_operand(o, [&](NodeId k) { alike &= leaf[k] || unchanged[k]; });
      unchanged[j] = alike;
    }
  }
};

// One region's two sides as graphs of their own: the leaves (shared random
// inputs, the same in both and in the same order), then the nodes computing
// the root from them, in the graph's order.
struct RegionGraphs {
  std::vector<std::string> leaves;
  std::vector<const TensorType*> leaf_types;
  Graph in, out;
};

void add_leaf(RegionGraphs& r, const Node& n) {
  if (std::find(r.leaves.begin(), r.leaves.end(), n.name) != r.leaves.end()) return;
  r.leaves.push_back(n.name);
  r.leaf_types.push_back(&n.tensor);
}

// The nodes of g that compute `root` back to the leaves (`is_leaf` adds and
// stops there).
template <class IsLeaf>
std::vector<char> region_nodes(const Graph& g, NodeId root, IsLeaf&& is_leaf) {
  std::vector<char> take(g.nodes.size(), 0);
  std::vector<NodeId> todo = {root};
  while (!todo.empty()) {
    const NodeId k = todo.back();
    todo.pop_back();
    if (take[k] || is_leaf(k, k == root)) continue;
    take[k] = 1;
    for_each_operand(g.nodes[k], [&](NodeId a) { todo.push_back(a); });
  }
  return take;
}

Value remapped(const Value& v, const std::vector<int64_t>& to) {
  if (v.kind == Value::Kind::Node) {
    if (to[v.node] < 0) throw InterpError("verify by regions: a node outside its region");
    return Value::of_node(static_cast<NodeId>(to[v.node]));
  }
  if (v.kind != Value::Kind::List) return v;
  Value r = v;
  for (Value& x : r.list) x = remapped(x, to);
  return r;
}

Graph region_graph(const Graph& g, const NameIndex& names, const std::vector<char>& take, NodeId root,
                   const RegionGraphs& r) {
  Graph s;
  s.name = g.name + ":" + g.nodes[root].name;
  s.symbols = g.symbols;
  std::vector<int64_t> to(g.nodes.size(), -1);
  for (size_t k = 0; k < r.leaves.size(); ++k) {
    Node p;
    p.name = r.leaves[k];
    p.op = "placeholder";
    p.role = Role::Input;
    p.result = Node::Result::Tensor;
    p.tensor = *r.leaf_types[k];
    if (const auto id = names.find(p.name)) to[*id] = static_cast<int64_t>(s.nodes.size());
    s.nodes.push_back(std::move(p));
  }
  for (NodeId k = 0; k < g.nodes.size(); ++k) {
    if (!take[k]) continue;
    Node n = g.nodes[k];
    for (Value& v : n.args) v = remapped(v, to);
    for (auto& kv : n.kwargs) kv.second = remapped(kv.second, to);
    to[k] = static_cast<int64_t>(s.nodes.size());
    s.nodes.push_back(std::move(n));
  }
  Node out;
  out.name = "output";
  out.op = "output";
  out.has_args = true;
  out.args = {Value::of_list({remapped(Value::of_node(root), to)})};
  s.nodes.push_back(std::move(out));
  return s;
}

}  // namespace

VerifyResult verify_by_regions(const Graph& input, const Graph& output, const VerifyOptions& options,
                               const std::string& whole_not) {
  VerifyOptions o = options;
  if (o.dtype_floor < 0) o.dtype_floor = verify_dtype_floor(input);
  o.dtype_factor = std::max(o.dtype_factor, o.region_dtype_factor);
  o.noise = std::max(o.noise, o.region_noise);
  const auto start = std::chrono::steady_clock::now();
  VerifyResult r;
  r.by_regions = true;
  r.symbols = small_symbols(input);
  const auto done = [&]() -> VerifyResult {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };
  const NameIndex in_names = index_names(input), out_names = index_names(output);
  const Anchors a(input, in_names, output);

  // The regions: (output node, input node) pairs claimed equal whose
  // computations differ.
  std::vector<std::pair<NodeId, NodeId>> roots;
  for (NodeId j = 0; j < output.nodes.size(); ++j)
    if (a.in_node[j] && !a.unchanged[j]) roots.emplace_back(j, *a.in_node[j]);
  const Value *out_list = output_list(output), *in_list = output_list(input);
  if (!out_list || !in_list || out_list->list.size() != in_list->list.size()) {
    r.status = VerifyResult::Status::Failed;
    r.detail = "the output lists differ in length";
    return done();
  }
  for (size_t k = 0; k < out_list->list.size(); ++k) {
    const Value &x = out_list->list[k], &y = in_list->list[k];
    if (x.is_node() && y.is_node()) {
      if (output.nodes[x.node].name != input.nodes[y.node].name || !a.in_node[x.node])
        roots.emplace_back(x.node, y.node);
    } else if (!same_value(x, output, y, input)) {
      r.status = VerifyResult::Status::Failed;
      r.detail = "output #" + std::to_string(k) + " is a different constant";
      return done();
    }
  }
  r.regions = roots.size();

  std::vector<std::string> not_compared;
  for (const auto& [ro, ri] : roots) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > o.max_region_seconds) {
      not_compared.push_back("the region computing " + output.nodes[ro].name + " and " +
                             std::to_string(roots.size() - r.regions_compared - not_compared.size() - 1) +
                             " after it: the comparison's time (" + std::to_string(static_cast<int>(o.max_region_seconds)) +
                             " s) ran out");
      break;
    }
    if (o.on_region) o.on_region(r.regions_compared + not_compared.size() + 1, roots.size(), output.nodes[ro].name);
    // The output side stops at anchors; where the input side does not reach
    // one of them (the input computed that value under another name, e.g.
    // twice, which the output shares), the output side computes it too, until
    // both sides read the same leaves.
    std::vector<char> demoted(output.nodes.size(), 0);
    RegionGraphs g;
    std::vector<char> out_take, in_take;
    for (bool again = true; again;) {
      g = RegionGraphs();
      // Names as the graphs hold them (g.leaves' own strings move as it grows).
      std::unordered_map<std::string_view, NodeId> out_leaves;
      out_take = region_nodes(output, ro, [&](NodeId k, bool is_root) {
        if (is_tensor_placeholder(output.nodes[k]) || (!is_root && a.leaf[k] && !demoted[k])) {
          add_leaf(g, output.nodes[k]);
          out_leaves.emplace(output.nodes[k].name, k);
          return true;
        }
        return false;
      });
      std::unordered_set<std::string_view> reached;
      in_take = region_nodes(input, ri, [&](NodeId k, bool is_root) {
        const Node& n = input.nodes[k];
        if (is_tensor_placeholder(n)) {
          add_leaf(g, n);
          reached.insert(n.name);
          return true;
        }
        if (is_root || !out_leaves.count(n.name)) return false;
        reached.insert(n.name);
        return true;
      });
      again = false;
      for (const auto& [name, k] : out_leaves)
        if (!reached.count(name)) {
          if (is_tensor_placeholder(output.nodes[k])) continue;
          demoted[k] = 1;
          again = true;
        }
    }
    // Input-only placeholders were added after the output side's graph was
    // walked; both graphs take every leaf.
    g.out = region_graph(output, out_names, out_take, ro, g);
    g.in = region_graph(input, in_names, in_take, ri, g);
    const VerifyResult v = verify_whole_graph(g.in, g.out, o);
    r.elements = std::max(r.elements, v.elements);
    r.random_ops |= v.random_ops;
    r.max_error = std::max(r.max_error, v.max_error);
    r.dtype_error_in = std::max(r.dtype_error_in, v.dtype_error_in);
    r.dtype_error_out = std::max(r.dtype_error_out, v.dtype_error_out);
    const std::string where = "the region computing " + output.nodes[ro].name +
                              (output.nodes[ro].name == input.nodes[ri].name ? "" : " (input: " + input.nodes[ri].name + ")");
    if (v.status == VerifyResult::Status::Failed) {
      r.status = VerifyResult::Status::Failed;
      r.detail = where + ": " + v.detail;
      return done();
    }
    if (v.status == VerifyResult::Status::Skipped)
      not_compared.push_back(where + ": " + v.detail);
    else
      ++r.regions_compared;
  }
  if (not_compared.empty()) {
    r.status = VerifyResult::Status::Passed;
    return done();
  }
  r.detail = whole_not + "; compared region by region, " + std::to_string(r.regions_compared) + " of " +
             std::to_string(r.regions) + " changed regions agree; not compared: " + not_compared.front() +
             (not_compared.size() > 1 ? " (and " + std::to_string(not_compared.size() - 1) + " more)" : "");
  return done();
}

}  // namespace sator::interp
