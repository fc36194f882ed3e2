// Graphs through the e-graph and back: with no rules, every corpus graph
// comes back shape-valid, with the same inputs and outputs.
#include <catch2/catch.hpp>

#include <filesystem>
#include <tuple>

#include "egraph/extraction.h"
#include "ir/graph_builder.h"
#include "ir/graph_io.h"
#include "ir/graph_stats.h"
#include "ir/shape_check.h"
#include "tensor/tensor_egraph.h"
#include "test_util.h"

using namespace sator;

namespace {

double unit_cost(const TensorEGraph& t, eg::Id n) {
  const std::string& op = t.lang.op_name(t.egraph.op(n));
  return op == "placeholder" || op == "get_attr" ? 0.0 : 1.0;
}

void check_same_interface(const Graph& in, const Graph& out) {
  std::vector<const Node*> pin, pout;
  for (const Node& n : in.nodes)
    if (n.op == "placeholder") pin.push_back(&n);
  for (const Node& n : out.nodes)
    if (n.op == "placeholder") pout.push_back(&n);
  REQUIRE(pin.size() == pout.size());
  for (size_t i = 0; i < pin.size(); ++i) {
    CHECK(pin[i]->name == pout[i]->name);
    CHECK(pin[i]->tensor == pout[i]->tensor);
  }
  const auto& oin = in.nodes.back().args[0].list;
  const auto& oout = out.nodes.back().args[0].list;
  REQUIRE(oin.size() == oout.size());
  for (size_t i = 0; i < oin.size(); ++i) {
    REQUIRE(oin[i].is_none() == oout[i].is_none());
    if (oin[i].is_none()) continue;
    const Node& a = in.nodes[oin[i].node];
    const Node& b = out.nodes[oout[i].node];
    CHECK(a.result == b.result);
    CHECK(a.tensor.shape == b.tensor.shape);
    CHECK(a.tensor.dtype == b.tensor.dtype);
  }
}

}  // namespace

TEST_CASE("every corpus graph goes through the e-graph and back unchanged in meaning", "[tensor-egraph][corpus]") {
  for (const auto& entry : std::filesystem::directory_iterator(test::corpus_path("graphs"))) {
    const std::string path = entry.path().string();
    INFO(path);
    Graph in = load_graph(path);
    TensorEGraph t(in);
    CHECK(t.egraph.check_invariants().empty());
    const auto x = eg::greedy_extract(t.egraph, [&](eg::Id n) { return unit_cost(t, n); });
    Graph out = t.write(x);
    // What is written is a valid graph: it reads back, and every shape checks.
    Graph reread = read_graph_text(write_graph_text(out), path + " (written)");
    ShapeProver prover(reread.symbols);
    const ShapeCheckReport report = check_shapes(reread, prover);
    for (const auto& issue : report.issues) FAIL_CHECK(reread.nodes[issue.node].name << ": " << issue.message);
    check_same_interface(in, reread);
    // Identical pure nodes folded together: never more nodes than before.
    CHECK(reread.nodes.size() <= in.nodes.size());
  }
}

TEST_CASE("the analysis carries constant values", "[tensor-egraph]") {
  Graph g = load_graph(test::corpus_path("graphs/zoo_hf.infer.g0.json"));
  TensorEGraph t(g);
  auto constant_of = [&](const char* name) { return t.analysis.constant(t.egraph, t.class_of(*g.find_node(name))); };
  CHECK(constant_of("full") == -INFINITY);          // full([256, 256], -inf)
  CHECK(constant_of("scalar_tensor") == 0.0);       // scalar_tensor(0)
  CHECK_FALSE(constant_of("iota").has_value());     // not one number
  CHECK_FALSE(constant_of("where").has_value());    // depends on the condition
  CHECK_FALSE(constant_of("arg0_1").has_value());   // an input

  Graph h = load_graph(test::corpus_path("graphs/gpt2.infer.g0.json"));
  TensorEGraph u(h);
  const auto lifted = u.analysis.constant(u.egraph, u.class_of(*h.find_node("lift_fresh_copy")));
  REQUIRE(lifted);
  CHECK(*lifted == 0.0);  // lift_fresh_copy(get_attr 0.0)
}

TEST_CASE("16-bit constants are known when the type holds them exactly", "[tensor-egraph]") {
  // GPT-Neo's mask value is bf16's lowest finite number; the analysis only
  // folds values the dtype represents exactly (0.1 is not a bf16 number).
  Graph g = load_graph(test::corpus_path("zoo/graphs/gpt_neo.amp-eager.infer.g0.json"));
  TensorEGraph t(g);
  const auto lowest = t.analysis.constant(t.egraph, t.class_of(*g.find_node("_tensor_constant3")));
  REQUIRE(lowest);
  CHECK(*lowest == -3.3895313892515355e38);
  for (const auto& [dtype, value, known] :
       {std::tuple{DType::BFloat16, 0.1, false}, std::tuple{DType::BFloat16, 0.5, true},
        std::tuple{DType::BFloat16, 257.0, false}, std::tuple{DType::BFloat16, 256.0, true},
        std::tuple{DType::Float16, 65504.0, true}, std::tuple{DType::Float16, 65520.0, false},
        std::tuple{DType::Float16, 5.960464477539063e-08, true}, std::tuple{DType::Float16, 2.98e-08, false}}) {
    INFO(dtype_name(dtype) << " " << value);
    GraphBuilder b("c");
    const NodeId c = b.op("aten.full.default", {GraphBuilder::sizes({}), Value::of_float(value)},
                          {{"dtype", Value::of_dtype(dtype)}});
    const Graph h = b.finish({c});
    TensorEGraph u(h);
    CHECK(u.analysis.constant(u.egraph, u.class_of(c)).has_value() == known);
  }
}

TEST_CASE("the writer keeps recorded strides only where the inputs are laid out as recorded", "[tensor-egraph]") {
  // c = clone(s) of a slice s, and the e-graph knows c = s: writing s for c
  // leaves u1 = unsqueeze(c) reading the slice (strides [.., 6, 1], not the
  // copy's [.., 3, 1]); u = unsqueeze(u1) keeps its input u1, but not u1's
  // recorded layout, so its recorded strides are not its runtime ones and
  // a view of it must be a reshape.
  const std::string body = std::string(R"({"name":"x","op":"placeholder","role":"input","shape":[4,6],"stride":[6,1],"dtype":"float32"},)") +
      R"({"name":"s","op":"aten.slice.Tensor","args":[{"node":"x"},1,0,3],"shape":[4,3],"stride":[6,1],"dtype":"float32"},)" +
      R"({"name":"c","op":"aten.clone.default","args":[{"node":"s"}],"shape":[4,3],"stride":[3,1],"dtype":"float32"},)" +
      R"({"name":"u1","op":"aten.unsqueeze.default","args":[{"node":"c"},0],"shape":[1,4,3],"stride":[12,3,1],"dtype":"float32"},)" +
      R"({"name":"u","op":"aten.unsqueeze.default","args":[{"node":"u1"},3],"shape":[1,4,3,1],"stride":[12,3,1,1],"dtype":"float32"},)" +
      R"({"name":"y","op":"aten.view.default","args":[{"node":"u"},[12]],"shape":[12],"stride":[1],"dtype":"float32"},)" +
      R"({"name":"output","op":"output","args":[[{"node":"y"}]]})";
  const Graph g = read_graph_text(test::document(body), "t.json");
  TensorEGraph t(g);
  const NodeId s = *g.find_node("s"), c = *g.find_node("c");
  t.egraph.union_classes(t.class_of(s), t.class_of(c), "clone(s) = s");
  t.egraph.rebuild();
  // Each class its source node; the merged class the slice.
  auto x = eg::greedy_extract(t.egraph, [&](eg::Id n) { return t.original_node(n) == static_cast<int64_t>(c) ? 10.0 : 1.0; });
  REQUIRE(t.original_node(x.choice[t.class_of(s)]) == static_cast<int64_t>(s));
  const Graph out = t.write(x);
  const Node& y = out.nodes[out.nodes.back().args[0].list[0].node];
  const Node& u = out.nodes[y.args[0].node];
  REQUIRE(u.name == "u");
  CHECK(u.tensor.stride[1] == SymExpr(6));  // derived from the slice, not recorded
  CHECK(y.op == "aten.reshape.default");
}
