// Graphs written as text (tensor/graph_text.h, `sator graph`): the examples
// give the hand-written JSON node for node, strides follow PyTorch's layout
// rules, and every mistake names its line and column.
#include <catch2/catch.hpp>

#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "tensor/graph_text.h"
#include "test_util.h"

using namespace sator;

namespace {

const std::string kExamples = std::string(SATOR_CORPUS_DIR) + "/../examples/rules/";

const Node& named(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return n;
  FAIL("no node " << name);
  throw std::logic_error("unreachable");
}

std::vector<int64_t> ints(const std::vector<SymExpr>& v) {
  std::vector<int64_t> out;
  for (const SymExpr& e : v) out.push_back(e.as_constant() ? *e.as_constant() : -1);
  return out;
}

// The message read_text_graph throws for `text`, or "" if it reads.
std::string error_of(const std::string& text) {
  try {
    read_text_graph(text, "g.sg");
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("graph text: the rule examples write the hand-written JSON, node for node", "[graph-text]") {
  for (const std::string stem : {"negated", "two_sums"}) {
    INFO(stem);
    Graph text = read_text_graph_file(kExamples + stem + ".sg");
    const Graph json = load_graph(kExamples + stem + ".json");
    text.name = json.name;
    text.source_json = json.source_json;
    CHECK(write_graph_text(text) == write_graph_text(json));
  }
}

TEST_CASE("graph text: strides as PyTorch lays the results out", "[graph-text]") {
  const Graph g = read_text_graph(R"(
    B = size(4)                      # a symbolic batch
    x = input([6, 4])
    t = transpose.int(x, 0, 1)       # a view: strides swapped
    e = exp(t)                       # pointwise: the input's order
    c = clone(t)                     # preserve_format
    cc = clone(t, memory_format=torch.contiguous_format)
    r = reshape(t, [24])             # not a view of t: a copy
    s = split.Tensor(x, 2, 1)        # pieces of x, its strides
    p = getitem(s, 1)
    w = view(p, [3, 2, 2])           # splits a dim within a piece: a view
    y = input([B, 8], bfloat16)
    z = sum.dim_IntList(y, [1])
    output(e, c, cc, r, w, z)
  )", "t.sg");
  CHECK(ints(named(g, "t").tensor.stride) == std::vector<int64_t>{1, 4});
  CHECK(ints(named(g, "e").tensor.stride) == std::vector<int64_t>{1, 4});
  CHECK(ints(named(g, "c").tensor.stride) == std::vector<int64_t>{1, 4});
  CHECK(ints(named(g, "cc").tensor.stride) == std::vector<int64_t>{6, 1});
  CHECK(named(g, "r").op == "aten.reshape.default");
  CHECK(ints(named(g, "r").tensor.stride) == std::vector<int64_t>{1});
  CHECK(ints(named(g, "p").tensor.shape) == std::vector<int64_t>{6, 2});
  CHECK(ints(named(g, "p").tensor.stride) == std::vector<int64_t>{4, 1});
  CHECK(ints(named(g, "w").tensor.stride) == std::vector<int64_t>{8, 4, 1});
  const Node& z = named(g, "z");
  REQUIRE(z.tensor.shape.size() == 1);
  CHECK(z.tensor.shape[0] == SymExpr::symbol("B"));
  CHECK(z.tensor.dtype == DType::BFloat16);
  REQUIRE(g.symbols.size() == 1);
  CHECK((g.symbols[0].name == "B" && g.symbols[0].hint == 4 && g.symbols[0].min == 2));
  CHECK(g.nodes.back().op == "output");
  CHECK(g.nodes.back().args.at(0).list.size() == 6);
  // What is written reads back and passes the reader's own shape check.
  const Graph back = read_graph_text(write_graph_text(g), "t.json");
  ShapeProver prover(back.symbols);
  CHECK(check_shapes(back, prover).issues.empty());
}

TEST_CASE("graph text: without output(...) the last node is the output", "[graph-text]") {
  const Graph g = read_text_graph("x = input([3])\ny = neg(x)\nneg(y)\n", "g.sg");
  REQUIRE(g.nodes.size() == 4);
  CHECK(g.nodes[2].name == "n0");  // an unnamed node gets a fresh name
  CHECK(g.nodes.back().args.at(0).list.at(0).node == 2);
}

TEST_CASE("graph text: each mistake is named by line and column", "[graph-text]") {
  CHECK(error_of("x = input([4, 8])\ny = nope(x)\n") ==
        "g.sg:2:5: no op 'nope' in the op table (`sator ops` lists them)");
  CHECK(error_of("x = input([4, 8])\ny = neg(z)\n") == "g.sg:2:9: 'z' names no node, size or dtype before this line");
  CHECK(error_of("x = input([4, 8])\nx = neg(x)\n") == "g.sg:2:1: 'x' is named twice");
  CHECK(error_of("x = input([4, 8])\ny = view(x, [4 * 8])\n") == "g.sg:2:16: unexpected character '*'");
  CHECK(error_of("x = input([4, 8])\ny = neg(x\n") == "g.sg:2:10: expected ',', got the end of the line");
  CHECK(error_of("x = input([4, 8])\no = output(x)\n") == "g.sg:2:1: output(...) has no name");
  CHECK(error_of("x = input([4, 8])\noutput(x)\ny = neg(x)\n") == "g.sg:3:1: nothing may follow output(...)");
  CHECK(error_of("x = input([4, 8])\nt = t(x)\nv = view(t, [32])\n").rfind("g.sg:3:5: view of 't'", 0) == 0);
  // The op's own shape function: the message says why, at the op.
  const std::string bad = error_of("a = input([4, 8])\nb = input([3, 8])\nc = mul.Tensor(a, b)\n");
  CHECK(bad.rfind("g.sg:3:5: ", 0) == 0);
  CHECK(bad.size() > std::string("g.sg:3:5: ").size());
  CHECK(error_of("# nothing\n") == "g.sg: no nodes (a line such as: x = input([4, 8]))");
  CHECK(error_of("x = input([4, 8])\n").empty());
}
