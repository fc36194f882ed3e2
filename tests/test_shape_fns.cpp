// Shape functions, each checked both ways: the right recorded type passes,
// a wrong one is reported.
#include <catch2/catch.hpp>

#include "ir/shape_check.h"
#include "test_util.h"

using namespace sator;

namespace {

const char* kSymbols = R"([{"name":"s0","hint":8,"min":2,"max":null},{"name":"s1","hint":16,"min":2,"max":null}])";

std::string tensor(const std::string& name, const std::string& shape, const char* dtype = "float32") {
  // Strides are not checked by shape inference; zeros keep the helper short.
  std::string strides = "[";
  int dims = shape == "[]" ? 0 : 1 + static_cast<int>(std::count(shape.begin(), shape.end(), ','));
  for (int i = 0; i < dims; ++i) strides += i ? ",0" : "0";
  strides += "]";
  return R"({"name":")" + name + R"(","op":"placeholder","role":"input","shape":)" + shape + R"(,"stride":)" +
         strides + R"(,"dtype":")" + dtype + "\"}";
}

std::string op(const std::string& name, const std::string& target, const std::string& args, const std::string& shape,
               const char* dtype = "float32", const std::string& kwargs = "") {
  std::string strides = "[";
  int dims = shape == "[]" ? 0 : 1 + static_cast<int>(std::count(shape.begin(), shape.end(), ','));
  for (int i = 0; i < dims; ++i) strides += i ? ",0" : "0";
  strides += "]";
  return R"({"name":")" + name + R"(","op":")" + target + R"(","args":)" + args +
         (kwargs.empty() ? "" : R"(,"kwargs":)" + kwargs) + R"(,"shape":)" + shape + R"(,"stride":)" + strides +
         R"(,"dtype":")" + dtype + "\"}";
}

const std::string kOutput = R"({"name":"output","op":"output","args":[[{"node":"y"}]]})";

// Issues reported for a graph of placeholders + one op node "y".
std::vector<std::string> issues(const std::string& inputs, const std::string& y) {
  Graph g = read_graph_text(test::document(inputs + "," + y + "," + kOutput, kSymbols), "t.json");
  ShapeProver prover(g.symbols);
  std::vector<std::string> out;
  for (const auto& i : check_shapes(g, prover).issues) out.push_back(i.message);
  return out;
}

void accepts(const std::string& inputs, const std::string& y) {
  INFO(y);
  CHECK(issues(inputs, y).empty());
}

void rejects(const std::string& inputs, const std::string& y, const std::string& fragment) {
  INFO(y);
  auto found = issues(inputs, y);
  REQUIRE(found.size() == 1);
  CHECK_THAT(found[0], Catch::Contains(fragment));
}

}  // namespace

TEST_CASE("view infers -1 and checks the element count", "[shape]") {
  const auto x = tensor("x", R"(["s0","s1",768])");
  accepts(x, op("y", "aten.view.default", R"([{"node":"x"},[-1,768]])", R"(["s0*s1",768])"));
  rejects(x, op("y", "aten.view.default", R"([{"node":"x"},[-1,768]])", R"(["s0",768])"), "contradicts");
  rejects(x, op("y", "aten.view.default", R"([{"node":"x"},[-1,-1]])", R"(["s0",768])"), "only one dimension");
  rejects(x, op("y", "aten.view.default", R"([{"node":"x"},[7,768]])", R"([7,768])"), "invalid for input");
}

TEST_CASE("permute, transpose, unsqueeze, squeeze, expand", "[shape]") {
  const auto x = tensor("x", R"(["s0",1,64])");
  accepts(x, op("y", "aten.permute.default", R"([{"node":"x"},[2,0,1]])", R"([64,"s0",1])"));
  rejects(x, op("y", "aten.permute.default", R"([{"node":"x"},[0,0,1]])", R"([64,"s0",1])"), "repeats");
  accepts(x, op("y", "aten.transpose.int", R"([{"node":"x"},0,-1])", R"([64,1,"s0"])"));
  accepts(x, op("y", "aten.unsqueeze.default", R"([{"node":"x"},-1])", R"(["s0",1,64,1])"));
  rejects(x, op("y", "aten.unsqueeze.default", R"([{"node":"x"},5])", R"(["s0",1,64,1])"), "out of range");
  accepts(x, op("y", "aten.squeeze.dim", R"([{"node":"x"},1])", R"(["s0",64])"));
  accepts(x, op("y", "aten.squeeze.dim", R"([{"node":"x"},0])", R"(["s0",1,64])"));  // s0 >= 2: kept
  accepts(x, op("y", "aten.expand.default", R"([{"node":"x"},[3,-1,5,64]])", R"([3,"s0",5,64])"));
  rejects(x, op("y", "aten.expand.default", R"([{"node":"x"},[-1,1,32]])", R"(["s0",1,32])"), "cannot become");
}

TEST_CASE("broadcasting and type promotion in pointwise ops", "[shape]") {
  const auto xs = tensor("a", R"(["s0",1,64])") + "," + tensor("b", R"([12,1])", "bfloat16") + "," +
                  tensor("i", R"([64])", "int64");
  accepts(xs, op("y", "aten.add.Tensor", R"([{"node":"a"},{"node":"b"}])", R"(["s0",12,64])"));
  rejects(xs, op("y", "aten.add.Tensor", R"([{"node":"a"},{"node":"b"}])", R"(["s0",12,64])", "bfloat16"), "dtype");
  accepts(xs, op("y", "aten.mul.Tensor", R"([{"node":"b"},2.5])", R"([12,1])", "bfloat16"));
  accepts(xs, op("y", "aten.div.Tensor", R"([{"node":"i"},2])", R"([64])", "float32"));
  accepts(xs, op("y", "aten.exp.default", R"([{"node":"i"}])", R"([64])", "float32"));
  accepts(xs, op("y", "aten.gt.Scalar", R"([{"node":"a"},0.5])", R"(["s0",1,64])", "bool"));
  accepts(xs, op("y", "prims.convert_element_type.default", R"([{"node":"a"},{"dtype":"bfloat16"}])",
                 R"(["s0",1,64])", "bfloat16"));
  const auto bad = tensor("a", R"(["s0",3])") + "," + tensor("b", R"([4])");
  rejects(bad, op("y", "aten.add.Tensor", R"([{"node":"a"},{"node":"b"}])", R"(["s0",4])"), "cannot be broadcast");
}

TEST_CASE("reductions", "[shape]") {
  const auto x = tensor("x", R"(["s0",12,"s1"])");
  accepts(x, op("y", "aten.sum.dim_IntList", R"([{"node":"x"},[-1],true])", R"(["s0",12,1])"));
  accepts(x, op("y", "aten.amax.default", R"([{"node":"x"},[1]])", R"(["s0","s1"])"));
  accepts(x, op("y", "aten.mean.dim", R"([{"node":"x"},null])", R"([])"));
  rejects(x, op("y", "aten.sum.dim_IntList", R"([{"node":"x"},[1,1]])", R"(["s0","s1"])"), "twice");
  const auto b = tensor("x", R"([4,5])", "bool");
  accepts(b, op("y", "aten.sum.default", R"([{"node":"x"}])", R"([])", "int64"));
}

TEST_CASE("matrix products check inner dimensions", "[shape]") {
  const auto xs = tensor("a", R"(["s0",768])") + "," + tensor("w", R"([768,3072])") + "," + tensor("c", R"([3072])");
  accepts(xs, op("y", "aten.mm.default", R"([{"node":"a"},{"node":"w"}])", R"(["s0",3072])"));
  accepts(xs, op("y", "aten.addmm.default", R"([{"node":"c"},{"node":"a"},{"node":"w"}])", R"(["s0",3072])"));
  rejects(xs, op("y", "aten.mm.default", R"([{"node":"w"},{"node":"w"}])", R"([768,3072])"), "inner dimensions");
  const auto bs = tensor("a", R"(["s0",16,64])") + "," + tensor("b", R"(["s0",64,"s1"])");
  accepts(bs, op("y", "aten.bmm.default", R"([{"node":"a"},{"node":"b"}])", R"(["s0",16,"s1"])"));
}

TEST_CASE("slice, cat, pad, embedding", "[shape]") {
  const auto x = tensor("x", R"(["s0","s1"])");
  accepts(x, op("y", "aten.slice.Tensor", R"([{"node":"x"},1,0,9223372036854775807])", R"(["s0","s1"])"));
  accepts(x, op("y", "aten.slice.Tensor", R"([{"node":"x"},1,1])", R"(["s0","s1 - 1"])"));
  accepts(x, op("y", "aten.cat.default", R"([[{"node":"x"},{"node":"x"}],1])", R"(["s0","2*s1"])"));
  accepts(x, op("y", "aten.constant_pad_nd.default", R"([{"node":"x"},[0,1],-100.0])", R"(["s0","s1 + 1"])"));
  const auto e = tensor("w", R"([100,32])") + "," + tensor("i", R"(["s0"])", "int64");
  accepts(e, op("y", "aten.embedding.default", R"([{"node":"w"},{"node":"i"}])", R"(["s0",32])"));
  rejects(e, op("y", "aten.embedding.default", R"([{"node":"i"},{"node":"w"}])", R"(["s0",32])"), "");
}

TEST_CASE("argument binding against the schema", "[shape]") {
  const auto x = tensor("x", R"([4,8])");
  rejects(x, op("y", "aten.sum.dim_IntList", R"([{"node":"x"},"oops"])", R"([4])"), "expected a list of ints");
  rejects(x, op("y", "aten.mm.default", R"([{"node":"x"}])", R"([4,8])"), "missing its argument 'mat2'");
  rejects(x, op("y", "aten.clone.default", R"([{"node":"x"}])", R"([4,8])", "float32", R"({"bogus":1})"),
          "no parameter 'bogus'");
  rejects(x, op("y", "aten.permute.default", R"([{"node":"x"},[1,0],3])", R"([8,4])"), "at most 2 positional");
}
