// Instances of the mask-algebra rules' left-hand sides (rules/mask_algebra.cpp).
#include "check/rule_cases.h"
#include "rules/mask_algebra.h"

namespace sator::check {

namespace {

using B = GraphBuilder;

// `shape` with some dims written 1 (a tensor that broadcasts into it).
std::vector<SymExpr> broadcastable(Draw& d, std::vector<SymExpr> shape) {
  for (SymExpr& e : shape)
    if (d.coin()) e = 1;
  return shape;
}

// A 0-d constant on the CPU (the graph's device, which the rule's 0 takes).
NodeId constant(Draw& d, double v, DType t) {
  return d.b.op("aten.full.default", {B::sizes({}), Value::of_float(v)},
                {{"dtype", Value::of_dtype(t)}, {"device", Value::of_text(Value::Kind::Device, "cpu")}});
}

// convert(convert(x, w), t) for x of type t and a wider w.
NodeId roundtrip(Draw& d, size_t rank) {
  const DType t = d.pick(std::vector<DType>{DType::BFloat16, DType::Float16, DType::Float32});
  const DType w = t == DType::Float32 ? DType::Float64 : d.pick(std::vector<DType>{DType::Float32, DType::Float64});
  const NodeId x = d.b.input(d.shape(rank), t);
  const NodeId up = d.b.op("prims.convert_element_type.default", {B::ref(x), Value::of_dtype(w)});
  return d.b.op("prims.convert_element_type.default", {B::ref(up), Value::of_dtype(t)});
}

// where(c, x, K) or where(c, K, x): c a random boolean that broadcasts
// with x (either may be the larger), K a masking constant of x's dtype.
NodeId masked_fill(Draw& d, size_t rank) {
  const DType t = d.pick(std::vector<DType>{DType::BFloat16, DType::Float32});
  const std::vector<SymExpr> full = d.shape(rank);
  const bool x_full = d.coin();
  const NodeId x = d.b.input(x_full ? full : broadcastable(d, full), t);
  const NodeId c = d.b.op("aten.gt.Scalar", {B::ref(d.b.input(x_full ? broadcastable(d, full) : full)), Value::of_float(0.0)});
  const double k = t == DType::BFloat16 ? -3.3895313892515355e38 : d.pick(std::vector<double>{-3.4028234663852886e38, -2.535301200456459e30});  // -2^101
  const NodeId K = constant(d, k, t);
  if (d.coin()) return d.b.op("aten.where.self", {B::ref(c), B::ref(x), B::ref(K)});
  return d.b.op("aten.where.self", {B::ref(c), B::ref(K), B::ref(x)});
}

// (x + y) + z with y + z broadcasting into x from fewer elements; the
// dtypes mixed (16-bit scores, a float32 bias) as under autocast.
NodeId small_operands(Draw& d, size_t rank) {
  const std::vector<SymExpr> xs = d.shape(rank, 2);
  const auto shared = static_cast<size_t>(d.integer(0, static_cast<int64_t>(rank) - 1));  // a dim both broadcast
  auto smaller = [&] {
    std::vector<SymExpr> s = broadcastable(d, xs);
    s[shared] = 1;
    // Sometimes fewer leading dims.
    const auto drop = static_cast<size_t>(d.integer(0, static_cast<int64_t>(rank) - 1));
    return std::vector<SymExpr>(s.begin() + static_cast<std::ptrdiff_t>(d.coin() ? drop : 0), s.end());
  };
  const NodeId x = d.b.input(xs, d.coin() ? DType::BFloat16 : DType::Float32);
  const NodeId y = d.b.input(smaller(), d.coin() ? DType::BFloat16 : DType::Float32);
  const NodeId z = d.b.input(smaller(), DType::Float32);
  const NodeId xy = d.b.op("aten.add.Tensor", {B::ref(x), B::ref(y)});
  return d.b.op("aten.add.Tensor", {B::ref(xy), B::ref(z)});
}

// m + x, m broadcasting into x from fewer elements (a mask or a bias added
// before the scores), of either dtype.
NodeId bias_first(Draw& d, size_t rank) {
  const std::vector<SymExpr> xs = d.shape(rank, 2);
  std::vector<SymExpr> ms = xs;
  ms[static_cast<size_t>(d.integer(0, static_cast<int64_t>(rank) - 1))] = 1;
  for (SymExpr& e : ms)
    if (d.coin()) e = 1;
  const auto drop = static_cast<size_t>(d.integer(0, static_cast<int64_t>(rank) - 1));
  ms.erase(ms.begin(), ms.begin() + static_cast<std::ptrdiff_t>(d.coin() ? drop : 0));
  const NodeId m = d.b.input(ms, d.coin() ? DType::BFloat16 : DType::Float32);
  const NodeId x = d.b.input(xs, d.coin() ? DType::BFloat16 : DType::Float32);
  return d.b.op("aten.add.Tensor", {B::ref(m), B::ref(x)});
}

// masked_fill(y, c, K)'s softmax backward: where(c, 0, dS) (or where(c, dS, 0)
// with the kept entries in c), dS = fma(-P, sum(dP·P), dP·P), P the softmax
// of where(c, K, y), c the causal triangle's masked entries (j > i), or the
// kept ones; dS in float32 cast to 16 bits a third of the time (autocast).
NodeId masked_softmax_gradient(Draw& d, size_t rank) {
  std::vector<SymExpr> shape = d.shape(rank, 2);
  const SymExpr L = shape[rank - 1];
  shape[rank - 2] = L;  // square scores: the causal triangle
  auto iota = [&] {
    return d.b.op("prims.iota.default", {B::sizes({L}).list[0]},
                  {{"start", Value::of_int(0)}, {"step", Value::of_int(1)}, {"dtype", Value::of_dtype(DType::Int64)},
                   {"device", Value::of_text(Value::Kind::Device, "cpu")}, {"requires_grad", Value::of_bool(false)}});
  };
  const NodeId col = d.b.op("aten.unsqueeze.default", {B::ref(iota()), Value::of_int(0)});
  const NodeId row = d.b.op("aten.unsqueeze.default", {B::ref(iota()), Value::of_int(1)});
  const bool masked_when_true = d.coin();
  // masked: j > i, as gt or as not(j <= i); kept: j <= i.
  NodeId c;
  if (!masked_when_true) c = d.b.op("aten.le.Tensor", {B::ref(col), B::ref(row)});
  else if (d.coin()) c = d.b.op("aten.gt.Tensor", {B::ref(col), B::ref(row)});
  else c = d.b.op("aten.bitwise_not.default", {B::ref(d.b.op("aten.le.Tensor", {B::ref(col), B::ref(row)}))});
  const NodeId y = d.b.input(shape);
  const NodeId K = constant(d, d.pick(std::vector<double>{-3.4028234663852886e38, -2.535301200456459e30}), DType::Float32);
  const NodeId x = masked_when_true ? d.b.op("aten.where.self", {B::ref(c), B::ref(K), B::ref(y)})
                                    : d.b.op("aten.where.self", {B::ref(c), B::ref(y), B::ref(K)});
  const NodeId p = d.b.op("aten._softmax.default", {B::ref(x), Value::of_int(-1), Value::of_bool(false)});
  const NodeId dp = d.b.input(shape);
  const NodeId dpp = d.b.op("aten.mul.Tensor", {B::ref(dp), B::ref(p)});
  const NodeId sum = d.b.op("aten.sum.dim_IntList", {B::ref(dpp), B::ints({-1}), Value::of_bool(true)});
  NodeId ds = d.b.op("prims.fma.default", {B::ref(d.b.op("aten.neg.default", {B::ref(p)})), B::ref(sum), B::ref(dpp)});
  const bool half = d.integer(0, 2) == 0;
  if (half) ds = d.b.op("prims.convert_element_type.default", {B::ref(ds), Value::of_dtype(DType::BFloat16)});
  const NodeId zero = constant(d, 0.0, half ? DType::BFloat16 : DType::Float32);
  return masked_when_true ? d.b.op("aten.where.self", {B::ref(c), B::ref(zero), B::ref(ds)})
                          : d.b.op("aten.where.self", {B::ref(c), B::ref(ds), B::ref(zero)});
}

}  // namespace

std::vector<RuleCase> mask_algebra_cases() {
  return {
      {"convert-roundtrip", 0, 6, false, false, roundtrip},
      {"masked-fill-as-add", 1, 6, false, false, masked_fill},
      {"add-small-operands-first", 1, 6, false, false, small_operands},
      {"add-full-operand-first", 1, 6, false, false, bias_first},
      {"masked-softmax-gradient", 2, 5, false, false, masked_softmax_gradient},
  };
}

}  // namespace sator::check
