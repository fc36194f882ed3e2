#include "rules/causal_mask.h"

#include <cmath>
#include <map>

namespace sator::rules {

using eg::Id;

namespace {

enum class Cmp : uint8_t { None, Ge, Gt, Le, Lt };

// value = a·j + b·i + c, j the index along the last axis, i along the one
// before; for a boolean, `value cmp 0`.
struct Form {
  int64_t a = 0, b = 0, c = 0;
  Cmp cmp = Cmp::None;
};

class Tracer {
 public:
  explicit Tracer(TensorEGraph& t) : t_(t), g_(t.egraph) {}

  std::optional<Form> form(Id cls) {
    cls = g_.find(cls);
    if (auto it = memo_.find(cls); it != memo_.end()) return it->second;
    memo_[cls] = std::nullopt;  // cycles give up
    const std::vector<Id> nodes(g_.class_nodes(cls).begin(), g_.class_nodes(cls).end());
    for (Id n : nodes)
      if (auto f = node_form(n)) return memo_[cls] = f;
    if (auto c = integral_constant(cls)) return memo_[cls] = Form{0, 0, *c, Cmp::None};
    return std::nullopt;
  }

  // A boolean class as a conjunction of comparisons `a·j + b·i + c cmp 0`
  // in its own coordinates: a comparison, `&` of such conjunctions, or the
  // constant true (an empty conjunction).
  std::optional<std::vector<Form>> conj(Id cls) {
    cls = g_.find(cls);
    if (auto it = conj_memo_.find(cls); it != conj_memo_.end()) return it->second;
    conj_memo_[cls] = std::nullopt;  // cycles give up
    if (auto f = form(cls); f && f->cmp != Cmp::None) return conj_memo_[cls] = std::vector<Form>{*f};
    const TensorData& d = t_.analysis.data(cls);
    if (d.result == Node::Result::Tensor && d.type.dtype == DType::Bool && d.constant && *d.constant == 1)
      return conj_memo_[cls] = std::vector<Form>{};
    const auto* out = shape(cls);
    if (!out) return std::nullopt;
    const std::vector<SymExpr> out_shape = *out;
    const std::vector<Id> nodes(g_.class_nodes(cls).begin(), g_.class_nodes(cls).end());
    for (Id n : nodes) {
      const std::string& op = t_.lang.op_name(g_.op(n));
      std::vector<Id> parts;
      // not(e cmp 0) is one comparison, the opposite one (a mask written as
      // masked_fill(~keep, min), keep = kv_idx <= q_idx).
      if ((op == "aten.bitwise_not.default" || op == "aten.logical_not.default") && g_.children(n).size() == 1) {
        const auto inner = conj(g_.children(n)[0]);
        const auto* in = shape(g_.children(n)[0]);
        if (inner && in && inner->size() == 1 && in->size() <= out_shape.size()) {
          Form f = drop_broadcast(inner->front(), *in, out_shape);
          f.cmp = f.cmp == Cmp::Ge ? Cmp::Lt : f.cmp == Cmp::Gt ? Cmp::Le : f.cmp == Cmp::Le ? Cmp::Gt : Cmp::Ge;
          return conj_memo_[cls] = std::vector<Form>{f};
        }
        continue;
      }
      if (op == "aten.bitwise_and.Tensor" || op == "aten.logical_and.default") parts.assign(g_.children(n).begin(), g_.children(n).end());
      else if (op == "aten.expand.default" || op == "aten.alias.default" || op == "aten.clone.default")
        parts = {g_.children(n)[0]};
      if (parts.empty() || (parts.size() > 1 && parts.size() != 2)) continue;
      std::vector<Form> all;
      bool ok = true;
      for (Id p : parts) {
        auto c = conj(p);
        const auto* in = shape(p);
        if (!c || !in || in->size() > out_shape.size()) { ok = false; break; }
        for (Form f : *c) all.push_back(drop_broadcast(f, *in, out_shape));
      }
      if (ok) return conj_memo_[cls] = all;
    }
    return std::nullopt;
  }

  // A form seen through a broadcast from `in` to `out`: axes that are
  // missing or of size 1 in `in` carry no index.
  Form drop_broadcast(Form f, const std::vector<SymExpr>& in, const std::vector<SymExpr>& out) const {
    if (in.empty() || (is_one(in.back()) && !is_one(out.back()))) f.a = 0;
    if (in.size() < 2 || (is_one(in[in.size() - 2]) && !is_one(out[out.size() - 2]))) f.b = 0;
    return f;
  }

 private:
  std::optional<int64_t> integral_constant(Id cls) const {
    const auto c = t_.analysis.constant(g_, cls);
    if (!c || *c != std::floor(*c) || std::abs(*c) > 1e15) return std::nullopt;
    return static_cast<int64_t>(*c);
  }
  const std::vector<SymExpr>* shape(Id cls) const { return t_.analysis.shape(g_, cls); }
  bool is_one(const SymExpr& d) const { return d == SymExpr(1); }

  // An operand: a tensor slot's form, or a number.
  std::optional<Form> operand(Id n, const Value& v) {
    if (v.kind == Value::Kind::Node) return form(g_.children(n)[v.node]);
    if (v.kind == Value::Kind::Int) return Form{0, 0, v.i, Cmp::None};
    return std::nullopt;
  }

  // The child's form seen at the output's rank: broadcast axes (missing, or
  // of size 1 in the child) carry no index.
  std::optional<Form> broadcast(Id child, const std::vector<SymExpr>& out) {
    auto f = form(child);
    const auto* in = shape(child);
    if (!f || !in || out.size() < in->size()) return std::nullopt;
    return drop_broadcast(*f, *in, out);
  }

  // The two operands of a binary node, as forms over the node's own shape
  // (broadcast axes of either side carry no index); neither may be a comparison.
  std::optional<std::pair<Form, Form>> operands(Id n, const NodeAttrs& at, const std::vector<SymExpr>& out) {
    std::optional<Form> xy[2];
    for (size_t k = 0; k < 2; ++k) {
      xy[k] = operand(n, at.args[k]);
      if (xy[k] && at.args[k].kind == Value::Kind::Node) xy[k] = broadcast(g_.children(n)[at.args[k].node], out);
      if (!xy[k] || xy[k]->cmp != Cmp::None) return std::nullopt;
    }
    return std::pair{*xy[0], *xy[1]};
  }

  std::optional<Form> node_form(Id n) {
    const std::string& op = t_.lang.op_name(g_.op(n));
    const NodeAttrs& at = t_.lang.attrs(g_.attr(n));
    const auto* out = shape(g_.find(n));
    if (!out) return std::nullopt;
    const size_t r = out->size();
    if (op == "prims.iota.default") {
      const Value* start = nullptr;
      const Value* step = nullptr;
      for (const auto& [k, v] : at.kwargs) {
        if (k == "start") start = &v;
        if (k == "step") step = &v;
      }
      if (r != 1 || !start || !step || start->kind != Value::Kind::Int || step->kind != Value::Kind::Int) return std::nullopt;
      return Form{step->i, 0, start->i, Cmp::None};
    }
    if (op == "aten.alias.default" || op == "aten.clone.default" || op == "aten.lift_fresh_copy.default" ||
        op == "aten.expand.default" || op == "aten.slice.Tensor" || op == "aten.view.default") {
      const Id child = g_.children(n)[0];
      const auto* in = shape(child);
      if (!in) return std::nullopt;
      // Slices and views must keep every size (full slices, no-op views).
      if ((op == "aten.slice.Tensor" || op == "aten.view.default") &&
          (in->size() != r || !std::equal(in->begin(), in->end(), out->begin())))
        return std::nullopt;
      return broadcast(child, *out);
    }
    if (op == "aten.unsqueeze.default") {
      if (r < 1 || at.args.size() < 2 || at.args[1].kind != Value::Kind::Int) return std::nullopt;
      const auto f = form(g_.children(n)[0]);
      if (!f) return std::nullopt;
      const int64_t rank = static_cast<int64_t>(r);
      const int64_t d = at.args[1].i < 0 ? at.args[1].i + rank : at.args[1].i;
      Form o{0, 0, f->c, f->cmp};
      // The child's last two axes, in the output's coordinates.
      auto place = [&](int64_t child_axis, int64_t coef) {
        if (coef == 0 || child_axis < 0) return true;
        const int64_t pos = child_axis < d ? child_axis : child_axis + 1;
        if (pos == rank - 1) o.a += coef;
        else if (pos == rank - 2) o.b += coef;
        else return false;
        return true;
      };
      if (!place(rank - 2, f->a) || !place(rank - 3, f->b)) return std::nullopt;
      return o;
    }
    const bool add = op == "aten.add.Tensor", sub = op == "aten.sub.Tensor";
    if ((add || sub) && at.kwargs.empty() && at.args.size() == 2) {
      const auto xy = operands(n, at, *out);
      if (!xy) return std::nullopt;
      const auto& [x, y] = *xy;
      const int64_t s = add ? 1 : -1;
      return Form{x.a + s * y.a, x.b + s * y.b, x.c + s * y.c, Cmp::None};
    }
    const std::pair<const char*, Cmp> cmps[] = {{"aten.ge", Cmp::Ge}, {"aten.gt", Cmp::Gt}, {"aten.le", Cmp::Le}, {"aten.lt", Cmp::Lt}};
    for (const auto& [prefix, cmp] : cmps) {
      if (op.rfind(prefix, 0) != 0 || op[std::string(prefix).size()] != '.' || at.args.size() != 2) continue;
      const auto xy = operands(n, at, *out);
      if (!xy) return std::nullopt;
      const auto& [x, y] = *xy;
      return Form{x.a - y.a, x.b - y.b, x.c - y.c, cmp};
    }
    return std::nullopt;
  }

  TensorEGraph& t_;
  eg::EGraph& g_;
  std::map<Id, std::optional<Form>> memo_;
  std::map<Id, std::optional<std::vector<Form>>> conj_memo_;
};

// `j - i <= t` (le = true) or `j - i >= t` (le = false).
struct HalfPlane {
  bool le;
  int64_t t;
};

std::optional<HalfPlane> normalize(const Form& f) {
  // e = s·(j - i) + c with s = ±1, then `e cmp 0`.
  int64_t s;
  if (f.a == 1 && f.b == -1) s = 1;
  else if (f.a == -1 && f.b == 1) s = -1;
  else return std::nullopt;
  const int64_t c = f.c;
  switch (f.cmp) {  // j - i compared with -c·s, one step tighter for strict comparisons
    case Cmp::Ge: return s > 0 ? HalfPlane{false, -c} : HalfPlane{true, c};
    case Cmp::Gt: return s > 0 ? HalfPlane{false, 1 - c} : HalfPlane{true, c - 1};
    case Cmp::Le: return s > 0 ? HalfPlane{true, -c} : HalfPlane{false, c};
    case Cmp::Lt: return s > 0 ? HalfPlane{true, -c - 1} : HalfPlane{false, c + 1};
    case Cmp::None: break;
  }
  return std::nullopt;
}

// `not (e cmp 0)`.
Form negated(Form f) {
  switch (f.cmp) {
    case Cmp::Ge: f.cmp = Cmp::Lt; break;
    case Cmp::Gt: f.cmp = Cmp::Le; break;
    case Cmp::Le: f.cmp = Cmp::Gt; break;
    case Cmp::Lt: f.cmp = Cmp::Ge; break;
    case Cmp::None: break;
  }
  return f;
}

// Whether `a·j + b·i + c cmp 0` holds for every j in [0, cols) and i in
// [0, rows): its least (for >=, >) or largest (for <=, <) value decides.
bool holds_everywhere(ShapeProver& prover, const Form& f, const SymExpr& rows, const SymExpr& cols) {
  const bool lower = f.cmp == Cmp::Ge || f.cmp == Cmp::Gt;
  // The extreme of a·j over j in [0, cols): 0 or a·(cols - 1), by a's sign.
  auto extreme = [&](int64_t coef, const SymExpr& n) {
    return (coef < 0) == lower ? SymExpr(coef) * (n - SymExpr(1)) : SymExpr(0);
  };
  const SymExpr e = extreme(f.a, cols) + extreme(f.b, rows) + SymExpr(f.c);
  switch (f.cmp) {
    case Cmp::Ge: return prover.is_le(SymExpr(0), e);
    case Cmp::Gt: return prover.is_le(SymExpr(1), e);
    case Cmp::Le: return prover.is_le(e, SymExpr(0));
    case Cmp::Lt: return prover.is_le(e, SymExpr(-1));
    case Cmp::None: break;
  }
  return false;
}

MaskKind classify(TensorEGraph& t, Id mask, int depth);
MaskKind classify_condition(TensorEGraph& t, Tracer& tracer, Id cond, const std::vector<SymExpr>& shape,
                            bool kept_when_true);

// A `where` choosing between 0 and a masking value (-inf, or so negative
// that exp gives exactly 0 after the row maximum is subtracted).
MaskKind classify_where(TensorEGraph& t, Tracer& tracer, Id n, const std::vector<SymExpr>& shape, int depth) {
  eg::EGraph& g = t.egraph;
  const NodeAttrs& at = t.lang.attrs(g.attr(n));
  if (at.args.size() != 3 || at.args[0].kind != Value::Kind::Node) return MaskKind::Other;
  auto value = [&](const Value& v) -> std::optional<double> {
    if (v.kind == Value::Kind::Node) {
      // A fill the dtype does not hold exactly (float16's lowest in
      // bfloat16) has no folded constant; as written it still decides: a
      // value at most kMaskingValue rounds to one at most kMaskingValue, and
      // only an exact 0 counts as keeping.
      const Id c = g.children(n)[v.node];
      if (const auto k = t.analysis.constant(g, c)) return k;
      return t.analysis.fill_as_written(g, c);
    }
    if (v.kind == Value::Kind::Int) return static_cast<double>(v.i);
    if (v.kind == Value::Kind::Float) return v.f;
    return std::nullopt;
  };
  const Id cond = g.children(n)[at.args[0].node];
  const auto on_true = value(at.args[1]), on_false = value(at.args[2]);
  // where(m < k, K, m) with k <= 0 and K masking: a clamp of m's masked
  // entries (its kept entries are 0, never below k), so m's kind.
  if (on_true && *on_true <= kMaskingValue && at.args[2].kind == Value::Kind::Node) {
    const Id m = g.find(g.children(n)[at.args[2].node]);
    for (Id c : g.class_nodes(g.find(cond))) {
      const std::string& op = t.lang.op_name(g.op(c));
      const NodeAttrs& ca = t.lang.attrs(g.attr(c));
      if (op != "aten.lt.Scalar" || ca.args.size() != 2 || g.find(g.children(c)[0]) != m) continue;
      const Value& k = ca.args[1];
      if ((k.kind == Value::Kind::Int && k.i <= 0) || (k.kind == Value::Kind::Float && k.f <= 0))
        return classify(t, m, depth + 1);
    }
  }
  if (!on_true || !on_false) return MaskKind::Other;
  const bool true_keeps = *on_true == 0 && *on_false <= kMaskingValue;
  const bool false_keeps = *on_false == 0 && *on_true <= kMaskingValue;
  if (!true_keeps && !false_keeps) return MaskKind::Other;
  return classify_condition(t, tracer, cond, shape, true_keeps);
}

// What a boolean `cond` (broadcast into `shape`) masks: the entries where it
// fails (kept_when_true) or where it holds.
MaskKind classify_condition(TensorEGraph& t, Tracer& tracer, Id cond, const std::vector<SymExpr>& shape,
                            bool kept_when_true) {
  eg::EGraph& g = t.egraph;
  const bool false_keeps = !kept_when_true;
  const auto parts = tracer.conj(cond);
  const auto* cs = t.analysis.shape(g, cond);
  if (!parts || !cs || cs->size() > shape.size()) return MaskKind::Other;
  const SymExpr rows = shape.size() < 2 ? SymExpr(1) : shape[shape.size() - 2];
  const SymExpr cols = shape.empty() ? SymExpr(1) : shape.back();
  // The comparisons that do not hold everywhere, in the mask's coordinates.
  std::vector<Form> live;
  for (const Form& f : *parts) {
    const Form m = tracer.drop_broadcast(f, *cs, shape);
    if (!holds_everywhere(t.prover, m, rows, cols)) live.push_back(m);
  }
  if (false_keeps) {  // the kept entries are those where cond fails
    if (live.size() != 1) return MaskKind::Other;  // all masked, or a union
    live[0] = negated(live[0]);
    if (holds_everywhere(t.prover, live[0], rows, cols)) live.clear();
  }
  if (live.empty()) return MaskKind::Zero;
  // What is left must be one band `j - i <= 0` of a square matrix.
  if (!t.prover.is_equal(rows, cols)) return MaskKind::Other;
  for (const Form& f : live) {
    const auto p = normalize(f);
    if (!p || !p->le || p->t != 0) return MaskKind::Other;
  }
  return MaskKind::Causal;
}

MaskKind classify(TensorEGraph& t, Id mask, int depth) {
  eg::EGraph& g = t.egraph;
  mask = g.find(mask);
  if (depth > 8) return MaskKind::Other;
  const TensorData& md = t.analysis.data(mask);
  if (md.result != Node::Result::Tensor || !is_floating(md.type.dtype)) return MaskKind::Other;
  if (md.constant && *md.constant == 0) return MaskKind::Zero;
  const auto* s = t.analysis.shape(g, mask);
  if (!s) return MaskKind::Other;
  const std::vector<SymExpr> shape = *s;
  const std::vector<Id> nodes(g.class_nodes(mask).begin(), g.class_nodes(mask).end());
  Tracer tracer(t);
  MaskKind best = MaskKind::Other;
  for (Id n : nodes) {
    const std::string& op = t.lang.op_name(g.op(n));
    MaskKind k = MaskKind::Other;
    // A mask cast to another floating type is still one: 0 stays 0 and the
    // masked entries stay at most kMaskingValue (or become -inf).
    if (op == "prims.convert_element_type.default" && g.find(g.children(n)[0]) != mask)
      k = classify(t, g.children(n)[0], depth + 1);
    else if (op == "aten.where.self")
      k = classify_where(t, tracer, n, shape, depth);
    if (k == MaskKind::Zero) return k;
    if (k == MaskKind::Causal) best = k;
  }
  return best;
}

}  // namespace

MaskKind classify_mask(TensorEGraph& t, eg::Id mask) { return classify(t, mask, 0); }

MaskKind classify_mask_condition(TensorEGraph& t, eg::Id cond, const std::vector<SymExpr>& shape, bool kept_when_true) {
  Tracer tracer(t);
  return classify_condition(t, tracer, t.egraph.find(cond), shape, kept_when_true);
}

}  // namespace sator::rules
