// Bad input gets one clear message naming the file, the node and the problem.
#include <catch2/catch.hpp>

#include "ir/shape_check.h"
#include "test_util.h"

using namespace sator;

namespace {

const std::string kX = R"({"name":"x","op":"placeholder","role":"input","shape":[4,8],"stride":[8,1],"dtype":"float32"})";
const std::string kOut = R"({"name":"output","op":"output","args":[[{"node":"x"}]]})";

// Loads `text` as file "bad.json" with the full validation `sator` applies;
// returns the error, or fails the test if none is raised.
GraphError load_error(const std::string& text) {
  try {
    Graph g = read_graph_text(text, "bad.json");
    ShapeProver prover(g.symbols);
    require_consistent_shapes(g, check_shapes(g, prover), "bad.json");
  } catch (const GraphError& e) {
    return e;
  }
  FAIL("accepted bad input: " << text);
  throw std::logic_error("unreachable");
}

void refused(const std::string& text, const std::string& node, const std::string& fragment) {
  INFO(text);
  GraphError e = load_error(text);
  CHECK(e.file() == "bad.json");
  CHECK(e.node() == node);
  CHECK_THAT(e.message(), Catch::Contains(fragment));
  CHECK(std::string(e.what()).find('\n') == std::string::npos);  // one line
}

std::string with_node(const std::string& node) { return test::document(kX + "," + node + "," + kOut); }

}  // namespace

TEST_CASE("document-level errors", "[bad]") {
  refused("{\"format\": ", "", "malformed JSON");
  refused("[1,2]", "", "expected an object");
  refused(R"({"format":"onnx","version":1,"name":"t","nodes":[]})", "", "expected \"sator.graph\"");
  refused(R"({"format":"sator.graph","version":2,"name":"t","nodes":[]})", "", "unsupported \"version\"");
  refused(R"({"format":"sator.graph","version":1,"nodes":[]})", "", "missing field \"name\"");
  refused(R"({"format":"sator.graph","version":1,"name":"t","nodes":[],"extra":1})", "", "unknown field \"extra\"");
  refused(test::document(""), "", "no nodes");
  refused(test::document(kX), "", "no output node");
  refused(R"({"format":"sator.graph","version":1,"name":"t","nodes":{}})", "", "must be an array");
}

TEST_CASE("node fields", "[bad]") {
  refused(test::document(R"({"name":"x","op":"placeholder","role":"input","shape":[4],"stride":[1],"dtype":"float32","colour":"red"},)" + kOut),
          "x", "unknown field \"colour\"");
  refused(test::document(R"({"name":"x","role":"input","shape":[4],"stride":[1],"dtype":"float32"},)" + kOut), "x",
          "missing field \"op\"");
  refused(test::document(R"({"name":"x","op":"placeholder","shape":[4],"stride":[1],"dtype":"float32"},)" + kOut), "x",
          "needs a \"role\"");
  refused(test::document(R"({"name":"x","op":"placeholder","role":"input","shape":[4],"stride":[1],"dtype":"float33"},)" + kOut),
          "x", "unknown dtype \"float33\"");
  refused(test::document(R"({"name":"x","op":"placeholder","role":"input","shape":[4,2],"stride":[1],"dtype":"float32"},)" + kOut),
          "x", "2 sizes but 1 strides");
  refused(with_node(R"({"name":"y","op":"aten.relu.default","args":{"node":"x"},"shape":[4,8],"stride":[8,1],"dtype":"float32"})"),
          "y", "expected an array");
  refused(test::document(kX + "," + kX + "," + kOut), "x", "duplicate node name");
  refused(with_node(R"({"name":"y","op":"aten.relu.default","args":[{"node":"x"}],"shape":[4,8],"stride":[8,1],"dtype":"float32","role":"input"})"),
          "y", "only allowed on placeholders");
}

TEST_CASE("references and order", "[bad]") {
  refused(with_node(R"({"name":"y","op":"aten.relu.default","args":[{"node":"nowhere"}],"shape":[4,8],"stride":[8,1],"dtype":"float32"})"),
          "y", "unknown node 'nowhere'");
  refused(test::document(kX + R"(,{"name":"y","op":"aten.add.Tensor","args":[{"node":"x"},{"node":"z"}],"shape":[4,8],"stride":[8,1],"dtype":"float32"},)"
                              R"({"name":"z","op":"aten.relu.default","args":[{"node":"y"}],"shape":[4,8],"stride":[8,1],"dtype":"float32"},)" + kOut),
          "y", "comes later");
  refused(with_node(R"({"name":"y","op":"aten.relu.default","args":[{"node":"y"}],"shape":[4,8],"stride":[8,1],"dtype":"float32"})"),
          "y", "refers to itself");
  refused(test::document(kX + "," + kOut + "," + R"({"name":"z","op":"aten.relu.default","args":[{"node":"x"}],"shape":[4,8],"stride":[8,1],"dtype":"float32"})"),
          "z", "after the output node");
}

TEST_CASE("symbols and sizes", "[bad]") {
  const auto sym = [](const std::string& shape, const std::string& symbols) {
    return test::document(R"({"name":"x","op":"placeholder","role":"input","shape":)" + shape +
                              R"(,"stride":[1],"dtype":"float32"},)" + kOut,
                          symbols);
  };
  const std::string s0 = R"([{"name":"s0","hint":4,"min":2,"max":null}])";
  refused(sym(R"(["s0 +"])", s0), "x", "bad size expression");
  refused(sym(R"(["s9"])", s0), "x", "undeclared symbol 's9'");
  refused(sym(R"([1099511627777])", "[]"), "x", "absurdly large");
  refused(sym(R"([-3])", "[]"), "x", "negative");
  refused(sym(R"([4])", R"([{"name":"s0","hint":1,"min":2,"max":null}])"), "", "outside its range");
  refused(sym(R"([4])", R"([{"name":"s0","hint":4,"min":2,"max":null},{"name":"s0","hint":4,"min":2,"max":null}])"), "",
          "duplicate symbol");
  refused(test::document(R"({"name":"x","op":"placeholder","role":"input","shape":[1073741824,1073741824],"stride":[1,1],"dtype":"float32"},)" + kOut),
          "x", "absurd number of elements");
  refused(with_node(R"({"name":"y","op":"aten.view.default","args":[{"node":"x"},[18446744073709551615]],"shape":[4,8],"stride":[8,1],"dtype":"float32"})"),
          "y", "beyond the 64-bit integer range");
}

TEST_CASE("values and constants", "[bad]") {
  refused(with_node(R"({"name":"y","op":"aten.mul.Scalar","args":[{"node":"x"},{"float":"lots"}],"shape":[4,8],"stride":[8,1],"dtype":"float32"})"),
          "y", "not inf, -inf or nan");
  refused(with_node(R"({"name":"y","op":"aten.mul.Scalar","args":[{"node":"x"},{"quantity":3}],"shape":[4,8],"stride":[8,1],"dtype":"float32"})"),
          "y", "unknown encoded value");
  refused(with_node(R"({"name":"c","op":"get_attr","target":"c","value":[1,2,3],"args":[],"shape":[2],"stride":[1],"dtype":"float32"})"),
          "c", "does not match shape");
}

TEST_CASE("recorded types that contradict the op", "[bad]") {
  refused(with_node(R"({"name":"y","op":"aten.relu.default","args":[{"node":"x"}],"shape":[4,9],"stride":[9,1],"dtype":"float32"})"),
          "y", "recorded shape [4, 9] contradicts the op's [4, 8]");
  refused(with_node(R"({"name":"y","op":"aten.relu.default","args":[{"node":"x"}],"shape":[4,8],"stride":[8,1],"dtype":"int64"})"),
          "y", "recorded dtype int64");
  refused(with_node(R"({"name":"y","op":"aten.mm.default","args":[{"node":"x"},{"node":"x"}],"shape":[4,8],"stride":[8,1],"dtype":"float32"})"),
          "y", "inner dimensions differ");
  refused(with_node(R"({"name":"y","op":"aten.var_mean.correction","args":[{"node":"x"},[1]],"shape":[4],"stride":[1],"dtype":"float32"})"),
          "y", "records a tensor but the op produces a tuple");
}

TEST_CASE("unknown ops are opaque, not errors", "[bad]") {
  Graph g = read_graph_text(with_node(R"({"name":"y","op":"mylib.custom.default","args":[{"node":"x"}],"shape":[3],"stride":[1],"dtype":"float32"})"),
                            "ok.json");
  ShapeProver prover(g.symbols);
  auto report = check_shapes(g, prover);
  CHECK(report.issues.empty());
  CHECK(report.opaque == 1);
  CHECK(report.opaque_ops == std::vector<std::string>{"mylib.custom.default"});
}
