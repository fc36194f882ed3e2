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

TEST_CASE("a view of a broadcast expand is written as reshape, with the expand's zero stride", "[rules]") {
  // GPT-J's rotary embedding: a split's piece, unsqueezed twice (a rule
  // makes that one view, a new node), expanded along a size-1 dim, cloned,
  // viewed. The clone has the expand's value, so the extraction drops it; a
  // view of the expand itself fails (its broadcast dim has stride 0) in
  // eager PyTorch and in Inductor alike. The expand's strides follow from
  // its input's, which the writer knows.
  const std::string body = std::string(R"({"name":"x","op":"placeholder","role":"input","shape":[8,4,6],"stride":[24,6,1],"dtype":"float32"},)") +
      R"({"name":"s","op":"aten.split.Tensor","args":[{"node":"x"},3,-1],"outputs":[{"shape":[8,4,3],"stride":[24,6,1],"dtype":"float32"},{"shape":[8,4,3],"stride":[24,6,1],"dtype":"float32"}]},)" +
      R"({"name":"g","op":"getitem","args":[{"node":"s"},1],"shape":[8,4,3],"stride":[24,6,1],"dtype":"float32"},)" +
      R"({"name":"a","op":"aten.unsqueeze.default","args":[{"node":"g"},2],"shape":[8,4,1,3],"stride":[24,6,3,1],"dtype":"float32"},)" +
      R"({"name":"a2","op":"aten.unsqueeze.default","args":[{"node":"a"},4],"shape":[8,4,1,3,1],"stride":[24,6,3,1,1],"dtype":"float32"},)" +
      R"({"name":"b","op":"aten.expand.default","args":[{"node":"a2"},[8,4,1,3,2]],"shape":[8,4,1,3,2],"stride":[24,6,3,1,0],"dtype":"float32"},)" +
      R"({"name":"c","op":"aten.clone.default","args":[{"node":"b"}],"shape":[8,4,1,3,2],"stride":[24,6,6,2,1],"dtype":"float32"},)" +
      R"({"name":"y","op":"aten.view.default","args":[{"node":"c"},[8,4,1,6]],"shape":[8,4,1,6],"stride":[24,6,6,1],"dtype":"float32"},)" +
      R"({"name":"output","op":"output","args":[[{"node":"y"}]]})";
  Graph g = read_graph_text(test::document(body), "t.json");
  ShapeProver prover(g.symbols);
  REQUIRE(check_shapes(g, prover).issues.empty());
  const Graph out = pipeline::optimize(g, {}).output;
  const Node& y = out.nodes[out.nodes.back().args[0].list[0].node];
  const Node& in = out.nodes[y.args[0].node];
  REQUIRE(in.op == "aten.expand.default");  // the clone is gone
  CHECK(y.op == "aten.reshape.default");
  CHECK(in.tensor.stride == std::vector<SymExpr>{24, 6, 3, 1, 0});
}

TEST_CASE("a view of a convolution of a channels-last input is written as reshape", "[rules]") {
  // A convolution's result follows its input's memory format: once the
  // contiguous copy of a channels-last input is dropped (clone(x) = x),
  // the result is channels-last too, and the view that held for the copy's
  // contiguous result does not.
  const std::string body = std::string(R"({"name":"xs","op":"placeholder","role":"input","shape":[2,8,8,3],"stride":[192,24,3,1],"dtype":"float32"},)") +
      R"({"name":"w","op":"placeholder","role":"input","shape":[4,3,3,3],"stride":[27,9,3,1],"dtype":"float32"},)" +
      R"({"name":"a","op":"aten.permute.default","args":[{"node":"xs"},[0,3,1,2]],"shape":[2,3,8,8],"stride":[192,1,24,3],"dtype":"float32"},)" +
      R"({"name":"c","op":"aten.clone.default","args":[{"node":"a"}],"kwargs":{"memory_format":{"enum":"torch.contiguous_format"}},"shape":[2,3,8,8],"stride":[192,64,8,1],"dtype":"float32"},)" +
      R"({"name":"k","op":"aten.convolution.default","args":[{"node":"c"},{"node":"w"},null,[1,1],[0,0],[1,1],false,[0,0],1],"shape":[2,4,6,6],"stride":[144,36,6,1],"dtype":"float32"},)" +
      R"({"name":"y","op":"aten.view.default","args":[{"node":"k"},[2,144]],"shape":[2,144],"stride":[144,1],"dtype":"float32"},)" +
      R"({"name":"output","op":"output","args":[[{"node":"y"}]]})";
  Graph g = read_graph_text(test::document(body), "t.json");
  ShapeProver prover(g.symbols);
  REQUIRE(check_shapes(g, prover).issues.empty());
  const Graph out = pipeline::optimize(g, {}).output;
  const Node& y = out.nodes[out.nodes.back().args[0].list[0].node];
  const Node& k = out.nodes[y.args[0].node];
  REQUIRE(k.op == "aten.convolution.default");
  REQUIRE(out.nodes[k.args[0].node].op == "aten.permute.default");  // the copy is gone
  CHECK(y.op == "aten.reshape.default");
}

TEST_CASE("a view of a fused attention kernel's output is written as reshape", "[rules]") {
  // The efficient kernel writes its output in BSHD order: a [B, H, S, D]
  // result whose strides are not contiguous. Where the kernel is a new node
  // (here: its query is x once the permute pair cancels) the writer cannot
  // read its strides from the source, and must not write a view of it.
  const std::string q =
      R"({"name":"q","op":"placeholder","role":"input","shape":[2,4,8,16],"stride":[512,128,16,1],"dtype":"float32"},)";
  const std::string body =
      q + node("a", "aten.permute.default", R"([{"node":"q"},[0,2,1,3]])", "[2,8,4,16]") + "," +
      node("b", "aten.permute.default", R"([{"node":"a"},[0,2,1,3]])", "[2,4,8,16]") + "," +
      R"({"name":"att","op":"aten._scaled_dot_product_efficient_attention.default","args":[{"node":"b"},{"node":"q"},{"node":"q"},null,false],)"
      R"("outputs":[{"shape":[2,4,8,16],"stride":[512,16,64,1],"dtype":"float32"},{"shape":[2,4,0],"stride":[0,0,1],"dtype":"float32"},)"
      R"({"shape":[],"stride":[],"dtype":"int64"},{"shape":[],"stride":[],"dtype":"int64"}]},)" +
      R"({"name":"o","op":"getitem","args":[{"node":"att"},0],"shape":[2,4,8,16],"stride":[512,16,64,1],"dtype":"float32"},)" +
      node("y", "aten.view.default", R"([{"node":"o"},[8,8,16]])", "[8,8,16]");
  Graph g = read_graph_text(test::document(body + R"(,{"name":"output","op":"output","args":[[{"node":"y"}]]})"), "t.json");
  ShapeProver prover(g.symbols);
  REQUIRE(check_shapes(g, prover).issues.empty());
  const Graph out = pipeline::optimize(g, {}).output;
  const Node& y = out.nodes[out.nodes.back().args[0].list[0].node];
  const Node& att = out.nodes[out.nodes[y.args[0].node].args[0].node];
  REQUIRE(att.op == "aten._scaled_dot_product_efficient_attention.default");
  CHECK(out.nodes[att.args[0].node].name == "q");  // the permute pair is gone: a new attention node
  CHECK(y.op == "aten.reshape.default");
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
