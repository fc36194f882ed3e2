// Instances of the SDPA-call rules' left-hand sides (rules/sdpa_calls.cpp):
// kernel calls as transformers' SDPA path writes them under torch.compile,
// with the mask it materialises (or none), in inference and training.
#include <limits>

#include "check/rule_cases.h"

namespace sator::check {

namespace {

using B = GraphBuilder;

const char* kCudnn = "aten._scaled_dot_product_cudnn_attention.default";
const char* kEfficient = "aten._scaled_dot_product_efficient_attention.default";

// An [L, L] (or [B, 1, L, L]) additive mask as the SDPA path builds it:
// where(kv <= q, 0, lowest) from two iotas, the lowest float16's or -inf;
// or where(q >= 0, 0, lowest), which adds 0 everywhere; or a random input
// (a real bias, which stays).
NodeId sdpa_mask(Draw& d, const SymExpr& batch, const SymExpr& L, DType t, bool batched) {
  const int kind = static_cast<int>(d.integer(0, 3));
  if (kind == 3) return d.b.input(batched ? std::vector<SymExpr>{batch, 1, L, L} : std::vector<SymExpr>{L, L}, t);
  auto iota = [&]() {
    return d.b.op("prims.iota.default", {B::sizes({L}).list[0]},
                  {{"start", Value::of_int(0)}, {"step", Value::of_int(1)}, {"dtype", Value::of_dtype(DType::Int64)},
                   {"device", Value::of_text(Value::Kind::Device, "cpu")}, {"requires_grad", Value::of_bool(false)}});
  };
  const NodeId kv = d.b.op("aten.unsqueeze.default", {B::ref(iota()), Value::of_int(0)});
  const NodeId q = d.b.op("aten.unsqueeze.default", {B::ref(iota()), Value::of_int(1)});
  const NodeId keep = kind == 2 ? d.b.op("aten.expand.default", {B::ref(d.b.op("aten.ge.Scalar", {B::ref(q), Value::of_int(0)})),
                                                                   B::sizes({L, L})})
                                : d.b.op("aten.le.Tensor", {B::ref(kv), B::ref(q)});
  const double lowest = kind == 0 ? -65504.0 : -std::numeric_limits<double>::infinity();
  const NodeId zero = d.b.op("aten.scalar_tensor.default", {Value::of_float(0.0)}, {{"dtype", Value::of_dtype(t)}});
  const NodeId low = d.b.op("aten.scalar_tensor.default", {Value::of_float(lowest)}, {{"dtype", Value::of_dtype(t)}});
  NodeId cond = keep;
  if (batched) {
    const NodeId c3 = d.b.op("aten.unsqueeze.default", {B::ref(keep), Value::of_int(0)});
    const NodeId c4 = d.b.op("aten.unsqueeze.default", {B::ref(c3), Value::of_int(0)});
    cond = d.b.op("aten.expand.default", {B::ref(c4), B::sizes({batch, 1, L, L})});
  }
  return d.b.op("aten.where.self", {B::ref(cond), B::ref(zero), B::ref(low)});
}

// The head dim: 8 or 16 (the cuDNN kernels take multiples of 8).
SymExpr head_dim(Draw& d) { return SymExpr(d.coin() ? 8 : 16); }

// getitem(K(q, k, v, m, 0, causal), 0) for K cuDNN, efficient or SDPA itself.
NodeId forward_call(Draw& d) {
  const DType t = d.pick(std::vector<DType>{DType::BFloat16, DType::Float16, DType::Float32});
  const SymExpr b = d.size(), h = d.size(), L = d.size(2), E = head_dim(d);
  const NodeId q = d.b.input({b, h, L, E}, t), k = d.b.input({b, h, L, E}, t), v = d.b.input({b, h, L, E}, t);
  const int family = static_cast<int>(d.integer(0, 2));
  const bool batched = family != 1 || d.coin();  // efficient takes [B, H, L, S]: expanded below
  NodeId m = sdpa_mask(d, b, L, t, batched);
  const Value scale = Value::of_float(d.number());
  if (family == 2) {
    return d.b.op("aten.scaled_dot_product_attention.default",
                  {B::ref(q), B::ref(k), B::ref(v), B::ref(m), Value::of_float(0.0), Value::of_bool(false)}, {{"scale", scale}});
  }
  if (family == 1) m = d.b.op("aten.expand.default", {B::ref(m), B::sizes({b, h, L, L})});
  std::vector<Value> args = {B::ref(q), B::ref(k), B::ref(v), B::ref(m), Value::of_bool(d.coin()), Value::of_float(0.0),
                             Value::of_bool(false)};
  const NodeId call = d.b.op(family == 0 ? kCudnn : kEfficient, args, {{"scale", scale}});
  return d.b.item(call, 0);
}

// A training pair of cuDNN or efficient kernels, a mask of sdpa_mask's or
// none (is_causal either way); the root dQ, then O, dK and dV.
NodeId training_pair(Draw& d) {
  const DType t = d.pick(std::vector<DType>{DType::BFloat16, DType::Float16});
  const SymExpr b = d.size(), h = d.size(), L = d.size(2), E = head_dim(d);
  const NodeId q = d.b.input({b, h, L, E}, t), k = d.b.input({b, h, L, E}, t), v = d.b.input({b, h, L, E}, t);
  const NodeId d_out = d.b.input({b, h, L, E}, t);
  const bool cudnn = d.coin();
  Value mask = Value::none();
  bool causal = false;
  if (d.integer(0, 2) != 0) {
    NodeId m = sdpa_mask(d, b, L, t, true);
    if (!cudnn) m = d.b.op("aten.expand.default", {B::ref(m), B::sizes({b, h, L, L})});
    mask = B::ref(m);
  } else {
    causal = d.coin();
  }
  const Value scale = Value::of_float(d.number());
  NodeId fwd, bwd;
  if (cudnn) {
    fwd = d.b.op(kCudnn, {B::ref(q), B::ref(k), B::ref(v), mask, Value::of_bool(true), Value::of_float(0.0),
                          Value::of_bool(causal), Value::of_bool(false)},
                 {{"scale", scale}});
    bwd = d.b.op("aten._scaled_dot_product_cudnn_attention_backward.default",
                 {B::ref(d_out), B::ref(q), B::ref(k), B::ref(v), B::ref(d.b.item(fwd, 0)), B::ref(d.b.item(fwd, 1)),
                  B::ref(d.b.item(fwd, 6)), B::ref(d.b.item(fwd, 7)), mask, Value::none(), Value::none(),
                  B::sizes({L}).list[0], B::sizes({L}).list[0], Value::of_float(0.0), Value::of_bool(causal)},
                 {{"scale", scale}});
  } else {
    fwd = d.b.op(kEfficient, {B::ref(q), B::ref(k), B::ref(v), mask, Value::of_bool(true), Value::of_float(0.0),
                              Value::of_bool(causal)},
                 {{"scale", scale}});
    bwd = d.b.op("aten._scaled_dot_product_efficient_attention_backward.default",
                 {B::ref(d_out), B::ref(q), B::ref(k), B::ref(v), mask, B::ref(d.b.item(fwd, 0)), B::ref(d.b.item(fwd, 1)),
                  B::ref(d.b.item(fwd, 2)), B::ref(d.b.item(fwd, 3)), Value::of_float(0.0),
                  Value::of_list({Value::of_bool(true), Value::of_bool(true), Value::of_bool(true), Value::of_bool(false)}),
                  Value::of_bool(causal)},
                 {{"scale", scale}});
  }
  d.extra_outputs = {d.b.item(fwd, 0), d.b.item(bwd, 1), d.b.item(bwd, 2)};
  return d.b.item(bwd, 0);
}

// SDPA's math path on a 16-bit model without autocast, fused by the
// attention rules as a float32 efficient pair on upcasts of 16-bit q, k, v
// (q and k scaled by constants, as the math path scales each by √scale) and
// of a 16-bit dO, cast back; a mask of sdpa_mask's in float32
// or none. The root: the cast gradient of the 16-bit q, then O, dK and dV.
NodeId upcast_training_pair(Draw& d) {
  const DType t = d.pick(std::vector<DType>{DType::BFloat16, DType::Float16});
  const SymExpr b = d.size(), h = d.size(), L = d.size(2), E = head_dim(d);
  const auto up = [&](NodeId x) {
    return d.b.op("prims.convert_element_type.default", {B::ref(x), Value::of_dtype(DType::Float32)});
  };
  const auto down = [&](NodeId x) { return d.b.op("prims.convert_element_type.default", {B::ref(x), Value::of_dtype(t)}); };
  const auto times = [&](NodeId x, double f) {
    return f == 1.0 ? x : d.b.op("aten.mul.Scalar", {B::ref(x), Value::of_float(f)});
  };
  const NodeId q16 = d.b.input({b, h, L, E}, t), k16 = d.b.input({b, h, L, E}, t), v16 = d.b.input({b, h, L, E}, t);
  const NodeId d_out = up(d.b.input({b, h, L, E}, t));
  // Both scaled, by different factors: an instance is only rewritten where
  // the rule moves each factor to the right gradient (an unscaled operand is
  // v's and dO's path).
  const double fq = 0.5, fk = 0.25;
  const NodeId q = times(up(q16), fq), k = times(up(k16), fk), v = up(v16);
  Value mask = Value::none();
  bool causal = false;
  if (d.integer(0, 2) == 0)
    mask = B::ref(d.b.op("aten.expand.default", {B::ref(sdpa_mask(d, b, L, DType::Float32, true)), B::sizes({b, h, L, L})}));
  else
    causal = d.coin();
  const Value scale = d.coin() ? Value::of_float(d.number()) : Value::none();
  std::vector<std::pair<std::string, Value>> kw;
  if (!scale.is_none()) kw.emplace_back("scale", scale);
  const NodeId fwd = d.b.op(kEfficient, {B::ref(q), B::ref(k), B::ref(v), mask, Value::of_bool(true), Value::of_float(0.0),
                                         Value::of_bool(causal)},
                            kw);
  const NodeId bwd = d.b.op("aten._scaled_dot_product_efficient_attention_backward.default",
                            {B::ref(d_out), B::ref(q), B::ref(k), B::ref(v), mask, B::ref(d.b.item(fwd, 0)),
                             B::ref(d.b.item(fwd, 1)), B::ref(d.b.item(fwd, 2)), B::ref(d.b.item(fwd, 3)),
                             Value::of_float(0.0),
                             Value::of_list({Value::of_bool(true), Value::of_bool(true), Value::of_bool(true),
                                             Value::of_bool(false)}),
                             Value::of_bool(causal)},
                            kw);
  d.extra_outputs = {down(d.b.item(fwd, 0)), down(times(d.b.item(bwd, 1), fk)), down(d.b.item(bwd, 2))};
  return down(times(d.b.item(bwd, 0), fq));
}

// SDPA itself on 16-bit q, k, v, with a mask of sdpa_mask's or none.
NodeId sdpa_itself(Draw& d) {
  const DType t = d.pick(std::vector<DType>{DType::BFloat16, DType::Float16});
  const SymExpr b = d.size(), h = d.size(), L = d.size(2), E = head_dim(d);
  const NodeId q = d.b.input({b, h, L, E}, t), k = d.b.input({b, h, L, E}, t), v = d.b.input({b, h, L, E}, t);
  const Value m = d.coin() ? B::ref(sdpa_mask(d, b, L, t, true)) : Value::none();
  return d.b.op("aten.scaled_dot_product_attention.default",
                {B::ref(q), B::ref(k), B::ref(v), m, Value::of_float(0.0), Value::of_bool(m.is_none() && d.coin())},
                {{"scale", Value::of_float(d.number())}});
}

}  // namespace

std::vector<RuleCase> sdpa_call_cases() {
  RuleCase fwd{"sdpa-call-mask", 4, 4, false, false, [](Draw& d, size_t) { return forward_call(d); }};
  RuleCase kernel{"sdpa-call-kernel", 4, 4, false, false, [](Draw& d, size_t) { return sdpa_itself(d); }};
  RuleCase pair{"sdpa-call-training", 4, 4, false, false, [](Draw& d, size_t) { return training_pair(d); }};
  RuleCase upcast{"sdpa-call-training-16-bit", 4, 4, false, false,
                  [](Draw& d, size_t) { return upcast_training_pair(d); }};
  upcast.rewritten_outputs = 4;  // O, dQ, dK and dV all

  return {fwd, kernel, pair, upcast};
}

}  // namespace sator::check
