// Instances of the recomposition and attention rules' left-hand sides
// (rules/attention_rules.cpp), and the shipped rule set.
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "check/cases_generated.h"
#include "check/rule_cases.h"
#include "rules/attention_rules.h"
#include "rules/attention_train_rules.h"
#include "rules/key_gradient_sum.h"
#include "rules/layout_rules.h"
#include "rules/mask_algebra.h"
#include "rules/mixed_precision.h"
#include "rules/shipped_rules.h"

namespace sator::check {

namespace {

using B = GraphBuilder;

std::vector<SymExpr> cat(std::vector<SymExpr> a, const std::vector<SymExpr>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<int64_t> last_two_swapped(size_t rank) {
  std::vector<int64_t> p;
  for (size_t i = 0; i < rank; ++i) p.push_back(static_cast<int64_t>(i));
  std::swap(p[rank - 1], p[rank - 2]);
  return p;
}

// kᵀ in the attention rules' canonical form: a permute of the last two dims
// (a transpose.int meets it through transpose-as-permute, checked on its own).
NodeId transposed(Draw& d, NodeId k, size_t rank) {
  return d.b.op("aten.permute.default", {B::ref(k), B::ints(last_two_swapped(rank))});
}

// A mask over an L x S score matrix built from iotas, one of:
// `where(col - row >= t, -inf, 0)` (the causal triangle when t = 1 and
// L = S); `where((col - row < t) & (col - row > -w) [& row >= 0], 0, -inf)`,
// a sliding window that is the triangle when w >= L (a window the mask
// reader must not drop when w < L; drawn for L = S and t >= 1 only, so that
// it keeps the diagonal); or `where(row >= 0, 0, -inf)`, which adds 0
// everywhere. Without `window`, no window: the training cases with dropout
// leave it out, because the check's tree-cost extraction, which counts a
// shared mask once per use, then keeps part of the backward decomposed
// beside the fused kernel — two sources of dropout draws, which the
// optimizer refuses (rules::mixes_dropout_draws) and this check would
// report as a wrong value.
NodeId iota_mask(Draw& d, const SymExpr& L, const SymExpr& S, int64_t t, bool window = true) {
  auto iota = [&](const SymExpr& n) {
    return d.b.op("prims.iota.default", {B::sizes({n}).list[0]},
                  {{"start", Value::of_int(0)}, {"step", Value::of_int(1)}, {"dtype", Value::of_dtype(DType::Int64)},
                   {"device", Value::of_text(Value::Kind::Device, "cpu")}, {"requires_grad", Value::of_bool(false)}});
  };
  const NodeId col = d.b.op("aten.unsqueeze.default", {B::ref(iota(S)), Value::of_int(-2)});
  const NodeId row = d.b.op("aten.unsqueeze.default", {B::ref(iota(L)), Value::of_int(-1)});
  const NodeId diff = d.b.op("aten.sub.Tensor", {B::ref(col), B::ref(row)});
  const NodeId ninf = d.b.op("aten.full.default", {B::sizes({L, S}), Value::of_float(-std::numeric_limits<double>::infinity())},
                             {{"dtype", Value::of_dtype(DType::Float32)}});
  const NodeId zero = d.b.op("aten.scalar_tensor.default", {Value::of_float(0.0)}, {{"dtype", Value::of_dtype(DType::Float32)}});
  // The window keeps the diagonal only on a square matrix with t >= 1: other
  // masks could mask a row whole.
  const int64_t form = d.integer(0, window && L == S && t >= 1 ? 3 : 2);
  if (form <= 1) {
    const NodeId cond = d.b.op("aten.ge.Scalar", {B::ref(diff), Value::of_int(t)});
    return d.b.op("aten.where.self", {B::ref(cond), B::ref(ninf), B::ref(zero)});
  }
  const NodeId row_ok = d.b.op("aten.ge.Scalar", {B::ref(row), Value::of_int(0)});
  if (form == 2) {
    const NodeId all = d.b.op("aten.expand.default", {B::ref(row_ok), B::sizes({L, S})});
    return d.b.op("aten.where.self", {B::ref(all), B::ref(zero), B::ref(ninf)});
  }
  // The window: below the diagonal by less than w, with w from 1 up to
  // past L (the row count of concrete sizes; a few fixed widths otherwise).
  const std::optional<int64_t> rows = L.as_constant();
  const int64_t w = rows ? d.integer(1, *rows + 2) : d.pick(std::vector<int64_t>{1, 2, 20});
  NodeId keep = d.b.op("aten.lt.Scalar", {B::ref(diff), Value::of_int(t)});
  keep = d.b.op("aten.bitwise_and.Tensor",
                {B::ref(keep), B::ref(d.b.op("aten.gt.Scalar", {B::ref(diff), Value::of_int(-w)}))});
  if (d.coin()) keep = d.b.op("aten.bitwise_and.Tensor", {B::ref(row_ok), B::ref(keep)});
  return d.b.op("aten.where.self", {B::ref(keep), B::ref(zero), B::ref(ninf)});
}

// matmul(_softmax(matmul(q, kᵀ) · c [+ mask], -1) [dropped out], v), q and k
// of rank `rank` (batch dims rank - 2).
NodeId attention(Draw& d, size_t rank, bool dropout) {
  const std::vector<SymExpr> batch = d.shape(rank - 2);
  const int mask_kind = static_cast<int>(d.integer(0, 3));  // none, [L,S] input, batch+[L,S] input, iota
  const SymExpr L = d.size(), E = d.size(), Ev = d.size();
  const SymExpr S = mask_kind == 3 && d.coin() ? L : d.size();
  const NodeId q = d.b.input(cat(batch, {L, E})), v = d.b.input(cat(batch, {S, Ev}));
  NodeId kt;
  if (rank == 4 && d.integer(0, 2) == 2) {
    // kᵀ as one permute of some x (k = permute(x, A) composed with the
    // transpose, as a greedy rewriter leaves it): x holds k's dims permuted.
    const std::vector<SymExpr> k_shape = cat(batch, {S, E});
    const std::vector<int64_t> a = d.permutation(4);
    std::vector<SymExpr> x_shape(4);
    for (size_t i = 0; i < 4; ++i) x_shape[static_cast<size_t>(a[i])] = k_shape[i];
    const NodeId x = d.b.input(x_shape);
    kt = d.b.op("aten.permute.default", {B::ref(x), B::ints({a[0], a[1], a[3], a[2]})});
  } else {
    kt = transposed(d, d.b.input(cat(batch, {S, E})), rank);
  }
  const NodeId qk = d.b.op("aten.matmul.default", {B::ref(q), B::ref(kt)});
  // The scale, in the canonical form (a division or a 0-d constant tensor
  // meets it through the scale identities of rules/matmul.rules): a number,
  // none, or a 0-d tensor computed at run time.
  NodeId s = qk;
  if (const int64_t kind = d.integer(0, 3); kind <= 1)
    s = d.b.op("aten.mul.Tensor", {B::ref(qk), Value::of_float(d.number())});
  else if (kind == 3)
    s = d.b.op("aten.mul.Tensor", {B::ref(qk), B::ref(d.b.input({}))});
  bool rows_may_be_masked_whole = false;
  if (mask_kind != 0) {
    const int64_t shift = d.integer(0, 2);
    rows_may_be_masked_whole = mask_kind == 3 && shift == 0;
    const NodeId m = mask_kind == 1   ? d.b.input({L, S})
                     : mask_kind == 2 ? d.b.input(cat(batch, {L, S}))
                                      : iota_mask(d, L, S, shift);
    s = d.b.op("aten.add.Tensor", {B::ref(s), B::ref(m)});
  }
  // SDPA computes _safe_softmax: where a row of scores may be -inf whole,
  // only that form equals it (softmax gives NaN there, SDPA 0).
  NodeId p = rows_may_be_masked_whole || d.coin()
                 ? d.b.op("aten._safe_softmax.default", {B::ref(s), Value::of_int(-1)})
                 : d.b.op("aten._softmax.default", {B::ref(s), Value::of_int(-1), Value::of_bool(false)});
  if (dropout) {
    const double drop = d.pick(std::vector<double>{0.1, 0.25, 0.5});
    const NodeId r = d.b.op("aten.rand.default", {B::sizes(d.b.type(s).shape)}, {{"dtype", Value::of_dtype(DType::Float32)}});
    const NodeId keep = d.b.op("aten.gt.Scalar", {B::ref(r), Value::of_float(drop)});
    const NodeId kept = d.b.op("aten.mul.Tensor", {B::ref(keep), B::ref(p)});
    p = d.b.op("aten.mul.Tensor", {B::ref(kept), Value::of_float(1.0 / (1.0 - drop))});
  }
  return d.b.op("aten.matmul.default", {B::ref(p), B::ref(v)});
}

// Attention's forward and backward as AOTAutograd writes a joint graph:
// O = matmul(P, v), P = _softmax(matmul(q, kᵀ) · c [+ mask], -1); given dO,
// dS = fma(-P, sum(dP·P, -1), dP·P) with dP = matmul(dO, vᵀ), then dQ =
// matmul(dS·c, k) (the root), dK = matmul((dS·c)ᵀ, q) or its transpose form
// matmul(qᵀ, dS·c), dV = matmul(Pᵀ, dO); O, dK and dV are outputs too.
// With a 16-bit `t` (no dropout): q, k, v and dO of type t, a 16-bit
// softmax P16, and the backward in float32 on the upcasts of P16 and dP,
// cast back to t (what AOTAutograd writes for 16-bit weights).
NodeId attention_training(Draw& d, bool dropout, DType t = DType::Float32) {
  const bool half = t != DType::Float32;
  const std::vector<SymExpr> batch = d.shape(2);
  const int mask_kind = static_cast<int>(d.integer(0, 2));  // none, [L,S] input, causal iota
  const SymExpr L = d.size(), E = d.size(), Ev = d.size();
  const SymExpr S = mask_kind == 2 ? L : d.size();
  const NodeId q = d.b.input(cat(batch, {L, E}), t), k = d.b.input(cat(batch, {S, E}), t);
  const NodeId v = d.b.input(cat(batch, {S, Ev}), t);
  const NodeId qk = d.b.op("aten.matmul.default", {B::ref(q), B::ref(transposed(d, k, 4))});
  // The scale in the canonical form: a number, or a 0-d tensor computed at
  // run time, in [1, 3) (a scale near 0 would only test rounding).
  const char* scale_op = "aten.mul.Tensor";
  Value scale = Value::of_float(d.number());
  if (!half && d.coin())
    scale = B::ref(d.b.op("aten.add.Tensor", {B::ref(d.b.input({})), Value::of_float(2.0)}));
  NodeId s = d.b.op(scale_op, {B::ref(qk), scale});
  if (mask_kind != 0) {
    NodeId m = mask_kind == 1 ? d.b.input({L, S}, t) : iota_mask(d, L, S, 1, !dropout);
    if (half && mask_kind == 2) m = d.b.op("prims.convert_element_type.default", {B::ref(m), Value::of_dtype(t)});
    s = d.b.op("aten.add.Tensor", {B::ref(s), B::ref(m)});
  }
  const NodeId p = d.b.op("aten._softmax.default", {B::ref(s), Value::of_int(-1), Value::of_bool(false)});
  // With dropout: P' = P·keep/(1-p) multiplies v; the backward masks dP the same way.
  NodeId pv = p, keep = 0;
  double drop = 0;
  if (dropout) {
    drop = d.pick(std::vector<double>{0.1, 0.25, 0.5});
    const NodeId r = d.b.op("aten.rand.default", {B::sizes(d.b.type(s).shape)}, {{"dtype", Value::of_dtype(DType::Float32)}});
    keep = d.b.op("aten.gt.Scalar", {B::ref(r), Value::of_float(drop)});
    pv = d.b.op("aten.mul.Tensor", {B::ref(d.b.op("aten.mul.Tensor", {B::ref(keep), B::ref(p)})), Value::of_float(1.0 / (1.0 - drop))});
  }
  const NodeId o = d.b.op("aten.matmul.default", {B::ref(pv), B::ref(v)});
  const NodeId d_out = d.b.input(cat(batch, {L, Ev}), t);
  NodeId dp = d.b.op("aten.matmul.default", {B::ref(d_out), B::ref(transposed(d, v, 4))});
  if (dropout) {
    // native_dropout_backward: grad · (keep as grad's dtype) · 1/(1-p).
    const NodeId mask = d.b.op("aten.mul.Tensor", {B::ref(d.b.op("prims.convert_element_type.default",
                                                                  {B::ref(keep), Value::of_dtype(t)})),
                                                   Value::of_float(1.0 / (1.0 - drop))});
    dp = d.b.op("aten.mul.Tensor", {B::ref(dp), B::ref(mask)});
  }
  auto upcast = [&](NodeId x) {
    return half ? d.b.op("prims.convert_element_type.default", {B::ref(x), Value::of_dtype(DType::Float32)}) : x;
  };
  const NodeId p32 = upcast(p), dp32 = upcast(dp);
  const NodeId dpp = d.b.op("aten.mul.Tensor", {B::ref(dp32), B::ref(p32)});
  const NodeId sum = d.b.op("aten.sum.dim_IntList", {B::ref(dpp), B::ints({-1}), Value::of_bool(true)});
  const NodeId neg = d.b.op("aten.neg.default", {B::ref(p32)});
  NodeId grad = d.b.op("prims.fma.default", {B::ref(neg), B::ref(sum), B::ref(dpp)});
  if (half) grad = d.b.op("prims.convert_element_type.default", {B::ref(grad), Value::of_dtype(t)});
  const NodeId ds = d.b.op(scale_op, {B::ref(grad), scale});
  const NodeId dq = d.b.op("aten.matmul.default", {B::ref(ds), B::ref(k)});
  // The backward's transposes as permutes (what the rule writes; transpose.int
  // meets them through the layout rules, not checked here).
  auto tr = [&](NodeId x) { return d.b.op("aten.permute.default", {B::ref(x), B::ints(last_two_swapped(4))}); };
  const NodeId dk = d.coin() ? d.b.op("aten.matmul.default", {B::ref(tr(ds)), B::ref(q)})
                             : d.b.op("aten.matmul.default", {B::ref(tr(q)), B::ref(ds)});
  const NodeId dv = d.b.op("aten.matmul.default", {B::ref(tr(pv)), B::ref(d_out)});
  d.extra_outputs = {o, dk, dv};
  return dq;
}

// sum(layout(dK [+ T]), D), dK the key gradient of the efficient kernels'
// backward of their own forward, D covering the keys: as the gradient of a key
// projection's bias is summed (viewed [B·S, H·E], summed over dim 0), or a
// permute of dK [+ T] summed over dims that include the keys' axis; with
// grouped-query heads dK is first summed over each group's repeats.
NodeId key_gradient_sum(Draw& d) {
  // Grouped-query attention (a quarter of the time): H = Hkv·rep heads, dK
  // summed over each group's rep heads as repeat_kv's backward writes it.
  const bool grouped = d.integer(0, 3) == 0;
  const SymExpr Hkv = d.size(), rep = grouped ? d.size() : SymExpr(1);
  const SymExpr B0 = d.size(), H = Hkv * rep, L = d.size(), S = d.size(), E = d.size(), Ev = d.size();
  const NodeId q = d.b.input({B0, H, L, E}), k = d.b.input({B0, H, S, E}), v = d.b.input({B0, H, S, Ev});
  // The bias: none, a tensor, or a mask built from iotas (with a device,
  // which the rule needs to write zeros), expanded as the training rule passes
  // it. No row is masked whole (t >= 1 keeps the first key): a row of -inf is
  // NaN in the kernels, and the rule holds where their outputs are finite.
  Value bias = Value::none();
  if (const int64_t kind = d.integer(0, 2); kind == 1) {
    bias = B::ref(d.b.input({B0, H, L, S}));
  } else if (kind == 2) {
    const NodeId m = iota_mask(d, L, S, d.integer(1, 2));
    bias = B::ref(d.b.op("aten.expand.default", {B::ref(m), B::sizes({B0, H, L, S})}));
  }
  const double drop = d.coin() ? 0.0 : d.pick(std::vector<double>{0.1, 0.25});
  const bool causal = bias.is_none() && d.coin();
  const Value scale = Value::of_float(d.number());
  const NodeId fwd = d.b.op("aten._scaled_dot_product_efficient_attention.default",
                            {B::ref(q), B::ref(k), B::ref(v), bias, Value::of_bool(true), Value::of_float(drop),
                             Value::of_bool(causal)},
                            {{"scale", scale}});
  const NodeId d_out = d.b.input({B0, H, L, Ev});
  const NodeId bwd = d.b.op("aten._scaled_dot_product_efficient_attention_backward.default",
                            {B::ref(d_out), B::ref(q), B::ref(k), B::ref(v), bias, B::ref(d.b.item(fwd, 0)),
                             B::ref(d.b.item(fwd, 1)), B::ref(d.b.item(fwd, 2)), B::ref(d.b.item(fwd, 3)),
                             Value::of_float(drop),
                             Value::of_list({Value::of_bool(true), Value::of_bool(true), Value::of_bool(true), Value::of_bool(false)}),
                             Value::of_bool(causal)},
                            {{"scale", scale}});
  NodeId x = d.b.item(bwd, 1);
  // dK itself an output too: the sum is zero against dK's size (its float64
  // rounding is what the left side computes), which sets the comparison's scale.
  d.extra_outputs = {x, d.b.item(bwd, 0)};
  SymExpr heads = H;
  // A tangent of its own added (a key cache output's gradient), before the
  // grouped heads' sum or after it.
  const int tangent = static_cast<int>(d.integer(0, 3));  // none, after, after, before
  auto add_tangent = [&](NodeId y, const SymExpr& h) {
    const NodeId t = d.b.input({B0, h, S, E});
    return d.coin() ? d.b.op("aten.add.Tensor", {B::ref(t), B::ref(y)}) : d.b.op("aten.add.Tensor", {B::ref(y), B::ref(t)});
  };
  if (tangent == 3) x = add_tangent(x, H);
  if (grouped) {  // view [B, Hkv, rep, S, E], sum over rep (keepdim), squeeze it
    // (the squeeze written as the view squeeze-as-view makes it: this check
    // applies the one rule)
    const NodeId split = d.b.op("aten.view.default", {B::ref(x), B::sizes({B0, Hkv, rep, S, E})});
    const NodeId summed = d.b.op("aten.sum.dim_IntList", {B::ref(split), B::ints({2}), Value::of_bool(true)});
    x = d.b.op("aten.view.default", {B::ref(summed), B::sizes({B0, Hkv, S, E})});
    heads = Hkv;
  }
  if (tangent == 1 || tangent == 2) x = add_tangent(x, heads);
  // Mostly over the keys; sometimes not (where the rule must not fire: a
  // rule that ignored the keys' axis would be caught there).
  const Value keepdim = Value::of_bool(d.coin());
  const bool keys = d.integer(0, 3) != 0;
  if (d.coin()) {
    const NodeId p = d.b.op("aten.permute.default", {B::ref(x), B::ints({0, 2, 1, 3})});
    const NodeId flat = d.b.op("aten.view.default", {B::ref(p), B::sizes({B0 * S, heads * E})});
    return d.b.op("aten.sum.dim_IntList", {B::ref(flat), B::ints({keys ? 0 : 1}), keepdim});
  }
  const std::vector<int64_t> perm = d.permutation(4);
  const NodeId p = d.b.op("aten.permute.default", {B::ref(x), B::ints(perm)});
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < 4; ++i)
    if (perm[static_cast<size_t>(i)] == 2 ? keys : d.coin()) dims.push_back(d.maybe_negative(i, 4));
  if (dims.empty()) dims.push_back(perm[0] == 2 ? 1 : 0);
  return d.b.op("aten.sum.dim_IntList", {B::ref(p), B::ints(dims), keepdim});
}

// A 16-bit tensor's softmax computed in float32.
NodeId upcast_softmax(Draw& d, size_t rank, DType t) {
  const NodeId x = d.b.input(d.shape(rank), t);
  const NodeId up = d.b.op("prims.convert_element_type.default", {B::ref(x), Value::of_dtype(DType::Float32)});
  const int64_t dim = d.maybe_negative(d.integer(0, static_cast<int64_t>(rank) - 1), rank);
  return d.b.op("aten._softmax.default", {B::ref(up), Value::of_int(dim), Value::of_bool(false)});
}

// view(addmm(b, view(x, [N, In]), permute(W, [1, 0])), P + [Out]) or its mm form.
NodeId linear(Draw& d, size_t rank, bool bias) {
  const std::vector<SymExpr> lead = d.shape(rank - 1);
  const SymExpr in = d.size(), out = d.size();
  const NodeId x = d.b.input(cat(lead, {in})), w = d.b.input({out, in});
  SymExpr n = 1;
  for (const SymExpr& e : lead) n = n * e;
  const NodeId flat = d.b.op("aten.view.default", {B::ref(x), B::sizes({n, in})});
  const NodeId wt = d.b.op("aten.permute.default", {B::ref(w), B::ints({1, 0})});
  const NodeId prod = bias ? d.b.op("aten.addmm.default", {B::ref(d.b.input({out})), B::ref(flat), B::ref(wt)})
                           : d.b.op("aten.mm.default", {B::ref(flat), B::ref(wt)});
  return d.b.op("aten.view.default", {B::ref(prod), B::sizes(cat(lead, {out}))});
}

// where(all(x == -inf, d, keep), 0, _softmax(x, d)) as SDPA's math path
// writes it, on scores where some rows are -inf whole (the case the guard is
// for) and the others finite.
NodeId safe_softmax_written_out(Draw& d, size_t rank) {
  const std::vector<SymExpr> shape = d.shape(rank);
  const int64_t dim = d.integer(0, static_cast<int64_t>(rank) - 1);
  std::vector<SymExpr> rows = shape;
  rows[static_cast<size_t>(dim)] = 1;
  auto scalar = [&](double v) {
    return d.b.op("aten.full.default", {B::sizes({}), Value::of_float(v)}, {{"dtype", Value::of_dtype(DType::Float32)}});
  };
  const NodeId masked_row = d.b.op("aten.gt.Scalar", {B::ref(d.b.input(rows)), Value::of_float(0.5)});
  const NodeId row_bias = d.b.op("aten.where.self", {B::ref(masked_row), B::ref(scalar(-INFINITY)), B::ref(scalar(0.0))});
  const NodeId x = d.b.op("aten.add.Tensor", {B::ref(d.b.input(shape)), B::ref(row_bias)});
  const int64_t written_dim = d.maybe_negative(dim, rank);
  const NodeId sm = d.b.op("aten._softmax.default", {B::ref(x), Value::of_int(written_dim), Value::of_bool(false)});
  const NodeId finite = d.b.op("aten.logical_not.default", {B::ref(d.b.op("aten.eq.Scalar", {B::ref(x), Value::of_float(-INFINITY)}))});
  const NodeId any = d.b.op("aten.any.dim", {B::ref(finite), Value::of_int(written_dim), Value::of_bool(true)});
  const NodeId all_masked = d.b.op("aten.logical_not.default", {B::ref(any)});
  const NodeId zero = d.b.op("aten.full.default", {B::sizes(shape), Value::of_int(0)},
                             {{"dtype", Value::of_dtype(DType::Float32)}, {"layout", Value::of_text(Value::Kind::Enum, "torch.strided")}});
  return d.b.op("aten.where.self", {B::ref(all_masked), B::ref(zero), B::ref(sm)});
}

// x * c or x / c for a 0-d tensor c that holds a number: scalar_tensor(v)
// or full([], v).
NodeId scale_by_0d_constant(Draw& d, size_t rank, const char* op) {
  const NodeId x = d.b.input(d.shape(rank));
  // A number, or one float32 does not hold exactly (1/sqrt(96)).
  const Value v = Value::of_float(d.coin() ? d.number() : 1.0 / std::sqrt(96.0));
  const NodeId c = d.coin() ? d.b.op("aten.scalar_tensor.default", {v}, {{"dtype", Value::of_dtype(DType::Float32)}})
                            : d.b.op("aten.full.default", {B::sizes({}), v}, {{"dtype", Value::of_dtype(DType::Float32)}});
  return d.b.op(op, {B::ref(x), B::ref(c)});
}

NodeId scalar_out_of_matmul(Draw& d, size_t rank, const char* op) {
  // x = P + [L, E] scaled by a number, y = P + [E, S] or [E, S] (broadcast).
  const std::vector<SymExpr> batch = d.shape(rank - 2);
  const SymExpr L = d.size(), E = d.size(), S = d.size();
  const NodeId x = d.b.input(cat(batch, {L, E}));
  const NodeId y = d.b.input(d.coin() ? cat(batch, {E, S}) : std::vector<SymExpr>{E, S});
  const NodeId scaled = d.b.op(op, {B::ref(x), Value::of_float(d.number())});
  return d.b.op("aten.matmul.default", {B::ref(scaled), B::ref(y)});
}

}  // namespace

std::vector<RuleCase> recompose_cases() {
  std::vector<RuleCase> cases;
  auto add = [&](const char* name, size_t min_rank, size_t max_rank, Generator g) {
    cases.push_back({name, min_rank, max_rank, false, false, std::move(g)});
  };
  add("bmm-as-matmul", 3, 6, [](Draw& d, size_t r) {
    const std::vector<SymExpr> batch = d.shape(r - 2);
    const SymExpr L = d.size(), E = d.size(), S = d.size();
    SymExpr n = 1;
    for (const SymExpr& e : batch) n = n * e;
    const NodeId a = d.b.input(cat(batch, {L, E})), b = d.b.input(cat(batch, {E, S}));
    const NodeId va = d.b.op("aten.view.default", {B::ref(a), B::sizes({n, L, E})});
    const NodeId vb = d.b.op("aten.view.default", {B::ref(b), B::sizes({n, E, S})});
    const NodeId mm = d.b.op("aten.bmm.default", {B::ref(va), B::ref(vb)});
    return d.b.op("aten.view.default", {B::ref(mm), B::sizes(cat(batch, {L, S}))});
  });
  add("softmax-recompose", 1, 6, [](Draw& d, size_t r) {
    const NodeId x = d.b.input(d.shape(r));
    const int64_t dim = d.maybe_negative(d.integer(0, static_cast<int64_t>(r) - 1), r);
    const NodeId m = d.b.op("aten.amax.default", {B::ref(x), B::ints({dim}), Value::of_bool(true)});
    const NodeId e = d.b.op("aten.exp.default", {B::ref(d.b.op("aten.sub.Tensor", {B::ref(x), B::ref(m)}))});
    const NodeId s = d.b.op("aten.sum.dim_IntList", {B::ref(e), B::ints({dim}), Value::of_bool(true)});
    return d.b.op("aten.div.Tensor", {B::ref(e), B::ref(s)});
  });
  add("scalar-out-of-matmul", 2, 6, [](Draw& d, size_t r) { return scalar_out_of_matmul(d, r, "aten.mul.Tensor"); });
  add("scalar-out-of-matmul-div", 2, 6, [](Draw& d, size_t r) { return scalar_out_of_matmul(d, r, "aten.div.Tensor"); });
  add("softmax-in-16-bit", 1, 6, [](Draw& d, size_t r) {
    const DType t = d.coin() ? DType::BFloat16 : DType::Float16;
    const NodeId sm = upcast_softmax(d, r, t);
    return d.b.op("prims.convert_element_type.default", {B::ref(sm), Value::of_dtype(t)});
  });
  add("softmax-half-to-float", 1, 6, [](Draw& d, size_t r) { return upcast_softmax(d, r, DType::Float16); });
  add("safe-softmax-recompose", 1, 6, safe_softmax_written_out);
  add("scale-by-0d-constant", 0, 6, [](Draw& d, size_t r) { return scale_by_0d_constant(d, r, "aten.mul.Tensor"); });
  add("divide-by-0d-constant", 0, 6, [](Draw& d, size_t r) { return scale_by_0d_constant(d, r, "aten.div.Tensor"); });
  add("linear", 2, 6, [](Draw& d, size_t r) { return linear(d, r, true); });
  add("linear-no-bias", 2, 6, [](Draw& d, size_t r) { return linear(d, r, false); });
  return cases;
}

// convert(_softmax(x16 + m32, d), t16): attention's scores under autocast.
// The mask broadcasts into x (dims 1 at random): 0 where a random input
// exceeds -1.5 (most entries, so no row is masked whole) and a masking value
// elsewhere, or an iota mask (the causal triangle when t = 1 and L = S, a shifted one
// otherwise) whose -inf entries the right side clamps; no row is masked
// whole. The graph gets a device (the clamp's scalar needs one).
static NodeId masked_sum_16(Draw& d, size_t rank, DType& t) {
  t = d.coin() ? DType::BFloat16 : DType::Float16;
  std::vector<SymExpr> shape = d.shape(rank);
  NodeId mask;
  if (rank >= 2 && d.coin()) {
    shape[rank - 1] = shape[rank - 2];  // L = S: the triangle can be causal
    const NodeId m = iota_mask(d, shape[rank - 2], shape[rank - 1], d.integer(1, 2));
    mask = d.b.op("aten.expand.default", {B::ref(m), B::sizes(shape)});
  } else {
    std::vector<SymExpr> ms = shape;
    for (SymExpr& e : ms)
      if (d.coin()) e = 1;
    // A padding-style mask: 0 where kept, a masking value where not.
    auto scalar = [&](double v) {
      return d.b.op("aten.full.default", {B::sizes({}), Value::of_float(v)},
                    {{"dtype", Value::of_dtype(DType::Float32)}, {"device", Value::of_text(Value::Kind::Device, "cpu")}});
    };
    // Finite masking values (as transformers writes them): a row masked whole
    // is then uniform on both sides (with -inf the float32 side is NaN).
    const double masked = d.pick(std::vector<double>{-3.4028234663852886e38, -2.535301200456459e30});
    const NodeId keep = d.b.op("aten.gt.Scalar", {B::ref(d.b.input(ms)), Value::of_float(-1.5)});
    mask = d.b.op("aten.where.self", {B::ref(keep), B::ref(scalar(0.0)), B::ref(scalar(masked))});
  }
  const NodeId x = d.b.input(shape, t);
  return d.b.op("aten.add.Tensor", {B::ref(x), B::ref(mask)});
}

static NodeId softmax_mask_16(Draw& d, size_t rank) {
  DType t;
  const NodeId sum = masked_sum_16(d, rank, t);
  const int64_t dim = d.maybe_negative(static_cast<int64_t>(rank) - 1, rank);
  const NodeId sm = d.b.op("aten._softmax.default", {B::ref(sum), Value::of_int(dim), Value::of_bool(false)});
  return d.b.op("prims.convert_element_type.default", {B::ref(sm), Value::of_dtype(t)});
}

// convert(x16 + m32, t16), the sum drawn as softmax_mask_16 draws it.
static NodeId mask_add_16(Draw& d, size_t rank) {
  DType t;
  const NodeId sum = masked_sum_16(d, rank, t);
  return d.b.op("prims.convert_element_type.default", {B::ref(sum), Value::of_dtype(t)});
}

// convert(SDPA(convert(q16), convert(k16), convert(v16) [, mask]), t16):
// SDPA's math path under autocast, fused as float32 attention on the upcasts.
// The mask, where drawn, is zeros and masking values (the only kind the rule
// takes), broadcast over the batch dims or not; the scale a number or none.
static NodeId attention_on_upcasts(Draw& d, size_t rank) {
  const DType t = d.coin() ? DType::BFloat16 : DType::Float16;
  const std::vector<SymExpr> batch = d.shape(rank - 2);
  const SymExpr L = d.size(), S = d.size(), E = d.size(), Ev = d.size();
  const auto up = [&](std::vector<SymExpr> shape) {
    return d.b.op("prims.convert_element_type.default", {B::ref(d.b.input(shape, t)), Value::of_dtype(DType::Float32)});
  };
  const NodeId q = up(cat(batch, {L, E})), k = up(cat(batch, {S, E})), v = up(cat(batch, {S, Ev}));
  std::vector<Value> args = {B::ref(q), B::ref(k), B::ref(v), Value::none(), Value::of_float(0.0), Value::of_bool(false)};
  if (d.coin()) {
    // 0 where a random input exceeds -1.5 (no row masked whole), else a masking value.
    const auto scalar = [&](double x) {
      return d.b.op("aten.full.default", {B::sizes({}), Value::of_float(x)},
                    {{"dtype", Value::of_dtype(DType::Float32)}, {"device", Value::of_text(Value::Kind::Device, "cpu")}});
    };
    const std::vector<SymExpr> ms = d.coin() ? std::vector<SymExpr>{L, S} : cat(batch, {L, S});
    const NodeId keep = d.b.op("aten.gt.Scalar", {B::ref(d.b.input(ms)), Value::of_float(-1.5)});
    args[3] = B::ref(d.b.op("aten.where.self", {B::ref(keep), B::ref(scalar(0.0)), B::ref(scalar(-3.4028234663852886e38))}));
  }
  std::vector<std::pair<std::string, Value>> kwargs;
  if (d.coin()) kwargs.emplace_back("scale", Value::of_float(d.number()));
  const NodeId o = d.b.op("aten.scaled_dot_product_attention.default", args, kwargs);
  return d.b.op("prims.convert_element_type.default", {B::ref(o), Value::of_dtype(t)});
}

static std::vector<RuleCase> mixed_precision_cases() {
  return {{"softmax-mask-in-16-bit", 1, 6, false, false, softmax_mask_16},
          {"mask-add-in-16-bit", 1, 6, false, false, mask_add_16},
          // The 16-bit kernels round P before P·v; float64 trials see the
          // arithmetic (exact in reals), the zoo the rounding (docs/results/zoo.md).
          {"attention-on-16-bit-upcasts", 3, 5, false, false, attention_on_upcasts}};
}

std::vector<RuleCase> attention_cases() {
  return {
      // The rule fuses 4-D attention ([batch, heads, L, E]), the form SDPA's kernels take.
      {"attention", 4, 4, false, false, [](Draw& d, size_t r) { return attention(d, r, false); }},
      {"attention-dropout", 4, 4, false, true, [](Draw& d, size_t r) { return attention(d, r, true); }},
      {"attention-training", 4, 4, false, false, [](Draw& d, size_t) { return attention_training(d, false); }},
      {"attention-training-dropout", 4, 4, false, true, [](Draw& d, size_t) { return attention_training(d, true); }},
      {"attention-training-16-bit", 4, 4, false, false,
       [](Draw& d, size_t) { return attention_training(d, false, d.coin() ? DType::BFloat16 : DType::Float16); }},
      {"attention-training-16-bit-dropout", 4, 4, false, true,
       [](Draw& d, size_t) { return attention_training(d, true, d.coin() ? DType::BFloat16 : DType::Float16); }},
      // The left side's zero comes out as float64 rounding: up to 5.7e-6 of
      // the comparison's floor (a millionth of the largest output) over
      // 33,000 trials, seeds 1-11 (large scales make P near one-hot and dK
      // small against the rounding of dO·O). 1e-4 of it is 1e-10 of the
      // largest output: a dropped or misplaced term is off by 1e4 or more.
      {"key-gradient-sum-zero", 4, 4, false, true, [](Draw& d, size_t) { return key_gradient_sum(d); }, 1e-4},
  };
}

RuleFactory shipped_rules() { return [](TensorEGraph& t) { return rules::all_shipped_rules(t); }; }

// The fused kernels compute the scores and the softmax in float32 where the
// decomposed block rounds each step to the scores' 16 bits: closer to the
// real-number result, as PyTorch's own SDPA is.
const char* const kFusedAttention =
    "the fused kernel computes the scores and the softmax in float32 where the decomposed block rounds each step "
    "to 16 bits: closer to the real-number result, as PyTorch's own SDPA path is";

std::vector<RuleCase> shipped_cases() {
  std::vector<RuleCase> all = layout_cases();
  for (RuleCase& c : recompose_cases()) all.push_back(std::move(c));
  for (RuleCase& c : attention_cases()) all.push_back(std::move(c));
  for (RuleCase& c : mixed_precision_cases()) all.push_back(std::move(c));
  for (RuleCase& c : mask_algebra_cases()) all.push_back(std::move(c));
  for (RuleCase& c : sdpa_call_cases()) all.push_back(std::move(c));
  // A shipped rule file's rule without a generator of its own is checked on
  // instances drawn from its left-hand side, as a user's rules are.
  std::set<std::string> covered;
  for (const RuleCase& c : all) covered.insert(c.name);
  std::vector<rulelang::RuleFile> files;
  for (const std::string& name : rulelang::shipped_rule_file_names()) files.push_back(rulelang::shipped_rule_file(name));
  for (RuleCase& c : generated_cases(files))
    if (!covered.count(c.name)) all.push_back(std::move(c));
  // Why a shipped rule's sides may differ at 16-bit dtypes by more than a
  // rounding: a rule file's own `approx` for the rules it holds, and for
  // the rules written in C++ here.
  std::map<std::string, std::string> approx = {
      {"attention", kFusedAttention},
      {"attention-dropout", kFusedAttention},
      {"attention-training", kFusedAttention},
      {"attention-training-dropout", kFusedAttention},
      {"attention-training-16-bit", kFusedAttention},
      {"attention-training-16-bit-dropout", kFusedAttention},
      {"add-small-operands-first",
       "a sum reassociated: (x + y) + z and x + (y + z) round differently, the more where a 16-bit and a float32 "
       "operand meet in another order (a bias added before or after a float32 mask)"},
      {"key-gradient-sum-zero",
       "a sum that is zero in exact arithmetic: the left side's rounding noise against the right side's exact zero"},
  };
  for (const rulelang::RuleFile& f : files)
    for (const rulelang::RuleSpec& s : f.rules)
      if (!s.approx.empty()) approx[s.name] = s.approx;
  for (RuleCase& c : all)
    if (c.approx.empty())
      if (const auto it = approx.find(c.name); it != approx.end()) c.approx = it->second;
  return all;
}

std::vector<std::string> uncovered_rules(const RuleFactory& rules, const std::vector<RuleCase>& cases) {
  std::set<std::string> covered;
  for (const RuleCase& c : cases) covered.insert(c.name);
  GraphBuilder b("rule names");
  const Graph g = b.finish({b.input({1})});
  TensorEGraph t(g);
  std::vector<std::string> missing;
  for (const eg::Rewrite& r : rules(t))
    if (!covered.count(r.name())) missing.push_back(r.name());
  return missing;
}

}  // namespace sator::check
