// The key-gradient rule (rules/key_gradient_sum.h): a sum of attention's key
// gradient over the keys is zero, on the corpus's key-bias gradients and on
// small graphs where it must and must not apply.
#include <catch2/catch.hpp>

#include <functional>
#include <set>

#include "egraph/runner.h"
#include "interp/compare.h"
#include "interp/graph_eval.h"
#include "ir/graph_builder.h"
#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "tensor/tensor_egraph.h"
#include "rules/key_gradient_sum.h"
#include "pipeline/optimize.h"
#include "test_util.h"

using namespace sator;

namespace {

// The ops that output `i` of g depends on.
std::set<std::string> cone_ops(const Graph& g, size_t i) {
  std::set<std::string> ops;
  std::vector<bool> seen(g.nodes.size());
  std::function<void(NodeId)> visit = [&](NodeId n) {
    if (seen[n]) return;
    seen[n] = true;
    ops.insert(g.nodes[n].op);
    std::function<void(const Value&)> arg = [&](const Value& v) {
      if (v.is_node()) visit(v.node);
      for (const Value& x : v.list) arg(x);
    };
    for (const Value& v : g.nodes[n].args) arg(v);
    for (const auto& kv : g.nodes[n].kwargs) arg(kv.second);
  };
  visit(g.nodes.back().args[0].list.at(i).node);
  return ops;
}

const char* kBackward = "aten._scaled_dot_product_efficient_attention_backward.default";

}  // namespace

TEST_CASE("vit: the key projections' bias gradients become zeros", "[rules][key-gradient][corpus]") {
  const Graph g = load_graph(test::corpus_path("graphs/vit.train.g0.json"));
  const pipeline::OptimizeResult r = pipeline::optimize(g, {});
  // Outputs 12 and 28: the two layers' key biases, sum(dK viewed [B·S, H·E], 0).
  for (size_t out : {12u, 28u}) {
    INFO("output " << out);
    CHECK(cone_ops(g, out).count("aten.sum.dim_IntList") == 1);
    const std::set<std::string> ops = cone_ops(r.output, out);
    CHECK(ops.count("aten.full.default") == 1);
    CHECK(ops.count(kBackward) == 0);
    CHECK(ops.count("aten.sum.dim_IntList") == 0);
  }
  // Without the fused kernels there is no key gradient to recognise.
  pipeline::OptimizeOptions decomposed;
  decomposed.training_attention = false;
  const pipeline::OptimizeResult u = pipeline::optimize(g, decomposed);
  CHECK(cone_ops(u.output, 12).count("aten.sum.dim_IntList") == 1);
}

TEST_CASE("opt: the key bias's gradient keeps only its cache tangent", "[rules][key-gradient][corpus]") {
  // Output 9 = sum(view(permute(tangents_3 + dK)), 0): the key cache output's
  // gradient plus dK; only the tangent's sum is left.
  // OPT's attention adds its padding mask: fused by the efficient kernels
  // where kept as extracted (the weighing leaves them decomposed).
  const Graph g = load_graph(test::corpus_path("graphs/opt.train.g2.json"));
  pipeline::OptimizeOptions biased;
  biased.weigh_biased_kernels = false;
  const pipeline::OptimizeResult r = pipeline::optimize(g, biased);
  const std::set<std::string> ops = cone_ops(r.output, 9);
  CHECK(ops.count(kBackward) == 0);
  CHECK(ops.count("aten.sum.dim_IntList") == 1);
  CHECK(ops.count("placeholder") == 1);
  CHECK(ops.count("aten.full.default") == 0);
  // The other gradients still come from the fused backward.
  CHECK(cone_ops(r.output, 8).count(kBackward) == 1);
}

namespace {

struct SmallAttention {
  Graph graph;
  NodeId sum = 0;
};

// sum(permute(dK [+ t], [0, 2, 1, 3]) viewed [B·S, H·E], dim) with the
// efficient kernels of q [2,3,4,5], k, v [2,3,6,5]; the forward's output fed
// to the backward is `fed_out` (0: its own).
SmallAttention small_attention(int64_t dim, bool device, bool own_output = true, bool tangent = false) {
  GraphBuilder b("small attention");
  const NodeId q = b.input({2, 3, 4, 5}), k = b.input({2, 3, 6, 5}), v = b.input({2, 3, 6, 5});
  const NodeId d_out = b.input({2, 3, 4, 5}), other = b.input({2, 3, 4, 5});
  const Value scale = Value::of_float(0.5);
  const NodeId fwd = b.op("aten._scaled_dot_product_efficient_attention.default",
                          {GraphBuilder::ref(q), GraphBuilder::ref(k), GraphBuilder::ref(v), Value::none(),
                           Value::of_bool(true), Value::of_float(0.0), Value::of_bool(false)},
                          {{"scale", scale}});
  const NodeId out = own_output ? b.item(fwd, 0) : other;
  const NodeId bwd = b.op("aten._scaled_dot_product_efficient_attention_backward.default",
                          {GraphBuilder::ref(d_out), GraphBuilder::ref(q), GraphBuilder::ref(k), GraphBuilder::ref(v),
                           Value::none(), GraphBuilder::ref(out), GraphBuilder::ref(b.item(fwd, 1)),
                           GraphBuilder::ref(b.item(fwd, 2)), GraphBuilder::ref(b.item(fwd, 3)), Value::of_float(0.0),
                           Value::of_list({Value::of_bool(true), Value::of_bool(true), Value::of_bool(true),
                                           Value::of_bool(false)}),
                           Value::of_bool(false)},
                          {{"scale", scale}});
  NodeId dk = b.item(bwd, 1);
  if (tangent) dk = b.op("aten.add.Tensor", {GraphBuilder::ref(b.input({2, 3, 6, 5})), GraphBuilder::ref(dk)});
  const NodeId p = b.op("aten.permute.default", {GraphBuilder::ref(dk), GraphBuilder::ints({0, 2, 1, 3})});
  const NodeId flat = b.op("aten.view.default", {GraphBuilder::ref(p), GraphBuilder::sizes({12, 15})});
  SmallAttention s;
  s.sum = b.op("aten.sum.dim_IntList", {GraphBuilder::ref(flat), GraphBuilder::ints({dim}), Value::of_bool(true)});
  std::vector<NodeId> outs = {s.sum};
  if (device)  // any creation op with a device: where the rule's zeros go
    outs.push_back(b.op("aten.full.default", {GraphBuilder::sizes({1}), Value::of_float(1.0)},
                        {{"dtype", Value::of_dtype(DType::Float32)},
                         {"device", Value::of_text(Value::Kind::Device, "cuda:0")}}));
  s.graph = b.finish(outs);
  return s;
}

// Whether the rule put zeros (or a tangent's sum) in the sum's class.
size_t rewritten_forms(const SmallAttention& s, const char* op) {
  TensorEGraph t(s.graph);
  eg::Runner runner;
  runner.with_iter_limit(2);
  runner.run(t.egraph, rules::key_gradient_rules(t));
  size_t n = 0;
  const auto id = t.lang.find_op(op);
  for (eg::Id node : t.egraph.class_nodes(t.class_of(s.sum))) n += id && t.egraph.op(node) == *id;
  return n;
}

}  // namespace

TEST_CASE("key-gradient-sum-zero applies only where dK sums to zero", "[rules][key-gradient]") {
  // Over the keys (dim 0 of [B·S, H·E] covers batch and keys): zeros.
  CHECK(rewritten_forms(small_attention(0, true), "aten.full.default") == 1);
  // Over the heads and features only: no.
  CHECK(rewritten_forms(small_attention(1, true), "aten.full.default") == 0);
  // Without a device in the graph zeros would land on the CPU: no.
  CHECK(rewritten_forms(small_attention(0, false), "aten.full.default") == 0);
  // A backward fed another output than its forward's: D = dO·O no longer
  // cancels Σ P·dP, and dK does not sum to zero.
  CHECK(rewritten_forms(small_attention(0, true, false), "aten.full.default") == 0);
  // dK plus a tangent: the tangent's own sum, no zeros needed (and no device).
  const SmallAttention with_tangent = small_attention(0, false, true, true);
  CHECK(rewritten_forms(with_tangent, "aten.view.default") == 1);
}

TEST_CASE("the sum the rule replaces is rounding noise in float64", "[rules][key-gradient]") {
  // What the rule's zeros stand for, in the reference interpreter: the left
  // side's sum over the keys is float64 rounding (inputs in [-1, 1]).
  const SmallAttention s = small_attention(0, true);
  const auto inputs = interp::random_inputs(s.graph, {}, 7);
  const auto values = interp::evaluate_graph(s.graph, inputs, {}, {});
  double largest = 0;
  for (double x : values.at(0).tensor.data) largest = std::max(largest, std::abs(x));
  CHECK(largest < 1e-12);
}
