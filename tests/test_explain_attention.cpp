// `optimize --explain-attention`: each softmax over a rank-4 tensor, fused
// or the first reason it was not.
#include <catch2/catch.hpp>

#include "ir/graph_builder.h"
#include "ir/shape_check.h"
#include "pipeline/optimize.h"
#include "test_util.h"

using namespace sator;

namespace {

using B = GraphBuilder;

// softmax(q kᵀ / 8, dim) v on [2, 4, 16, 8]; with `return_probabilities` the
// probabilities are a graph output too.
Graph attention(int64_t dim, bool return_probabilities) {
  B b("attention");
  const std::vector<SymExpr> s = {2, 4, 16, 8};
  const NodeId q = b.input(s), k = b.input(s), v = b.input(s);
  const NodeId kt = b.op("aten.transpose.int", {B::ref(k), Value::of_int(-2), Value::of_int(-1)});
  const NodeId scores = b.op("aten.matmul.default", {B::ref(q), B::ref(kt)});
  const NodeId scaled = b.op("aten.div.Tensor", {B::ref(scores), Value::of_float(8.0)});
  const NodeId p = b.op("aten._softmax.default", {B::ref(scaled), Value::of_int(dim), Value::of_bool(false)});
  const NodeId o = b.op("aten.matmul.default", {B::ref(p), B::ref(v)});
  return return_probabilities ? b.finish({o, p}) : b.finish({o});
}

std::vector<pipeline::AttentionBlock> explained(const Graph& g) {
  pipeline::OptimizeOptions o;
  o.explain_attention = true;
  return pipeline::optimize(g, o).attention;
}

}  // namespace

TEST_CASE("explain-attention: a plain attention block is fused", "[explain][attention]") {
  const auto a = explained(attention(-1, false));
  REQUIRE(a.size() == 1);
  CHECK(a[0].fused);
  CHECK(a[0].why.empty());
}

TEST_CASE("explain-attention: the reasons a block is not fused", "[explain][attention]") {
  const auto returned = explained(attention(-1, true));
  REQUIRE(returned.size() == 1);
  CHECK_FALSE(returned[0].fused);
  CHECK(returned[0].why.find("graph output") != std::string::npos);

  const auto other_dim = explained(attention(2, false));
  REQUIRE(other_dim.size() == 1);
  CHECK_FALSE(other_dim[0].fused);
  CHECK(other_dim[0].why == "softmax over dim 2, not the last: not attention's probabilities");
}

TEST_CASE("explain-attention: every corpus softmax is listed, fused ones in graphs with a kernel", "[explain][corpus]") {
  for (const char* name : {"gpt2.infer.g0", "bert.train.g0"}) {
    INFO(name);
    const Graph g = load_graph(test::corpus_path(std::string("graphs/") + name + ".json"));
    size_t softmaxes = 0;  // (decomposed ones, exp / sum, are listed too)
    for (const Node& n : g.nodes) softmaxes += n.op == "aten._softmax.default" && n.tensor.shape.size() == 4;
    pipeline::OptimizeOptions o;
    o.explain_attention = true;
    const pipeline::OptimizeResult r = pipeline::optimize(g, o);
    size_t fused = 0;
    for (const auto& a : r.attention) {
      fused += a.fused;
      CHECK((a.fused || !a.why.empty()));
    }
    CHECK(r.attention.size() >= softmaxes);
    // The blocks the report counts as fused are the kernels the output has.
    CHECK((fused > 0) == (r.sdpa_out > 0));
  }
}
