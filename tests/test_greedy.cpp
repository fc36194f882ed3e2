// `sator greedy`: the rules applied as Inductor's pattern matcher applies
// patterns -- first match wins, one sweep from the last node back, no
// revisiting, intermediates with exactly the pattern's users -- and sound.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "interp/compare.h"
#include "ir/graph_builder.h"
#include "ir/graph_io.h"
#include "ir/graph_stats.h"
#include "ir/shape_check.h"
#include "pipeline/greedy.h"
#include "test_util.h"

using namespace sator;

namespace {

size_t count_op(const Graph& g, const std::string& op) {
  size_t n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

// x [4, 6] viewed three times: [24] -> [6, 4] -> [2, 12]; `also_output`
// makes the middle view a graph output too.
Graph view_chain(bool also_output) {
  GraphBuilder b("views");
  const NodeId x = b.input({4, 6});
  const NodeId v1 = b.op("aten.view.default", {GraphBuilder::ref(x), GraphBuilder::ints({24})});
  const NodeId v2 = b.op("aten.view.default", {GraphBuilder::ref(v1), GraphBuilder::ints({6, 4})});
  const NodeId v3 = b.op("aten.view.default", {GraphBuilder::ref(v2), GraphBuilder::ints({2, 12})});
  return also_output ? b.finish({v3, v2}) : b.finish({v3});
}

double max_error_on_random_inputs(const Graph& a, const Graph& b) {
  const auto symbols = interp::small_symbols(a);
  return interp::compare_graphs(a, b, symbols, 7).max_error;
}

}  // namespace

TEST_CASE("greedy: one sweep from the last node, no revisiting; --fixpoint finishes the job", "[greedy]") {
  const Graph g = view_chain(false);
  // The sweep meets view3(view2(...)) first and folds it into one new view of
  // view1; that new node is not visited again, so view1 survives the round.
  const pipeline::GreedyResult one = pipeline::greedy_optimize(g, {});
  CHECK(one.rounds == 1);
  CHECK(one.rewrites_by_rule.at("view-of-view") == 1);
  CHECK(count_op(one.result.output, "aten.view.default") == 2);
  // A second round folds the rest: one view of x.
  pipeline::GreedyOptions fix;
  fix.fixpoint = true;
  const pipeline::GreedyResult all = pipeline::greedy_optimize(g, fix);
  CHECK(all.rounds >= 2);
  CHECK_FALSE(all.round_limit_hit);
  CHECK(count_op(all.result.output, "aten.view.default") == 1);
  CHECK(max_error_on_random_inputs(g, all.result.output) == 0.0);
  // Equality saturation gets there in one run.
  CHECK(compute_stats(pipeline::optimize(g, {}).output).layout_ops == 1);
}

TEST_CASE("greedy: an intermediate with users outside the match is not consumed", "[greedy]") {
  // view2 is also an output: view-of-view at view3 would need it to have one
  // user, as Inductor's patterns do, so view3 stays a view of view2.
  const Graph g = view_chain(true);
  const pipeline::GreedyResult r = pipeline::greedy_optimize(g, {});
  CHECK(r.rewrites_by_rule.count("view-of-view") == 1);  // only at view2 (view1 has one user)
  const Graph& out = r.result.output;
  const Node& o = out.nodes.back();
  const Node& first = out.nodes[o.args[0].list[0].node];
  const Node& second = out.nodes[o.args[0].list[1].node];
  REQUIRE(first.args[0].is_node());
  CHECK(out.nodes[first.args[0].node].name == second.name);  // view3 still reads view2
  CHECK(max_error_on_random_inputs(g, out) == 0.0);
}

TEST_CASE("greedy: passes in order, layout first; rules tried in their order", "[greedy]") {
  const auto passes = pipeline::greedy_passes();
  REQUIRE(passes.size() == 3);
  CHECK(passes[0].name == "layout canonicalization");
  CHECK(passes[0].rules.front() == "reshape-as-view");
  CHECK(passes[1].name == "recomposition");
  CHECK(passes[2].name == "attention");
  CHECK(passes[2].rules == std::vector<std::string>{"attention"});
  CHECK(pipeline::greedy_passes(true)[2].rules.size() == 2);
}

TEST_CASE("greedy on the zoo graphs: sound, and never better than saturation", "[greedy][corpus]") {
  for (const char* name : {"zoo_hf.infer.g0", "zoo_views.infer.dyn.g0", "zoo_einsum.infer.g0", "zoo_sfdp1.train.g0",
                           "zoo_qscale.infer.g0", "zoo_bmm_views.infer.g0"}) {
    INFO(name);
    const Graph g = load_graph(test::corpus_path("graphs/") + name + ".json");
    for (bool fixpoint : {false, true}) {
      pipeline::GreedyOptions o;
      o.fixpoint = fixpoint;
      const pipeline::GreedyResult gr = pipeline::greedy_optimize(g, o);
      const Graph& out = gr.result.output;
      ShapeProver prover(out.symbols);
      CHECK(check_shapes(out, prover).issues.empty());
      CHECK(max_error_on_random_inputs(g, out) < 1e-9);
      const pipeline::OptimizeResult sat = pipeline::optimize(g, {});
      CHECK(sat.layout_ops_out <= gr.result.layout_ops_out);
      CHECK(sat.cost_out <= gr.result.cost_out + 1e-9);
      CHECK(gr.result.layout_ops_out <= gr.result.layout_ops_in);
    }
  }
}

TEST_CASE("greedy --fixpoint: a symbolic size computed from the value that needs it is written as an expression",
          "[greedy][corpus]") {
  // Round 1 writes sym_size(view, 0) for s88*s3 and a view sized by that
  // expression; round 2 found the sym_size as the expression's producer and
  // the writer recursed between the two until the stack overflowed.
  const Graph g = load_graph(test::corpus_path("graphs/gpt2.train.dyn.g1.json"));
  pipeline::GreedyOptions o;
  o.fixpoint = true;
  const pipeline::GreedyResult gr = pipeline::greedy_optimize(g, o);
  CHECK(gr.rounds > 1);
  const Graph& out = gr.result.output;
  ShapeProver prover(out.symbols);
  CHECK(check_shapes(out, prover).issues.empty());
  CHECK(max_error_on_random_inputs(g, out) < 1e-9);
}
