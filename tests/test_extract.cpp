// Extraction: costs of a choice, the extraction-gym reader, and the tree, dag
// and ilp extractors on hand-made and random e-graphs.
#include <catch2/catch.hpp>

#include <random>

#include "extract/extractors.h"
#include "extract/gym_json.h"
#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "pipeline/optimize.h"
#include "test_util.h"

using namespace sator;
using namespace sator::extract;

namespace {

// Classes R=0, A=1, B=2, S=3. R: r(A, B); A: a1(S) 1 or a2 3.5; B: b1(S) 1 or
// b2 3.5; S: s 4. Each of A, B alone is cheaper without S (3.5 < 1 + 4), but
// sharing S makes a1 + b1 + s = 6 < 7 = a2 + b2: only a joint choice finds it.
Problem shared_child() {
  Problem p;
  p.nodes = {{0, {1, 2}, 1.0}, {1, {3}, 1.0}, {1, {}, 3.5}, {2, {3}, 1.0}, {2, {}, 3.5}, {3, {}, 4.0}};
  p.roots = {0};
  p.index_classes(4);
  return p;
}

// A random e-graph: children mostly point to later classes (acyclic), some
// point back (cycles an extraction must avoid); every class has a leaf or
// an acyclic node so a finite extraction exists.
Problem random_problem(uint32_t seed, size_t classes) {
  std::mt19937 rng(seed);
  auto pick = [&](size_t lo, size_t hi) { return std::uniform_int_distribution<size_t>(lo, hi)(rng); };
  Problem p;
  for (ClassIdx c = 0; c < classes; ++c) {
    const size_t count = pick(1, 3);
    for (size_t k = 0; k < count; ++k) {
      ProblemNode n{c, {}, static_cast<double>(pick(1, 9))};
      const size_t kids = c + 1 < classes ? pick(k == 0 ? 1 : 0, 2) : 0;
      for (size_t i = 0; i < kids; ++i) n.children.push_back(static_cast<ClassIdx>(pick(c + 1, classes - 1)));
      if (k > 0 && c > 0 && pick(0, 3) == 0) n.children.push_back(static_cast<ClassIdx>(pick(0, c)));  // back edge
      p.nodes.push_back(n);
    }
  }
  p.roots = {0};
  p.index_classes(classes);
  return p;
}

}  // namespace

TEST_CASE("extraction costs: tree counts shared nodes per use, DAG once; cycles are infinite", "[extract]") {
  const Problem p = shared_child();
  const std::vector<NodeIdx> sharing = {0, 1, 3, 5};
  CHECK(dag_cost(p, sharing) == 7.0);   // r + a1 + b1 + s
  CHECK(tree_cost(p, sharing) == 11.0);  // r + (a1 + s) + (b1 + s)
  std::vector<NodeIdx> missing = sharing;
  missing[3] = kNoNode;
  CHECK(dag_cost(p, missing) == kInfinite);
  Problem cyc = p;
  cyc.nodes[5].children = {1};  // S needs A, A needs S
  cyc.index_classes(4);
  CHECK(dag_cost(cyc, sharing) == kInfinite);
  CHECK(tree_cost(cyc, sharing) == kInfinite);
}

TEST_CASE("tree and dag miss a joint choice that ilp proves optimal", "[extract]") {
  const Problem p = shared_child();
  const Solution tree = extract_tree(p), dag = extract_dag(p), ilp = extract_ilp(p);
  CHECK(tree.dag_cost == 8.0);  // r + a2 + b2
  CHECK(dag.dag_cost <= tree.dag_cost);
  CHECK(ilp.dag_cost == 7.0);
  CHECK(ilp.proved_optimal);
  CHECK(ilp.choice[1] == 1);
  CHECK(ilp.choice[2] == 3);
}

TEST_CASE("on random e-graphs: ilp <= dag <= tree in DAG cost, all acyclic", "[extract]") {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    const Problem p = random_problem(seed, 12 + seed % 20);
    const Solution tree = extract_tree(p), dag = extract_dag(p), ilp = extract_ilp(p);
    INFO("seed " << seed);
    REQUIRE(tree.dag_cost < kInfinite);
    CHECK(dag.dag_cost <= tree.dag_cost + 1e-9);
    CHECK(ilp.dag_cost <= dag.dag_cost + 1e-9);
    CHECK(ilp.proved_optimal);
    // The costs reported are the costs of the choices returned.
    CHECK(dag_cost(p, dag.choice) == dag.dag_cost);
    CHECK(dag_cost(p, ilp.choice) == ilp.dag_cost);
  }
}

TEST_CASE("extraction-gym files: read, and bad ones refused naming the node", "[extract]") {
  const Problem p = read_gym_text(R"({"nodes": {
      "a": {"op": "+", "children": ["b", "c"], "eclass": "0", "cost": 1},
      "b": {"op": "x", "children": [], "eclass": "1", "cost": 2.5},
      "c": {"op": "y", "children": [], "eclass": "1", "cost": 0.5}},
    "root_eclasses": ["0"], "comment": "ok"})", "t.json");
  REQUIRE(p.num_classes() == 2);
  const Solution s = extract_tree(p);
  CHECK(s.dag_cost == 1.5);  // a + c (c shared by both children: counted once)
  CHECK(s.tree_cost == 2.0);
  auto message = [](const std::string& text) {
    try {
      read_gym_text(text, "bad.json");
    } catch (const GraphError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(message("{").find("bad.json") != std::string::npos);
  CHECK(message(R"({"nodes": {"a": {"children": ["zz"], "eclass": "0"}}, "root_eclasses": ["0"]})").find("zz") !=
        std::string::npos);
  CHECK(message(R"({"nodes": {"a": {"children": [], "eclass": "0", "cost": -1}}, "root_eclasses": ["0"]})")
            .find("cost") != std::string::npos);
  CHECK(message(R"({"nodes": {}, "root_eclasses": ["9"]})").find("9") != std::string::npos);
  CHECK(message(R"({"nodes": {}, "root_eclasses": [], "extra": 1})").find("extra") != std::string::npos);
}

TEST_CASE("optimize with the ilp extractor is never costlier than dag or tree (corpus)", "[extract][corpus]") {
  for (const char* name : {"zoo_hf.infer.g0", "zoo_views.train.g0", "gpt2.infer.dyn.g0"}) {
    const Graph g = load_graph(test::corpus_path("graphs/") + name + ".json");
    double cost[3];
    const char* names[3] = {"tree", "dag", "ilp"};
    for (int i = 0; i < 3; ++i) {
      pipeline::OptimizeOptions o;
      o.extractor = names[i];
      cost[i] = pipeline::optimize(g, o).extract_dag_cost;
    }
    INFO(name);
    CHECK(cost[1] <= cost[0]);
    CHECK(cost[2] <= cost[1]);
  }
}

TEST_CASE("optimize by roofline time: ilp <= dag <= tree, and no more layout ops than by node count", "[extract][cost][corpus]") {
  for (const char* name : {"zoo_hf.train.g0", "bert.infer.g0"}) {
    const Graph g = load_graph(test::corpus_path("graphs/") + name + ".json");
    double cost[3];
    size_t layout[3];
    const char* names[3] = {"tree", "dag", "ilp"};
    for (int i = 0; i < 3; ++i) {
      pipeline::OptimizeOptions o;
      o.extractor = names[i];
      o.cost = "roofline";
      o.hold_peak = false;  // the extractors' own choices (zoo_hf.train's peak guard keeps its input)
      const pipeline::OptimizeResult r = pipeline::optimize(g, o);
      cost[i] = r.cost_out;
      layout[i] = r.layout_ops_out;
      CHECK(r.cost_out < r.cost_in);  // the rewrites make the graph faster by the model
    }
    pipeline::OptimizeOptions by_nodes;
    const size_t node_model_layout = pipeline::optimize(g, by_nodes).layout_ops_out;
    INFO(name);
    CHECK(cost[1] <= cost[0] + 1e-6);
    CHECK(cost[2] <= cost[1] + 1e-6);
    CHECK(layout[2] <= node_model_layout);  // the tie-break keeps views few
  }
  pipeline::OptimizeOptions bad;
  bad.cost = "flops";
  CHECK_THROWS(pipeline::optimize(load_graph(test::corpus_path("graphs/zoo_hf.infer.g0.json")), bad));
}
