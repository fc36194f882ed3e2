// Attention written each way models write it, small: the scale as a
// multiplication or a division by a number or by a 0-d constant tensor, or
// √s on q and on kᵀ (SDPA's math path), or none; kᵀ by transpose or permute;
// a bias before the scores, after them, or none; inference and training
// (forward and backward as AOTAutograd writes them). Each reaches the
// attention rules' one canonical form through the identities and fuses, and
// the fused graph computes what the written one does (the float64
// interpreter).
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "interp/verify.h"
#include "ir/graph_builder.h"
#include "pipeline/optimize.h"

using namespace sator;

namespace {

using B = GraphBuilder;

enum class Scale { MulNumber, DivNumber, DivConstant, DivInexactConstant, MulConstant, RootOnQAndK, None };
enum class Bias { None, Before, After };

const char* name(Scale s) {
  switch (s) {
    case Scale::MulNumber: return "x * number";
    case Scale::DivNumber: return "x / number";
    case Scale::DivConstant: return "x / 0-d constant";
    case Scale::DivInexactConstant: return "x / 0-d constant float32 does not hold";
    case Scale::MulConstant: return "x * 0-d constant";
    case Scale::RootOnQAndK: return "sqrt(s) on q and on k^T";
    case Scale::None: return "no scale";
  }
  return "?";
}

struct Written {
  Graph graph;
  double scale = 1.0;  // what the kernel's scale must be
};

Written attention(Scale scale, bool transpose, Bias bias, bool training) {
  B b("forms");
  const int64_t N = 2, H = 2, L = 8, E = 16;
  const double s = 0.25;  // 1 / sqrt(E), exact
  const NodeId q = b.input({N, H, L, E}), k = b.input({N, H, L, E}), v = b.input({N, H, L, E});
  const NodeId bias_in = bias == Bias::None ? 0 : b.input({1, H, L, L});
  const auto swap = [&](NodeId x) {
    return transpose ? b.op("aten.transpose.int", {B::ref(x), Value::of_int(-2), Value::of_int(-1)})
                     : b.op("aten.permute.default", {B::ref(x), B::ints({0, 1, 3, 2})});
  };
  const auto constant = [&](double x) {
    return B::ref(b.op("aten.scalar_tensor.default", {Value::of_float(x)}, {{"dtype", Value::of_dtype(DType::Float32)}}));
  };
  // The scale as written, applied to the scores (and, in training, to their gradient).
  const auto scaled = [&](NodeId x) {
    switch (scale) {
      case Scale::MulNumber: return b.op("aten.mul.Tensor", {B::ref(x), Value::of_float(s)});
      case Scale::DivNumber: return b.op("aten.div.Tensor", {B::ref(x), Value::of_float(1 / s)});
      case Scale::DivConstant: return b.op("aten.div.Tensor", {B::ref(x), constant(1 / s)});
      case Scale::DivInexactConstant: return b.op("aten.div.Tensor", {B::ref(x), constant(std::sqrt(96.0))});
      case Scale::MulConstant: return b.op("aten.mul.Tensor", {B::ref(x), constant(s)});
      default: return x;
    }
  };
  NodeId scores;
  if (scale == Scale::RootOnQAndK) {
    const NodeId qs = b.op("aten.mul.Scalar", {B::ref(q), Value::of_float(std::sqrt(s))});
    const NodeId ks = b.op("aten.mul.Scalar", {B::ref(swap(k)), Value::of_float(std::sqrt(s))});
    scores = b.op("aten.matmul.default", {B::ref(qs), B::ref(ks)});
  } else {
    scores = scaled(b.op("aten.matmul.default", {B::ref(q), B::ref(swap(k))}));
  }
  if (bias == Bias::Before) scores = b.op("aten.add.Tensor", {B::ref(bias_in), B::ref(scores)});
  if (bias == Bias::After) scores = b.op("aten.add.Tensor", {B::ref(scores), B::ref(bias_in)});
  const NodeId p = b.op("aten._softmax.default", {B::ref(scores), Value::of_int(-1), Value::of_bool(false)});
  const NodeId o = b.op("aten.matmul.default", {B::ref(p), B::ref(v)});
  const double kernel_scale = scale == Scale::None ? 1.0 : scale == Scale::DivInexactConstant ? 1 / std::sqrt(96.0) : s;
  if (!training) return {b.finish({o}), kernel_scale};
  const NodeId d_out = b.input({N, H, L, E});
  const NodeId dp = b.op("aten.matmul.default", {B::ref(d_out), B::ref(swap(v))});
  const NodeId dpp = b.op("aten.mul.Tensor", {B::ref(dp), B::ref(p)});
  const NodeId sum = b.op("aten.sum.dim_IntList", {B::ref(dpp), B::ints({-1}), Value::of_bool(true)});
  const NodeId ds = scaled(b.op("prims.fma.default", {B::ref(b.op("aten.neg.default", {B::ref(p)})), B::ref(sum), B::ref(dpp)}));
  const auto tr = [&](NodeId x) { return b.op("aten.permute.default", {B::ref(x), B::ints({0, 1, 3, 2})}); };
  NodeId dq, dk;
  if (scale == Scale::RootOnQAndK) {
    // The gradients of q·a and kᵀ·a, then scaled by a again.
    const double root = std::sqrt(s);
    const NodeId qs = b.op("aten.mul.Scalar", {B::ref(q), Value::of_float(root)});
    const NodeId kts = b.op("aten.mul.Scalar", {B::ref(swap(k)), Value::of_float(root)});
    const NodeId d_qs = b.op("aten.matmul.default", {B::ref(ds), B::ref(tr(kts))});
    const NodeId d_kts = b.op("aten.matmul.default", {B::ref(tr(qs)), B::ref(ds)});
    dq = b.op("aten.mul.Scalar", {B::ref(d_qs), Value::of_float(root)});
    dk = tr(b.op("aten.mul.Scalar", {B::ref(d_kts), Value::of_float(root)}));
  } else {
    dq = b.op("aten.matmul.default", {B::ref(ds), B::ref(k)});
    dk = b.op("aten.matmul.default", {B::ref(tr(ds)), B::ref(q)});
  }
  const NodeId dv = b.op("aten.matmul.default", {B::ref(tr(p)), B::ref(d_out)});
  Graph g = b.finish({o, dq, dk, dv});
  g.nodes[d_out].role = Role::Tangent;
  return {std::move(g), kernel_scale};
}

}  // namespace

TEST_CASE("attention written each way models write it fuses and verifies (inference)", "[attention][forms]") {
  for (Scale scale : {Scale::MulNumber, Scale::DivNumber, Scale::DivConstant, Scale::DivInexactConstant,
                      Scale::MulConstant, Scale::RootOnQAndK, Scale::None})
    for (bool transpose : {false, true})
      for (Bias bias : {Bias::None, Bias::Before, Bias::After}) {
        INFO(name(scale) << (transpose ? ", transpose" : ", permute") << ", bias " << static_cast<int>(bias));
        const Written w = attention(scale, transpose, bias, false);
        const pipeline::OptimizeResult r = pipeline::optimize(w.graph, {});
        REQUIRE(r.sdpa_out == 1);
        for (const Node& n : r.output.nodes)
          if (n.op == "aten.scaled_dot_product_attention.default") {
            CHECK(n.kwarg("scale")->f == Approx(w.scale).epsilon(1e-12));
            CHECK(n.args[3].is_node() == (bias != Bias::None));
          }
        const interp::VerifyResult v = interp::verify_optimized(w.graph, r.output);
        CHECK(v.status == interp::VerifyResult::Status::Passed);
      }
}

TEST_CASE("attention written each way models write it fuses and verifies (training)", "[attention][forms]") {
  for (Scale scale : {Scale::MulNumber, Scale::DivNumber, Scale::DivConstant, Scale::DivInexactConstant,
                      Scale::MulConstant, Scale::RootOnQAndK, Scale::None})
    for (bool transpose : {false, true})
      for (Bias bias : {Bias::None, Bias::After}) {
        INFO(name(scale) << (transpose ? ", transpose" : ", permute") << ", bias " << static_cast<int>(bias));
        const Written w = attention(scale, transpose, bias, true);
        pipeline::OptimizeOptions o;
        o.training_attention_bias = bias != Bias::None;  // a bias is opt-in in training
        const pipeline::OptimizeResult r = pipeline::optimize(w.graph, o);
        CHECK(r.sdpa_out == 2);  // the efficient kernels' forward and backward
        const interp::VerifyResult v = interp::verify_optimized(w.graph, r.output);
        CHECK(v.status == interp::VerifyResult::Status::Passed);
      }
}
