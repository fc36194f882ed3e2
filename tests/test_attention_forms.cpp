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

TEST_CASE("a view of the fused attention's output is written as reshape", "[attention][forms]") {
  // The attention kernels choose their output's layout (flash and efficient
  // write BSHD), so a view of the fused output that held for the matmul's
  // contiguous result may not hold for the kernel's: the writer must emit
  // reshape, which PyTorch serves as a view where the strides allow it.
  B b("viewed");
  const NodeId q = b.input({2, 2, 8, 16}), k = b.input({2, 2, 8, 16}), v = b.input({2, 2, 8, 16});
  const NodeId kt = b.op("aten.transpose.int", {B::ref(k), Value::of_int(-2), Value::of_int(-1)});
  const NodeId sc = b.op("aten.mul.Tensor", {B::ref(b.op("aten.matmul.default", {B::ref(q), B::ref(kt)})), Value::of_float(0.25)});
  const NodeId p = b.op("aten._softmax.default", {B::ref(sc), Value::of_int(-1), Value::of_bool(false)});
  const NodeId o = b.op("aten.matmul.default", {B::ref(p), B::ref(v)});
  const NodeId y = b.op("aten.view.default", {B::ref(o), B::ints({4, 128})});
  const Graph g = b.finish({y});
  const pipeline::OptimizeResult r = pipeline::optimize(g, {});
  REQUIRE(r.sdpa_out == 1);
  const Node& out = r.output.nodes[r.output.nodes.back().args[0].list[0].node];
  CHECK(out.op == "aten.reshape.default");
  CHECK(r.output.nodes[out.args[0].node].op == "aten.scaled_dot_product_attention.default");
  CHECK(interp::verify_optimized(g, r.output).status == interp::VerifyResult::Status::Passed);
}

TEST_CASE("attention written each way models write it fuses and verifies (training)", "[attention][forms]") {
  for (Scale scale : {Scale::MulNumber, Scale::DivNumber, Scale::DivConstant, Scale::DivInexactConstant,
                      Scale::MulConstant, Scale::RootOnQAndK, Scale::None})
    for (bool transpose : {false, true})
      for (Bias bias : {Bias::None, Bias::After}) {
        INFO(name(scale) << (transpose ? ", transpose" : ", permute") << ", bias " << static_cast<int>(bias));
        const Written w = attention(scale, transpose, bias, true);
        pipeline::OptimizeOptions o;
        // The rules' fused form as extracted (at these sizes the graph as
        // Inductor fuses it is cheaper decomposed; the weighing has its own
        // tests).
        o.weigh_biased_kernels = false;
        const pipeline::OptimizeResult r = pipeline::optimize(w.graph, o);
        CHECK(r.sdpa_out == 2);  // the efficient kernels' forward and backward
        const interp::VerifyResult v = interp::verify_optimized(w.graph, r.output);
        CHECK(v.status == interp::VerifyResult::Status::Passed);
      }
}

namespace {

// SDPA's math path in a joint graph under bf16 autocast, as AOTAutograd
// writes it when it decomposes SDPA (ViT's sdpa attention in training): the
// forward in float32 on upcasts of the 16-bit q, k, v (√s on q and on kᵀ,
// the _safe_softmax guard), the output cast back; the backward's products
// in 16 bits on casts of the float32 tensors, the softmax backward in
// float32. `flat`: the products as bmm of views, a cast after each view
// (as the captured graph has them), else 4-D matmuls.
Graph autocast_math_attention(bool flat, bool training) {
  B b("autocast_math");
  const int64_t N = 2, H = 2, L = 8, E = 16;
  const double root = 0.5;  // sqrt(1 / sqrt(E))
  const DType bf = DType::BFloat16, f32 = DType::Float32;
  const NodeId q16 = b.input({N, H, L, E}, bf), k16 = b.input({N, H, L, E}, bf), v16 = b.input({N, H, L, E}, bf);
  const auto cast = [&](NodeId x, DType t) {
    return b.op("prims.convert_element_type.default", {B::ref(x), Value::of_dtype(t)});
  };
  const auto tr = [&](NodeId x) { return b.op("aten.permute.default", {B::ref(x), B::ints({0, 1, 3, 2})}); };
  const auto scale = [&](NodeId x) { return b.op("aten.mul.Scalar", {B::ref(x), Value::of_float(root)}); };
  // x @ y, each operand cast to `t` first where it is not of it.
  const auto product = [&](NodeId x, NodeId y, DType t) {
    const auto operand = [&](NodeId a) {
      const std::vector<SymExpr>& s = b.type(a).shape;
      const NodeId flat_a = flat ? b.op("aten.view.default", {B::ref(a), B::sizes({N * H, s[2], s[3]})}) : a;
      return b.type(a).dtype == t ? flat_a : cast(flat_a, t);
    };
    const NodeId ox = operand(x), oy = operand(y);
    if (!flat) return b.op("aten.matmul.default", {B::ref(ox), B::ref(oy)});
    const NodeId r = b.op("aten.bmm.default", {B::ref(ox), B::ref(oy)});
    return b.op("aten.view.default", {B::ref(r), B::sizes({N, H, b.type(x).shape[2], b.type(y).shape[3]})});
  };
  const NodeId q = cast(q16, f32), k = cast(k16, f32), v = cast(v16, f32);
  const NodeId qs = scale(q), kts = scale(tr(k));
  const NodeId scores = product(qs, kts, f32);
  // _safe_softmax, decomposed.
  const NodeId amax = b.op("aten.amax.default", {B::ref(scores), B::ints({-1}), Value::of_bool(true)});
  const NodeId e = b.op("aten.exp.default", {B::ref(b.op("aten.sub.Tensor", {B::ref(scores), B::ref(amax)}))});
  const NodeId sum = b.op("aten.sum.dim_IntList", {B::ref(e), B::ints({-1}), Value::of_bool(true)});
  const NodeId div = b.op("aten.div.Tensor", {B::ref(e), B::ref(sum)});
  const NodeId finite = b.op("aten.logical_not.default",
                             {B::ref(b.op("aten.eq.Scalar", {B::ref(scores), Value::of_float(-INFINITY)}))});
  const NodeId none = b.op("aten.logical_not.default",
                           {B::ref(b.op("aten.any.dim", {B::ref(finite), Value::of_int(-1), Value::of_bool(true)}))});
  const NodeId zeros = b.op("aten.full.default", {B::sizes({N, H, L, L}), Value::of_float(0.0)},
                            {{"dtype", Value::of_dtype(f32)},
                             {"layout", Value::of_text(Value::Kind::Enum, "torch.strided")},
                             {"device", Value::of_text(Value::Kind::Device, "cpu")},
                             {"pin_memory", Value::of_bool(false)}});
  const NodeId p = b.op("aten.where.self", {B::ref(none), B::ref(zeros), B::ref(div)});
  const NodeId o = cast(product(p, v, f32), bf);
  if (!training) return b.finish({o});
  // The backward: dO arrives in 16 bits and is upcast; the products run in 16 bits.
  const NodeId d_out16 = b.input({N, H, L, E}, bf);
  const NodeId d_out = cast(d_out16, f32);
  const NodeId dp = cast(product(d_out, tr(v), bf), f32);
  const NodeId dpp = b.op("aten.mul.Tensor", {B::ref(dp), B::ref(p)});
  const NodeId dsum = b.op("aten.sum.dim_IntList", {B::ref(dpp), B::ints({-1}), Value::of_bool(true)});
  const NodeId ds = b.op("prims.fma.default", {B::ref(b.op("aten.neg.default", {B::ref(p)})), B::ref(dsum), B::ref(dpp)});
  const NodeId d_qs = cast(product(ds, tr(kts), bf), f32);
  const NodeId d_kts = cast(product(tr(qs), ds, bf), f32);
  const NodeId dq = cast(scale(d_qs), bf), dk = cast(tr(scale(d_kts)), bf);
  const NodeId dv = product(tr(p), d_out, bf);
  Graph g = b.finish({o, dq, dk, dv});
  g.nodes[d_out16].role = Role::Tangent;
  return g;
}

}  // namespace

TEST_CASE("SDPA's math path under autocast in a joint graph fuses and verifies", "[attention][forms]") {
  for (bool flat : {false, true}) {
    INFO((flat ? "bmm of views" : "4-D matmuls"));
    const Graph g = autocast_math_attention(flat, true);
    const pipeline::OptimizeResult r = pipeline::optimize(g, {});
    CHECK(r.sdpa_out == 2);  // the efficient kernels' forward and backward
    for (const Node& n : r.output.nodes)
      if (n.op == "aten._scaled_dot_product_efficient_attention.default") {
        CHECK(n.kwarg("scale")->f == Approx(0.25).epsilon(1e-12));
        // The kernels read the 16-bit q, k, v the graph upcast.
        for (size_t i = 0; i < 3; ++i) CHECK(r.output.nodes[n.args[i].node].tensor.dtype == DType::BFloat16);
      }
    const interp::VerifyResult v = interp::verify_optimized(g, r.output);
    CHECK(v.status == interp::VerifyResult::Status::Passed);
    // Without the rule's 16-bit reading the block stays decomposed.
    pipeline::OptimizeOptions off;
    off.training_attention = false;
    CHECK(pipeline::optimize(g, off).sdpa_out == 0);
  }
}

TEST_CASE("SDPA's math path under autocast fuses as 16-bit attention (inference)", "[attention][forms]") {
  for (bool flat : {false, true}) {
    INFO((flat ? "bmm of views" : "4-D matmuls"));
    const Graph g = autocast_math_attention(flat, false);
    const pipeline::OptimizeResult r = pipeline::optimize(g, {});
    REQUIRE(r.sdpa_out == 1);
    for (const Node& n : r.output.nodes)
      if (n.op == "aten.scaled_dot_product_attention.default") {
        CHECK(n.tensor.dtype == DType::BFloat16);
        for (size_t i = 0; i < 3; ++i) CHECK(r.output.nodes[n.args[i].node].tensor.dtype == DType::BFloat16);
      }
    CHECK(interp::verify_optimized(g, r.output).status == interp::VerifyResult::Status::Passed);
    // With the rule left out, the float32 kernel on the upcasts.
    pipeline::OptimizeOptions o;
    o.without_rules = {"attention-on-16-bit-upcasts"};
    const pipeline::OptimizeResult wide = pipeline::optimize(g, o);
    REQUIRE(wide.sdpa_out == 1);
    for (const Node& n : wide.output.nodes)
      if (n.op == "aten.scaled_dot_product_attention.default") CHECK(n.tensor.dtype == DType::Float32);
  }
}

namespace {

// Causal attention written with masked_fill, as many models write it:
// scores.masked_fill(~(kv <= q), min) (where(not(j <= i), min, s)), softmax,
// · v; in training its backward zeroes dS where the mask masks
// (where(c, 0, dS)). `dropout`: probabilities through dropout 0.1.
Graph masked_fill_attention(bool training, bool dropout) {
  B b("masked_fill");
  const int64_t N = 2, H = 2, L = 8, E = 16;
  const NodeId q = b.input({N, H, L, E}), k = b.input({N, H, L, E}), v = b.input({N, H, L, E});
  const auto tr = [&](NodeId x) { return b.op("aten.permute.default", {B::ref(x), B::ints({0, 1, 3, 2})}); };
  const auto iota = [&] {
    return b.op("prims.iota.default", {Value::of_int(L)},
                {{"start", Value::of_int(0)}, {"step", Value::of_int(1)}, {"dtype", Value::of_dtype(DType::Int64)},
                 {"device", Value::of_text(Value::Kind::Device, "cpu")}, {"requires_grad", Value::of_bool(false)}});
  };
  const NodeId col = b.op("aten.unsqueeze.default", {B::ref(iota()), Value::of_int(0)});
  const NodeId row = b.op("aten.unsqueeze.default", {B::ref(iota()), Value::of_int(1)});
  const NodeId c = b.op("aten.bitwise_not.default", {B::ref(b.op("aten.le.Tensor", {B::ref(col), B::ref(row)}))});
  const NodeId lowest = b.op("aten.scalar_tensor.default", {Value::of_float(-3.4028234663852886e38)},
                             {{"dtype", Value::of_dtype(DType::Float32)}});
  const NodeId scaled = b.op("aten.div.Tensor", {B::ref(b.op("aten.matmul.default", {B::ref(q), B::ref(tr(k))})),
                                                 Value::of_float(4.0)});
  const NodeId s = b.op("aten.where.self", {B::ref(c), B::ref(lowest), B::ref(scaled)});
  const NodeId p = b.op("aten._softmax.default", {B::ref(s), Value::of_int(-1), Value::of_bool(false)});
  NodeId pv = p, keep = 0;
  if (dropout) {
    const NodeId r = b.op("aten.rand.default", {B::sizes({N, H, L, L})}, {{"dtype", Value::of_dtype(DType::Float32)}});
    keep = b.op("aten.gt.Scalar", {B::ref(r), Value::of_float(0.1)});
    pv = b.op("aten.mul.Tensor", {B::ref(b.op("aten.mul.Tensor", {B::ref(keep), B::ref(p)})), Value::of_float(1.0 / 0.9)});
  }
  const NodeId o = b.op("aten.matmul.default", {B::ref(pv), B::ref(v)});
  if (!training) return b.finish({o});
  const NodeId d_out = b.input({N, H, L, E});
  NodeId dp = b.op("aten.matmul.default", {B::ref(d_out), B::ref(tr(v))});
  if (dropout) {
    const NodeId mask = b.op("aten.mul.Tensor", {B::ref(b.op("prims.convert_element_type.default",
                                                              {B::ref(keep), Value::of_dtype(DType::Float32)})),
                                                 Value::of_float(1.0 / 0.9)});
    dp = b.op("aten.mul.Tensor", {B::ref(dp), B::ref(mask)});
  }
  const NodeId dpp = b.op("aten.mul.Tensor", {B::ref(dp), B::ref(p)});
  const NodeId sum = b.op("aten.sum.dim_IntList", {B::ref(dpp), B::ints({-1}), Value::of_bool(true)});
  const NodeId fma = b.op("prims.fma.default", {B::ref(b.op("aten.neg.default", {B::ref(p)})), B::ref(sum), B::ref(dpp)});
  const NodeId zero = b.op("aten.scalar_tensor.default", {Value::of_float(0.0)}, {{"dtype", Value::of_dtype(DType::Float32)}});
  const NodeId ds = b.op("aten.div.Tensor", {B::ref(b.op("aten.where.self", {B::ref(c), B::ref(zero), B::ref(fma)})),
                                             Value::of_float(4.0)});
  const NodeId dq = b.op("aten.matmul.default", {B::ref(ds), B::ref(k)});
  const NodeId dk = b.op("aten.matmul.default", {B::ref(tr(ds)), B::ref(q)});
  const NodeId dv = b.op("aten.matmul.default", {B::ref(tr(pv)), B::ref(d_out)});
  Graph g = b.finish({o, dq, dk, dv});
  g.nodes[d_out].role = Role::Tangent;
  return g;
}

}  // namespace

TEST_CASE("causal attention written with masked_fill fuses as is_causal, inference and training", "[attention][forms]") {
  for (bool training : {false, true}) {
    INFO((training ? "training" : "inference"));
    const Graph g = masked_fill_attention(training, false);
    const pipeline::OptimizeResult r = pipeline::optimize(g, {});
    CHECK(r.sdpa_out == (training ? 2u : 1u));
    for (const Node& n : r.output.nodes)
      if (n.op.find("scaled_dot_product") != std::string::npos && n.op.find("backward") == std::string::npos)
        CHECK(n.args[training ? 6 : 5].b);  // is_causal
    CHECK(interp::verify_optimized(g, r.output).status == interp::VerifyResult::Status::Passed);
    // Without the gradient identity, masked_fill's backward keeps the training block decomposed.
    if (training) {
      pipeline::OptimizeOptions o;
      o.without_rules = {"masked-softmax-gradient"};
      CHECK(pipeline::optimize(g, o).sdpa_out == 0);
    }
  }
  // With dropout, fused when asked (the kernels draw their own mask).
  pipeline::OptimizeOptions drop;
  drop.fuse_dropout = true;
  CHECK(pipeline::optimize(masked_fill_attention(true, true), drop).sdpa_out == 2);
  CHECK(pipeline::optimize(masked_fill_attention(true, true), {}).sdpa_out == 0);
}
