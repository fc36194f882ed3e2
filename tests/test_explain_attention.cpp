// `optimize --explain-attention`: each softmax over a rank-4 tensor, fused
// or the first reason it was not.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "interp/verify.h"
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

// Attention as SDPA's math path writes it when PyTorch decomposes it (the
// transformers "sdpa" models' graphs): q and kᵀ each scaled by sqrt(s) with
// mul.Scalar, the scores through bmm, an all-zero mask where(row >= 0, 0,
// -inf), softmax written out, and _safe_softmax's guard
// where(not(any(not(x == -inf))), 0, p) before the values' bmm.
Graph sdpa_math_attention() {
  B b("sdpa math");
  const int64_t N = 2, H = 4, L = 16, E = 8;
  const NodeId q = b.input({N, H, L, E}), k = b.input({N, H, L, E}), v = b.input({N, H, L, E});
  const double root_scale = 1.0 / std::sqrt(std::sqrt(static_cast<double>(E)));
  const NodeId qs = b.op("aten.mul.Scalar", {B::ref(q), Value::of_float(root_scale)});
  const NodeId kt = b.op("aten.permute.default", {B::ref(k), B::ints({0, 1, 3, 2})});
  const NodeId ks = b.op("aten.mul.Scalar", {B::ref(kt), Value::of_float(root_scale)});
  const NodeId qf = b.op("aten.view.default", {B::ref(qs), B::sizes({N * H, L, E})});
  const NodeId kf = b.op("aten.view.default", {B::ref(ks), B::sizes({N * H, E, L})});
  const NodeId scores = b.op("aten.view.default",
                             {B::ref(b.op("aten.bmm.default", {B::ref(qf), B::ref(kf)})), B::sizes({N, H, L, L})});
  const NodeId iota = b.op("prims.iota.default", {Value::of_int(L)},
                           {{"start", Value::of_int(0)}, {"step", Value::of_int(1)}, {"dtype", Value::of_dtype(DType::Int64)},
                            {"device", Value::of_text(Value::Kind::Device, "cpu")}, {"requires_grad", Value::of_bool(false)}});
  const NodeId row = b.op("aten.unsqueeze.default", {B::ref(iota), Value::of_int(-1)});
  const NodeId keep = b.op("aten.expand.default", {B::ref(b.op("aten.ge.Scalar", {B::ref(row), Value::of_int(0)})), B::sizes({L, L})});
  const auto scalar = [&](double x) {
    return b.op("aten.scalar_tensor.default", {Value::of_float(x)}, {{"dtype", Value::of_dtype(DType::Float32)}});
  };
  const NodeId mask = b.op("aten.where.self", {B::ref(keep), B::ref(scalar(0.0)), B::ref(scalar(-INFINITY))});
  const NodeId x = b.op("aten.add.Tensor", {B::ref(scores), B::ref(mask)});
  const NodeId m = b.op("aten.amax.default", {B::ref(x), B::ints({-1}), Value::of_bool(true)});
  const NodeId e = b.op("aten.exp.default", {B::ref(b.op("aten.sub.Tensor", {B::ref(x), B::ref(m)}))});
  const NodeId total = b.op("aten.sum.dim_IntList", {B::ref(e), B::ints({-1}), Value::of_bool(true)});
  const NodeId p = b.op("aten.div.Tensor", {B::ref(e), B::ref(total)});
  const NodeId finite = b.op("aten.logical_not.default", {B::ref(b.op("aten.eq.Scalar", {B::ref(x), Value::of_float(-INFINITY)}))});
  const NodeId all_masked = b.op("aten.logical_not.default",
                                 {B::ref(b.op("aten.any.dim", {B::ref(finite), Value::of_int(-1), Value::of_bool(true)}))});
  const NodeId zero = b.op("aten.full.default", {B::sizes({N, H, L, L}), Value::of_int(0)},
                           {{"dtype", Value::of_dtype(DType::Float32)}, {"layout", Value::of_text(Value::Kind::Enum, "torch.strided")}});
  const NodeId guarded = b.op("aten.where.self", {B::ref(all_masked), B::ref(zero), B::ref(p)});
  const NodeId pf = b.op("aten.view.default", {B::ref(guarded), B::sizes({N * H, L, L})});
  const NodeId vf = b.op("aten.view.default", {B::ref(v), B::sizes({N * H, L, E})});
  const NodeId o = b.op("aten.view.default", {B::ref(b.op("aten.bmm.default", {B::ref(pf), B::ref(vf)})), B::sizes({N, H, L, E})});
  return b.finish({o});
}

// Scores with two biases added in model order: a relative-position bias
// before the scores, a mask over positions after: (bias + q kᵀ / c) + mask,
// the scale a division by a 0-d constant tensor, kᵀ a transpose; the
// attention output is the graph's output.
Graph biases_around_scores() {
  B b("biases");
  const int64_t N = 2, H = 4, L = 16, E = 16;
  const NodeId q = b.input({N, H, L, E}), k = b.input({N, H, L, E}), v = b.input({N, H, L, E});
  const NodeId position = b.input({1, H, L, L}), positions_mask = b.input({1, 1, L, L});
  const NodeId kt = b.op("aten.transpose.int", {B::ref(k), Value::of_int(-2), Value::of_int(-1)});
  const NodeId qk = b.op("aten.matmul.default", {B::ref(q), B::ref(kt)});
  const NodeId c = b.op("aten.scalar_tensor.default", {Value::of_float(std::sqrt(static_cast<double>(E)))},
                        {{"dtype", Value::of_dtype(DType::Float32)}});
  const NodeId scaled = b.op("aten.div.Tensor", {B::ref(qk), B::ref(c)});
  const NodeId biased = b.op("aten.add.Tensor", {B::ref(position), B::ref(scaled)});
  const NodeId masked = b.op("aten.add.Tensor", {B::ref(biased), B::ref(positions_mask)});
  const NodeId p = b.op("aten._softmax.default", {B::ref(masked), Value::of_int(-1), Value::of_bool(false)});
  return b.finish({b.op("aten.matmul.default", {B::ref(p), B::ref(v)})});
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

TEST_CASE("SDPA's math decomposition is fused back into one kernel, scale folded, and verifies", "[explain][attention]") {
  const Graph g = sdpa_math_attention();
  const auto a = explained(g);
  REQUIRE(a.size() == 1);
  CHECK(a[0].fused);
  const pipeline::OptimizeResult r = pipeline::optimize(g, {});
  size_t kernels = 0;
  for (const Node& n : r.output.nodes) {
    if (n.op != "aten.scaled_dot_product_attention.default") continue;
    ++kernels;
    CHECK(n.args[3].is_none());  // the zero mask is no bias
    REQUIRE(!n.kwargs.empty());
    CHECK(n.kwargs[0].second.f == Approx(1.0 / std::sqrt(8.0)).epsilon(1e-12));  // sqrt(s) · sqrt(s)
  }
  CHECK(kernels == 1);
  const interp::VerifyResult v = interp::verify_optimized(g, r.output);
  CHECK(v.status == interp::VerifyResult::Status::Passed);
  CHECK(v.max_error < 1e-9);
  // Without the guard's identity the block stays decomposed.
  pipeline::OptimizeOptions without;
  without.without_rules = {"safe-softmax-recompose"};
  without.explain_attention = true;
  const auto unguarded = pipeline::optimize(g, without).attention;
  REQUIRE(unguarded.size() == 1);
  CHECK_FALSE(unguarded[0].fused);
}

TEST_CASE("biases on either side of the scores gather into one mask; the block fuses and verifies", "[explain][attention]") {
  const Graph g = biases_around_scores();
  const pipeline::OptimizeResult r = pipeline::optimize(g, {});
  REQUIRE(r.sdpa_out == 1);
  for (const Node& n : r.output.nodes)
    if (n.op == "aten.scaled_dot_product_attention.default") {
      CHECK(n.args[3].is_node());  // the two biases, summed, as the mask
      CHECK(n.kwargs[0].second.f == 0.25);  // 1 / 4, the 0-d tensor's value
    }
  const interp::VerifyResult v = interp::verify_optimized(g, r.output);
  CHECK(v.status == interp::VerifyResult::Status::Passed);
  // The bias first is what add-full-operand-first turns around; without it
  // the block stays decomposed, and the listing says why.
  pipeline::OptimizeOptions without;
  without.without_rules = {"add-full-operand-first"};
  without.explain_attention = true;
  const pipeline::OptimizeResult u = pipeline::optimize(g, without);
  CHECK(u.sdpa_out == 0);
  REQUIRE(u.attention.size() == 1);
  CHECK(u.attention[0].why.find("no attention rule fuses") != std::string::npos);
}

TEST_CASE("optimize: --without-rule names a shipped rule", "[explain][attention]") {
  pipeline::OptimizeOptions o;
  o.without_rules = {"no-such-rule"};
  CHECK_THROWS_AS(pipeline::optimize(sdpa_math_attention(), o), std::invalid_argument);
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

// The first reason, on real graphs whose blocks are left decomposed for
// different reasons: each names what a user can do about it.
TEST_CASE("explain-attention: the reasons real graphs' blocks are left decomposed", "[explain][corpus]") {
  const auto reasons = [](const std::string& path, pipeline::OptimizeOptions o = {}) {
    o.explain_attention = true;
    const auto blocks = pipeline::optimize(load_graph(test::corpus_path(path)), o).attention;
    std::set<std::string> out;
    for (const auto& a : blocks) out.insert(a.fused ? "fused" : a.why);
    return out;
  };
  const auto has = [](const std::set<std::string>& whys, const std::string& text) {
    for (const auto& w : whys)
      if (w.find(text) != std::string::npos) return true;
    return false;
  };
  // gpt2 training applies dropout to the probabilities: opt-in.
  const auto dropout = reasons("graphs/gpt2.train.g0.json");
  CHECK(dropout.size() == 1);
  CHECK(has(dropout, "--fuse-dropout"));
  // MPT under autocast adds a float32 ALiBi bias to bf16 scores.
  const auto alibi = reasons("zoo/graphs/mpt.amp-eager.infer.g0.json");
  CHECK(alibi.size() == 1);
  CHECK(has(alibi, "float32 term to 16-bit"));
  // OPT training adds its padding mask (an input): the efficient kernels
  // take it, and the graph as Inductor fuses it is estimated cheaper
  // without them; in the zoo's float32 OPT the extraction itself keeps the
  // decomposed block. Without the efficient kernels, the option is named.
  CHECK(has(reasons("graphs/opt.train.g2.json"), "estimated cheaper without them"));
  const auto fp32 = reasons("zoo/graphs/opt.fp32-eager.train.g2.json");
  CHECK(has(fp32, "fused in the e-graph"));
  pipeline::OptimizeOptions cudnn_only;
  cudnn_only.training_attention_bias = false;
  CHECK(has(reasons("graphs/opt.train.g2.json", cudnn_only), "--training-attention-bias"));
  // SDPA's math path under autocast (vit) fuses in inference and, forward
  // and backward together, in its joint graph.
  CHECK(reasons("zoo/graphs/vit.amp-sdpa.infer.g0.json") == std::set<std::string>{"fused"});
  CHECK(reasons("zoo/graphs/vit.amp-sdpa.train.g0.json") == std::set<std::string>{"fused"});
}
