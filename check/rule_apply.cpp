#include "check/rule_apply.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>

#include "egraph/runner.h"
#include "egraph/extraction.h"
#include "ir/infer_context.h"

namespace sator::check {

namespace {

Value with_children(const Value& v, const std::vector<NodeId>& kids) {
  if (v.kind == Value::Kind::Node) return Value::of_node(kids.at(v.node));
  if (v.kind != Value::Kind::List) return v;
  std::vector<Value> items;
  for (const Value& x : v.list) items.push_back(with_children(x, kids));
  return Value::of_list(std::move(items));
}

// Where a rule's right-hand side holds its left-hand side as a term
// (-x => -(-(-x)): the inner -x is the root itself), the root's class holds
// only nodes that read the class: no extraction of the class without its
// original node exists. The right-hand side is still a graph: its top node,
// with the inner occurrence computed by the original. Written so: the
// instance as it is (each root by its original node), then for each root a
// node the rule added to its class, its children as the extraction that
// keeps the originals chooses them, in the root's place among the outputs.
// nullopt where a root's class holds no such node (the rule only restated
// the root).
std::optional<Graph> rhs_through_original(const TensorEGraph& t, const std::vector<eg::Id>& roots) {
  const auto x = eg::greedy_extract(t.egraph, [&](eg::Id n) {
    if (std::find(roots.begin(), roots.end(), n) != roots.end()) return 0.0;
    if (!t.is_original(n)) return 1.0;
    const std::string& op = t.lang.op_name(t.egraph.op(n));
    return op == "placeholder" || op == "get_attr" ? 0.0 : 10.0;
  });
  std::vector<eg::Id> enode_of;
  Graph g = t.write(x, &enode_of);
  constexpr NodeId kNone = ~NodeId{0};
  std::vector<NodeId> written(t.egraph.num_nodes(), kNone);  // by class: its written node
  for (NodeId i = 0; i < g.nodes.size(); ++i)
    if (enode_of[i] != eg::kNoId && written[t.egraph.find(enode_of[i])] == kNone)
      written[t.egraph.find(enode_of[i])] = i;
  Node output = std::move(g.nodes.back());
  g.nodes.pop_back();
  // Appends e-node n of class cls reading `kids` (its children's nodes).
  const auto append = [&](eg::Id n, eg::Id cls, const std::vector<NodeId>& kids) {
    const NodeAttrs& a = t.lang.attrs(t.egraph.attr(n));
    const TensorData& d = t.analysis.data(cls);
    Node node;
    node.name = "sator_rhs_" + std::to_string(g.nodes.size());
    node.op = t.lang.op_name(t.egraph.op(n));
    for (const Value& v : a.args) node.args.push_back(with_children(v, kids));
    for (const auto& [name, v] : a.kwargs) node.kwargs.emplace_back(name, with_children(v, kids));
    node.result = d.result;
    node.symint = d.symint;
    node.tensor.shape = d.type.shape;
    node.tensor.dtype = d.type.dtype;
    node.tensor.stride = contiguous_strides(d.type.shape);
    node.outputs = d.outputs;
    for (OutputSlot& slot : node.outputs)
      if (slot.kind == OutputSlot::Kind::Tensor) slot.tensor.stride = contiguous_strides(slot.tensor.shape);
    g.nodes.push_back(std::move(node));
    return static_cast<NodeId>(g.nodes.size() - 1);
  };
  // A class the outputs did not reach (the rule's inner terms), as the
  // extraction chose it; the extraction is acyclic, so this ends.
  std::function<NodeId(eg::Id)> emit = [&](eg::Id cls) -> NodeId {
    cls = t.egraph.find(cls);
    if (written[cls] != kNone) return written[cls];
    const eg::Id n = x.choice.at(cls);
    std::vector<NodeId> kids;
    for (eg::Id child : t.egraph.children(n)) kids.push_back(emit(child));
    return written[cls] = append(n, cls, kids);
  };
  for (size_t k = 0; k < roots.size(); ++k) {
    const eg::Id cls = t.egraph.find(roots[k]);
    std::optional<eg::Id> top;
    for (eg::Id n : t.egraph.class_nodes(cls)) {
      bool extractable = !t.is_original(n);
      for (eg::Id child : t.egraph.children(n)) extractable = extractable && x.has(t.egraph.find(child));
      if (extractable) {
        top = n;
        break;
      }
    }
    if (!top) return std::nullopt;
    std::vector<NodeId> kids;
    for (eg::Id child : t.egraph.children(*top)) kids.push_back(emit(child));
    output.args.at(0).list.at(k) = Value::of_node(append(*top, cls, kids));
  }
  g.nodes.push_back(std::move(output));
  return g;
}

}  // namespace

Application apply_once(const Graph& lhs, const RuleFactory& rules, const std::string& rule_name, size_t rewritten) {
  Application a;
  TensorEGraph t(lhs);
  std::vector<eg::Rewrite> all = rules(t);
  std::vector<eg::Rewrite> one;
  for (eg::Rewrite& r : all)
    if (r.name() == rule_name) one.push_back(std::move(r));
  // (One rule may be several rewrites: attention's, one per softmax op.)
  if (one.empty()) throw std::logic_error("check-rules: the rule set has no rule named '" + rule_name + "'");

  std::vector<eg::Id> roots;  // the original nodes of the outputs the rule must rewrite
  for (size_t k = 0; k < rewritten; ++k) roots.push_back(t.node_of(lhs.nodes.back().args.at(0).list.at(k).node));
  try {
    eg::Runner runner;
    runner.with_iter_limit(1).with_node_limit(100000).with_time_limit(30);
    runner.run(t.egraph, one);
  } catch (const UnsoundMerge& e) {
    a.outcome = Application::Outcome::Unsound;
    a.message = e.what();
    return a;
  } catch (const ShapeError& e) {
    // The rule built a node whose arguments do not fit (a view to a shape of
    // another size): unsound, and reported as such rather than as a crash.
    a.outcome = Application::Outcome::Unsound;
    a.message = std::string("the rule built an ill-typed node: ") + e.what();
    return a;
  }
  constexpr double kForbidden = std::numeric_limits<double>::infinity();
  const auto x = eg::greedy_extract(t.egraph, [&](eg::Id n) {
    if (std::find(roots.begin(), roots.end(), n) != roots.end()) return kForbidden;
    if (!t.is_original(n)) return 1.0;
    const std::string& op = t.lang.op_name(t.egraph.op(n));
    return op == "placeholder" || op == "get_attr" ? 0.0 : 10.0;
  });
  bool through_original = false;
  for (size_t k = 0; k < rewritten; ++k) {
    const eg::Id out = t.egraph.find(*t.outputs().at(k));
    if (!x.has(out) || x.cost[out] == kForbidden) {
      if (t.egraph.class_nodes(out).size() <= 1) return a;  // the rule did not rewrite this root
      through_original = true;
    }
  }
  if (through_original) {
    std::optional<Graph> rhs = rhs_through_original(t, roots);
    if (!rhs) {
      a.outcome = Application::Outcome::Cyclic;
      a.message = "the right-hand side is the left-hand side itself (x = x): nothing to check";
      return a;
    }
    a.outcome = Application::Outcome::Rewritten;
    a.rhs = std::move(*rhs);
    return a;
  }
  a.outcome = Application::Outcome::Rewritten;
  a.rhs = t.write(x);
  return a;
}

}  // namespace sator::check
