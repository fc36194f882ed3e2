// Each layout rule on a small graph: what it must remove, what it must keep.
#include <catch2/catch.hpp>

#include "ir/graph_io.h"
#include "ir/graph_stats.h"
#include "ir/shape_check.h"
#include "rules/layout_rules.h"
#include "pipeline/optimize.h"
#include "test_util.h"

using namespace sator;

namespace {

const char* kSym = R"([{"name":"s0","hint":8,"min":2,"max":null}])";

// x: [s0, 4, 6] float32, then `body` (nodes named y...), output = last node "y".
Graph graph_with(const std::string& body) {
  const std::string x =
      R"({"name":"x","op":"placeholder","role":"input","shape":["s0",4,6],"stride":[24,6,1],"dtype":"float32"})";
  Graph g = read_graph_text(
      test::document(x + "," + body + R"(,{"name":"output","op":"output","args":[[{"node":"y"}]]})", kSym), "t.json");
  ShapeProver prover(g.symbols);
  require_consistent_shapes(g, check_shapes(g, prover), "t.json");  // the test input itself is valid
  return g;
}

std::string node(const std::string& name, const std::string& op, const std::string& args, const std::string& shape) {
  return R"({"name":")" + name + R"(","op":")" + op + R"(","args":)" + args + R"(,"shape":)" + shape +
         R"(,"stride":)" + "[" + std::string(shape == "[]" ? "" : "0") +
         [&] {
           std::string s;
           for (char c : shape) if (c == ',') s += ",0";
           return s;
         }() +
         R"(],"dtype":"float32"})";
}

// The ops on the path from the output back to x, outermost first.
std::vector<std::string> chain(const Graph& g) {
  std::vector<std::string> ops;
  NodeId n = g.nodes.back().args[0].list[0].node;
  while (g.nodes[n].op != "placeholder") {
    ops.push_back(g.nodes[n].op);
    n = g.nodes[n].args[0].node;
  }
  return ops;
}

Graph optimized(const std::string& body) { return pipeline::optimize(graph_with(body), {}).output; }

}  // namespace

TEST_CASE("every layout rule has a description", "[rules]") {
  for (const auto& r : rules::layout_rule_info()) CHECK(std::string(r.description).size() > 10);
  Graph g = graph_with(node("y", "aten.clone.default", R"([{"node":"x"}])", R"(["s0",4,6])"));
  TensorEGraph t(g);
  const auto rs = rules::layout_rules(t);
  REQUIRE(rs.size() == rules::layout_rule_info().size());
  for (size_t i = 0; i < rs.size(); ++i) CHECK(rs[i].name() == rules::layout_rule_info()[i].name);
}

TEST_CASE("identities disappear", "[rules]") {
  CHECK(chain(optimized(node("y", "aten.clone.default", R"([{"node":"x"}])", R"(["s0",4,6])"))).empty());
  CHECK(chain(optimized(node("y", "aten.alias.default", R"([{"node":"x"}])", R"(["s0",4,6])"))).empty());
  CHECK(chain(optimized(node("y", "aten.view.default", R"([{"node":"x"},[{"sym":"s0"},4,6]])", R"(["s0",4,6])"))).empty());
  CHECK(chain(optimized(node("y", "aten.expand.default", R"([{"node":"x"},[-1,4,6]])", R"(["s0",4,6])"))).empty());
  CHECK(chain(optimized(node("y", "aten.permute.default", R"([{"node":"x"},[0,1,2]])", R"(["s0",4,6])"))).empty());
  CHECK(chain(optimized(node("y", "aten.slice.Tensor", R"([{"node":"x"},1,0,9223372036854775807])", R"(["s0",4,6])"))).empty());
}

TEST_CASE("what is not an identity stays", "[rules]") {
  CHECK(chain(optimized(node("y", "aten.slice.Tensor", R"([{"node":"x"},1,1,4])", R"(["s0",3,6])"))).size() == 1);
  CHECK(chain(optimized(node("y", "aten.slice.Tensor", R"([{"node":"x"},1,0,4,2])", R"(["s0",2,6])"))).size() == 1);
  CHECK(chain(optimized(node("y", "aten.permute.default", R"([{"node":"x"},[0,2,1]])", R"(["s0",6,4])"))).size() == 1);
  CHECK(chain(optimized(node("y", "aten.expand.default", R"([{"node":"x"},[2,-1,4,6]])", R"([2,"s0",4,6])"))).size() == 1);
}

TEST_CASE("chains collapse", "[rules]") {
  // view, unsqueeze, reshape: one view (x is contiguous, so a real view).
  Graph g = optimized(node("a", "aten.view.default", R"([{"node":"x"},[{"sym":"s0"},24]])", R"(["s0",24])") + "," +
                      node("b", "aten.unsqueeze.default", R"([{"node":"a"},1])", R"(["s0",1,24])") + "," +
                      node("y", "aten.reshape.default", R"([{"node":"b"},[{"sym":"s0"},2,12]])", R"(["s0",2,12])"));
  CHECK(chain(g) == std::vector<std::string>{"aten.view.default"});
  // A view that undoes a view: nothing.
  CHECK(chain(optimized(node("a", "aten.view.default", R"([{"node":"x"},[{"sym":"s0"},24]])", R"(["s0",24])") + "," +
                        node("y", "aten.view.default", R"([{"node":"a"},[{"sym":"s0"},4,6]])", R"(["s0",4,6])")))
            .empty());
}

TEST_CASE("permutes compose, and transposes are permutes", "[rules]") {
  // transpose(1,2) then permute [2,0,1]: one permute; composed dims checked.
  Graph g = optimized(node("a", "aten.transpose.int", R"([{"node":"x"},1,2])", R"(["s0",6,4])") + "," +
                      node("y", "aten.permute.default", R"([{"node":"a"},[2,0,1]])", R"([4,"s0",6])"));
  REQUIRE(chain(g) == std::vector<std::string>{"aten.permute.default"});
  const Node& y = g.nodes[g.nodes.back().args[0].list[0].node];
  std::vector<int64_t> dims;
  for (const Value& v : y.args[1].list) dims.push_back(v.i);
  CHECK(dims == std::vector<int64_t>{1, 0, 2});  // out[i] = x.dim(dims[i]): [4, s0, 6]
  CHECK(y.tensor.shape == std::vector<SymExpr>{4, SymExpr::symbol("s0"), 6});
  // A permute and its inverse cancel.
  CHECK(chain(optimized(node("a", "aten.permute.default", R"([{"node":"x"},[1,2,0]])", R"([4,6,"s0"])") + "," +
                        node("y", "aten.permute.default", R"([{"node":"a"},[2,0,1]])", R"(["s0",4,6])")))
            .empty());
}

TEST_CASE("a view of a non-contiguous value is written as reshape", "[rules]") {
  Graph g = optimized(node("a", "aten.permute.default", R"([{"node":"x"},[0,2,1]])", R"(["s0",6,4])") + "," +
                      node("b", "aten.clone.default", R"([{"node":"a"}])", R"(["s0",6,4])") + "," +
                      node("y", "aten.view.default", R"([{"node":"b"},[{"sym":"s0"},24]])", R"(["s0",24])"));
  CHECK(chain(g) == std::vector<std::string>{"aten.reshape.default", "aten.permute.default"});
}

TEST_CASE("layout ops move through elementwise ops and cancel", "[rules]") {
  // view(convert(view(x))) back to x's shape: just the conversion.
  const std::string conv = R"({"name":"b","op":"prims.convert_element_type.default","args":[{"node":"a"},{"dtype":"bfloat16"}],"shape":["s0",24],"stride":[24,1],"dtype":"bfloat16"})";
  Graph g = optimized(node("a", "aten.view.default", R"([{"node":"x"},[{"sym":"s0"},24]])", R"(["s0",24])") + "," + conv + "," +
                      R"({"name":"y","op":"aten.view.default","args":[{"node":"b"},[{"sym":"s0"},4,6]],"shape":["s0",4,6],"stride":[24,6,1],"dtype":"bfloat16"})");
  CHECK(chain(g) == std::vector<std::string>{"prims.convert_element_type.default"});
  // permute(mul(permute(x), 2)) with inverse permutations: just the scaling.
  Graph h = optimized(node("a", "aten.permute.default", R"([{"node":"x"},[2,0,1]])", R"([6,"s0",4])") + "," +
                      node("b", "aten.mul.Tensor", R"([{"node":"a"},2.0])", R"([6,"s0",4])") + "," +
                      node("y", "aten.permute.default", R"([{"node":"b"},[1,2,0]])", R"(["s0",4,6])"));
  CHECK(chain(h) == std::vector<std::string>{"aten.mul.Tensor"});
}
