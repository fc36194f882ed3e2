// Instances of the layout rules' left-hand sides (rules/layout_rules.cpp).
#include <limits>

#include "check/rule_cases.h"

namespace sator::check {

namespace {

using B = GraphBuilder;

std::vector<SymExpr> shape_of(Draw& d, NodeId n) { return d.b.type(n).shape; }

// A fine-grained shape and a tensor x of a regrouping of it: views of x to
// other regroupings split and merge dims in every combination.
struct Regroupable {
  std::vector<SymExpr> fine;
  NodeId x;
};
Regroupable regroupable(Draw& d, size_t rank) {
  Regroupable r;
  r.fine = d.shape(rank);
  r.x = d.b.input(regroup(d, r.fine));
  return r;
}

// Sizes for a view: sometimes one of them written -1 (PyTorch infers it).
Value view_sizes(Draw& d, const std::vector<SymExpr>& s) {
  Value v = B::sizes(s);
  if (!s.empty() && d.integer(0, 3) == 0) v.list[static_cast<size_t>(d.integer(0, static_cast<int64_t>(s.size()) - 1))] = Value::of_int(-1);
  return v;
}

NodeId view_like(Draw& d, const char* op, size_t rank) {
  const Regroupable r = regroupable(d, rank);
  return d.b.op(op, {B::ref(r.x), view_sizes(d, regroup(d, r.fine))});
}

// One of the elementwise ops of one tensor the layout rules move through.
NodeId elementwise(Draw& d, NodeId x) {
  const Value self = B::ref(x);
  switch (d.integer(0, 9)) {
    case 0: return d.b.op("prims.convert_element_type.default", {self, Value::of_dtype(DType::Float64)});
    case 1: return d.b.op("aten.mul.Tensor", {self, Value::of_float(d.number())});
    case 2: return d.b.op("aten.div.Tensor", {self, Value::of_float(d.number())});
    case 3: return d.b.op("aten.add.Tensor", {self, Value::of_float(d.number())});
    case 4: return d.b.op("aten.sub.Tensor", {self, Value::of_float(d.number())});
    case 5: return d.b.op("aten.neg.default", {self});
    case 6: return d.b.op("aten.exp.default", {self});
    case 7: return d.b.op("aten.tanh.default", {self});
    case 8: return d.b.op("aten.relu.default", {self});
    default: return d.b.op("aten.pow.Tensor_Scalar", {self, Value::of_int(2)});
  }
}

// x, sometimes behind a layout op, so that identities are seen on
// intermediate values too.
NodeId operand(Draw& d, size_t rank) {
  const NodeId x = d.b.input(d.shape(rank));
  if (rank < 2 || d.coin()) return x;
  return d.b.op("aten.permute.default", {B::ref(x), B::ints(d.permutation(rank))});
}

std::vector<int64_t> identity(size_t n) {
  std::vector<int64_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(i);
  return p;
}

}  // namespace

std::vector<RuleCase> layout_cases() {
  std::vector<RuleCase> cases;
  auto add = [&](const char* name, size_t min_rank, size_t max_rank, Generator g) {
    cases.push_back({name, min_rank, max_rank, true, false, std::move(g)});
  };
  add("reshape-as-view", 0, 6, [](Draw& d, size_t r) { return view_like(d, "aten.reshape.default", r); });
  add("unsafe-view-as-view", 0, 6, [](Draw& d, size_t r) { return view_like(d, "aten._unsafe_view.default", r); });
  add("unsqueeze-as-view", 0, 5, [](Draw& d, size_t r) {
    const NodeId x = operand(d, r);
    return d.b.op("aten.unsqueeze.default", {B::ref(x), Value::of_int(d.maybe_negative(d.integer(0, static_cast<int64_t>(r)), r + 1))});
  });
  add("squeeze-as-view", 1, 6, [](Draw& d, size_t r) {
    std::vector<SymExpr> s = d.shape(r);
    const auto dim = static_cast<size_t>(d.integer(0, static_cast<int64_t>(r) - 1));
    if (d.integer(0, 3) != 0) s[dim] = 1;  // usually a dim of 1 (else squeeze keeps it)
    const NodeId x = d.b.input(s);
    return d.b.op("aten.squeeze.dim", {B::ref(x), Value::of_int(d.maybe_negative(static_cast<int64_t>(dim), r))});
  });
  add("view-of-view", 0, 6, [](Draw& d, size_t r) {
    const Regroupable g = regroupable(d, r);
    const NodeId v = d.b.op("aten.view.default", {B::ref(g.x), view_sizes(d, regroup(d, g.fine))});
    return d.b.op("aten.view.default", {B::ref(v), view_sizes(d, regroup(d, g.fine))});
  });
  add("view-identity", 0, 6, [](Draw& d, size_t r) {
    const NodeId x = operand(d, r);
    return d.b.op("aten.view.default", {B::ref(x), view_sizes(d, shape_of(d, x))});
  });
  add("expand-identity", 0, 6, [](Draw& d, size_t r) {
    const NodeId x = operand(d, r);
    Value s = B::sizes(shape_of(d, x));
    for (Value& v : s.list)
      if (d.coin()) v = Value::of_int(-1);
    return d.b.op("aten.expand.default", {B::ref(x), s});
  });
  add("slice-full", 1, 6, [](Draw& d, size_t r) {
    const NodeId x = operand(d, r);
    const int64_t dim = d.integer(0, static_cast<int64_t>(r) - 1);
    const SymExpr size = shape_of(d, x)[static_cast<size_t>(dim)];
    Value end = d.coin() ? Value::of_int(std::numeric_limits<int64_t>::max()) : B::sizes({size}).list[0];
    return d.b.op("aten.slice.Tensor", {B::ref(x), Value::of_int(d.maybe_negative(dim, r)), Value::of_int(0), end, Value::of_int(1)});
  });
  add("clone-identity", 0, 6, [](Draw& d, size_t r) { return d.b.op("aten.clone.default", {B::ref(operand(d, r))}); });
  add("alias-identity", 0, 6, [](Draw& d, size_t r) { return d.b.op("aten.alias.default", {B::ref(operand(d, r))}); });
  add("lift-fresh-copy-identity", 0, 6, [](Draw& d, size_t r) {
    return d.b.op("aten.lift_fresh_copy.default", {B::ref(operand(d, r))});
  });
  add("expand-of-expand", 0, 5, [](Draw& d, size_t r) {
    // x has 1s; the first expand fills some of them (and may add leading
    // dims), the second fills more.
    std::vector<SymExpr> s = d.shape(r);
    for (SymExpr& e : s)
      if (d.coin()) e = 1;
    const NodeId x = d.b.input(s);
    std::vector<SymExpr> s1 = s;
    for (SymExpr& e : s1)
      if (e == SymExpr(1) && d.coin()) e = d.big();
    if (d.coin()) s1.insert(s1.begin(), d.coin() ? SymExpr(1) : d.big());
    const NodeId e1 = d.b.op("aten.expand.default", {B::ref(x), B::sizes(s1)});
    std::vector<SymExpr> s2 = s1;
    for (SymExpr& e : s2)
      if (e == SymExpr(1) && d.coin()) e = d.big();
    if (d.coin()) s2.insert(s2.begin(), d.big());
    return d.b.op("aten.expand.default", {B::ref(e1), B::sizes(s2)});
  });
  add("transpose-as-permute", 1, 6, [](Draw& d, size_t r) {
    const NodeId x = operand(d, r);
    const int64_t a = d.integer(0, static_cast<int64_t>(r) - 1), b = d.integer(0, static_cast<int64_t>(r) - 1);
    return d.b.op("aten.transpose.int", {B::ref(x), Value::of_int(d.maybe_negative(a, r)), Value::of_int(d.maybe_negative(b, r))});
  });
  add("t-as-permute", 0, 2, [](Draw& d, size_t r) { return d.b.op("aten.t.default", {B::ref(operand(d, r))}); });
  add("permute-identity", 0, 6, [](Draw& d, size_t r) {
    const NodeId x = operand(d, r);
    std::vector<int64_t> p = identity(r);
    for (int64_t& v : p) v = d.maybe_negative(v, r);
    return d.b.op("aten.permute.default", {B::ref(x), B::ints(p)});
  });
  add("permute-of-permute", 1, 6, [](Draw& d, size_t r) {
    const NodeId x = d.b.input(d.shape(r));
    const std::vector<int64_t> p = d.permutation(r);
    // Sometimes the inverse: the composition is the identity.
    std::vector<int64_t> q = d.permutation(r);
    if (d.integer(0, 3) == 0)
      for (size_t i = 0; i < r; ++i) q[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
    const NodeId inner = d.b.op("aten.permute.default", {B::ref(x), B::ints(p)});
    return d.b.op("aten.permute.default", {B::ref(inner), B::ints(q)});
  });
  add("permute-of-unit-dims-as-view", 2, 6, [](Draw& d, size_t r) {
    // Some dims of size 1; the permutation keeps the others in order.
    std::vector<SymExpr> s = d.shape(r);
    std::vector<bool> unit(r);
    for (size_t i = 0; i < r; ++i)
      if ((unit[i] = d.coin())) s[i] = 1;
    const NodeId x = d.b.input(s);
    std::vector<int64_t> p = d.permutation(r);
    std::vector<int64_t> others;
    for (size_t i = 0; i < r; ++i)
      if (!unit[i]) others.push_back(static_cast<int64_t>(i));
    size_t next = 0;  // put the non-1 dims back into the slots they took, in order
    for (int64_t& v : p)
      if (!unit[static_cast<size_t>(v)]) v = others[next++];
    return d.b.op("aten.permute.default", {B::ref(x), B::ints(p)});
  });
  add("permute-of-unit-insert", 1, 5, [](Draw& d, size_t r) {
    const NodeId x = d.b.input(d.shape(r));
    std::vector<SymExpr> mid = shape_of(d, x);
    const int64_t ones = d.integer(1, 2);
    for (int64_t k = 0; k < ones; ++k)
      mid.insert(mid.begin() + d.integer(0, static_cast<int64_t>(mid.size())), SymExpr(1));
    const NodeId v = d.b.op("aten.view.default", {B::ref(x), B::sizes(mid)});
    return d.b.op("aten.permute.default", {B::ref(v), B::ints(d.permutation(mid.size()))});
  });
  add("view-through-pointwise", 0, 6, [](Draw& d, size_t r) {
    const Regroupable g = regroupable(d, r);
    const NodeId f = elementwise(d, g.x);
    return d.b.op("aten.view.default", {B::ref(f), view_sizes(d, regroup(d, g.fine))});
  });
  add("permute-through-pointwise", 1, 6, [](Draw& d, size_t r) {
    const NodeId f = elementwise(d, d.b.input(d.shape(r)));
    return d.b.op("aten.permute.default", {B::ref(f), B::ints(d.permutation(r))});
  });
  add("convert-of-permute", 1, 6, [](Draw& d, size_t r) {
    const DType to = d.pick(std::vector<DType>{DType::BFloat16, DType::Float16, DType::Float64});
    const NodeId p = d.b.op("aten.permute.default", {B::ref(d.b.input(d.shape(r))), B::ints(d.permutation(r))});
    return d.b.op("prims.convert_element_type.default", {B::ref(p), Value::of_dtype(to)});
  });
  add("transpose-through-flatten", 2, 6, [](Draw& d, size_t r) {
    // x = P + T, viewed as [prod(P)] + T, permuted keeping dim 0 first.
    const std::vector<SymExpr> s = d.shape(r);
    const auto k = static_cast<size_t>(d.integer(2, static_cast<int64_t>(r)));  // |P| >= 2
    const NodeId x = d.b.input(s);
    std::vector<SymExpr> flat = {product({s.begin(), s.begin() + static_cast<std::ptrdiff_t>(k)})};
    flat.insert(flat.end(), s.begin() + static_cast<std::ptrdiff_t>(k), s.end());
    const NodeId v = d.b.op("aten.view.default", {B::ref(x), B::sizes(flat)});
    std::vector<int64_t> q = {0};
    for (int64_t i : d.permutation(flat.size() - 1)) q.push_back(i + 1);
    return d.b.op("aten.permute.default", {B::ref(v), B::ints(q)});
  });
  return cases;
}

}  // namespace sator::check
