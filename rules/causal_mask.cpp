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
    if (in->empty() || (is_one(in->back()) && !is_one(out.back()))) f->a = 0;
    if (in->size() < 2 || (is_one((*in)[in->size() - 2]) && !is_one(out[out.size() - 2]))) f->b = 0;
    return f;
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

}  // namespace

bool is_causal_mask(TensorEGraph& t, eg::Id mask) {
  eg::EGraph& g = t.egraph;
  const auto* s = t.analysis.shape(g, mask);
  if (!s || s->size() < 2 || !t.prover.is_equal((*s)[s->size() - 1], (*s)[s->size() - 2])) return false;
  Tracer tracer(t);
  const auto where = t.lang.find_op("aten.where.self");
  if (!where) return false;
  const std::vector<Id> nodes(g.class_nodes(mask).begin(), g.class_nodes(mask).end());
  // A causal mask cast to another floating type is still one: 0 stays 0 and
  // the masked entries stay at most -1e30 (or become -inf).
  const auto convert = t.lang.find_op("prims.convert_element_type.default");
  const TensorData& md = t.analysis.data(g.find(mask));
  if (convert && md.result == Node::Result::Tensor && is_floating(md.type.dtype))
    for (Id n : nodes)
      if (g.op(n) == *convert && g.find(g.children(n)[0]) != g.find(mask) &&
          is_causal_mask(t, g.find(g.children(n)[0])))
        return true;
  for (Id n : nodes) {
    if (g.op(n) != *where) continue;
    const NodeAttrs& at = t.lang.attrs(g.attr(n));
    if (at.args.size() != 3 || at.args[0].kind != Value::Kind::Node) continue;
    auto value = [&](const Value& v) -> std::optional<double> {
      if (v.kind == Value::Kind::Node) return t.analysis.constant(g, g.children(n)[v.node]);
      if (v.kind == Value::Kind::Int) return static_cast<double>(v.i);
      if (v.kind == Value::Kind::Float) return v.f;
      return std::nullopt;
    };
    const auto on_true = value(at.args[1]), on_false = value(at.args[2]);
    if (!on_true || !on_false) continue;
    // One branch keeps (0), the other masks: -inf, or so negative that exp
    // gives exactly 0 after the row maximum is subtracted.
    const bool true_keeps = *on_true == 0 && *on_false <= -1e30;
    const bool false_keeps = *on_false == 0 && *on_true <= -1e30;
    if (!true_keeps && !false_keeps) continue;
    const auto f = tracer.form(g.children(n)[at.args[0].node]);
    if (!f || f->cmp == Cmp::None) continue;
    auto p = normalize(*f);
    if (!p) continue;
    if (false_keeps) p = p->le ? HalfPlane{false, p->t + 1} : HalfPlane{true, p->t - 1};  // not P
    if (p->le && p->t == 0) return true;  // keeps exactly j <= i
  }
  return false;
}

}  // namespace sator::rules
