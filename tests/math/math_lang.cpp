#include "math_lang.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "egraph/pattern.h"

namespace sator::math {

using eg::DidMerge;
using eg::EGraph;
using eg::Rewrite;
using eg::Subst;

MathLanguage::MathLanguage()
    : d(op("d")), i(op("i")), add(op("+")), sub(op("-")), mul(op("*")), div(op("/")), pow(op("pow")),
      ln(op("ln")), sqrt(op("sqrt")), sin(op("sin")), cos(op("cos")), num(op("num")), sym(op("sym")) {}

eg::AttrId MathLanguage::number(double v) {
  if (v == 0) v = 0;  // -0 and 0 are one constant (ordered_float hashes them alike)
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return attr(std::string_view(buf, static_cast<size_t>(end - buf)));
}

double MathLanguage::value(eg::AttrId a) const { return std::strtod(attr_text(a).c_str(), nullptr); }

std::optional<eg::Term> MathLanguage::parse_token(std::string_view token, size_t arity) {
  double v = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
  if (ec == std::errc() && end == token.data() + token.size()) {
    if (arity != 0 || !std::isfinite(v)) return std::nullopt;
    return eg::Term{num, number(v)};
  }
  const std::pair<eg::OpId, size_t> known[] = {{d, 2}, {i, 2}, {add, 2}, {sub, 2}, {mul, 2}, {div, 2},
                                               {pow, 2}, {ln, 1}, {sqrt, 1}, {sin, 1}, {cos, 1}};
  if (auto o = find_op(token)) {
    for (auto [op, n] : known)
      if (op == *o) return n == arity ? std::optional<eg::Term>(eg::Term{op, eg::kNoAttr}) : std::nullopt;
  }
  if (arity == 0) return eg::Term{sym, attr(token)};
  return std::nullopt;
}

std::string MathLanguage::format_node(eg::OpId op, eg::AttrId a) const {
  return op == num || op == sym ? attr_text(a) : op_name(op);
}

// ---------------------------------------------------------------------------

Constant ConstantFold::make_data(const EGraph& g, Id node) {
  const eg::OpId op = g.op(node);
  if (op == lang_.num) return Constant{true, eg::kNoId, lang_.value(g.attr(node)), 0, 0};
  if (op != lang_.add && op != lang_.sub && op != lang_.mul && op != lang_.div) return {};
  const Constant& a = data(g.find(g.children(node)[0]));
  const Constant& b = data(g.find(g.children(node)[1]));
  if (op == lang_.div && b.known && b.value == 0) return {};
  if (!a.known || !b.known) return {};
  const double v = op == lang_.add   ? a.value + b.value
                   : op == lang_.sub ? a.value - b.value
                   : op == lang_.mul ? a.value * b.value
                                     : a.value / b.value;
  return Constant{true, op, v, a.value, b.value};
}

DidMerge ConstantFold::merge_data(Constant& into, Constant from) {
  if (!into.known && from.known) {
    into = from;
    return {true, false};
  }
  if (into.known && !from.known) return {false, true};
  return {false, false};
}

void ConstantFold::modify(EGraph& g, Id id) {
  const Constant c = data(g.find(id));  // a copy: adding nodes grows the data table
  if (!c.known) return;
  // Terms as written (egg's union_instantiations), so a proof shows the fold
  // as (+ 2 2) -> 4 rather than whatever term represents the class.
  Id lhs;
  if (c.op == eg::kNoId) {
    lhs = g.add_uncanonical(lang_.num, lang_.number(c.value), {});
  } else {
    const Id kids[2] = {g.add_uncanonical(lang_.num, lang_.number(c.lhs), {}),
                        g.add_uncanonical(lang_.num, lang_.number(c.rhs), {})};
    lhs = g.add_uncanonical(c.op, eg::kNoAttr, kids);
  }
  const Id rhs = g.add_uncanonical(lang_.num, lang_.number(c.value), {});
  g.union_classes(lhs, rhs, "constant_fold");
  // Pruning: a class known to be a constant keeps only its leaves.
  g.retain_class_nodes(id, [&](Id n) { return lang_.is_leaf(g.op(n)); });
}

std::string ConstantFold::check(const EGraph& g, Id cls) {
  const Constant& have = data(cls);
  for (Id n : g.class_nodes(cls)) {
    const Constant want = make_data(g, n);
    if (want.known && !have.known) return "a node folds to a constant the class does not know";
    if (want.known && want.value != have.value && !(std::isnan(want.value) && std::isnan(have.value)))
      return "a node folds to " + std::to_string(want.value) + " but the class holds " + std::to_string(have.value);
  }
  return {};
}

// ---------------------------------------------------------------------------

namespace {

bool has_symbol(const EGraph& g, const MathLanguage& lang, Id cls) {
  for (Id n : g.class_nodes(cls))
    if (g.op(n) == lang.sym) return true;
  return false;
}

}  // namespace

std::vector<Rewrite> rules(MathLanguage& lang, ConstantFold& fold) {
  auto is_not_zero = [&](uint32_t v) -> eg::Condition {
    return [&fold, v](EGraph& g, Id, Subst s) {
      const Constant& c = fold.data(g.find(s[v]));
      return !c.known || c.value != 0;
    };
  };
  auto is_sym = [&](uint32_t v) -> eg::Condition {
    return [&lang, v](EGraph& g, Id, Subst s) { return has_symbol(g, lang, s[v]); };
  };
  auto is_const = [&](uint32_t v) -> eg::Condition {
    return [&fold, v](EGraph& g, Id, Subst s) { return fold.data(g.find(s[v])).known; };
  };
  auto is_const_or_distinct_var = [&](uint32_t v, uint32_t w) -> eg::Condition {
    return [&fold, &lang, v, w](EGraph& g, Id, Subst s) {
      return g.find(s[v]) != g.find(s[w]) && (fold.data(g.find(s[v])).known || has_symbol(g, lang, s[v]));
    };
  };

  std::vector<Rewrite> rs;
  auto rw = [&](const char* name, const char* lhs, const char* rhs) -> Rewrite& {
    rs.emplace_back(name, lang, lhs, rhs);
    return rs.back();
  };
  rw("comm-add", "(+ ?a ?b)", "(+ ?b ?a)");
  rw("comm-mul", "(* ?a ?b)", "(* ?b ?a)");
  rw("assoc-add", "(+ ?a (+ ?b ?c))", "(+ (+ ?a ?b) ?c)");
  rw("assoc-mul", "(* ?a (* ?b ?c))", "(* (* ?a ?b) ?c)");
  rw("sub-canon", "(- ?a ?b)", "(+ ?a (* -1 ?b))");
  { auto& r = rw("div-canon", "(/ ?a ?b)", "(* ?a (pow ?b -1))"); r.add_condition(is_not_zero(r.var("?b"))); }
  rw("zero-add", "(+ ?a 0)", "?a");
  rw("zero-mul", "(* ?a 0)", "0");
  rw("one-mul", "(* ?a 1)", "?a");
  rw("add-zero", "?a", "(+ ?a 0)");
  rw("mul-one", "?a", "(* ?a 1)");
  rw("cancel-sub", "(- ?a ?a)", "0");
  { auto& r = rw("cancel-div", "(/ ?a ?a)", "1"); r.add_condition(is_not_zero(r.var("?a"))); }
  rw("distribute", "(* ?a (+ ?b ?c))", "(+ (* ?a ?b) (* ?a ?c))");
  rw("factor", "(+ (* ?a ?b) (* ?a ?c))", "(* ?a (+ ?b ?c))");
  rw("pow-mul", "(* (pow ?a ?b) (pow ?a ?c))", "(pow ?a (+ ?b ?c))");
  { auto& r = rw("pow0", "(pow ?x 0)", "1"); r.add_condition(is_not_zero(r.var("?x"))); }
  rw("pow1", "(pow ?x 1)", "?x");
  rw("pow2", "(pow ?x 2)", "(* ?x ?x)");
  { auto& r = rw("pow-recip", "(pow ?x -1)", "(/ 1 ?x)"); r.add_condition(is_not_zero(r.var("?x"))); }
  { auto& r = rw("recip-mul-div", "(* ?x (/ 1 ?x))", "1"); r.add_condition(is_not_zero(r.var("?x"))); }
  { auto& r = rw("d-variable", "(d ?x ?x)", "1"); r.add_condition(is_sym(r.var("?x"))); }
  {
    auto& r = rw("d-constant", "(d ?x ?c)", "0");
    r.add_condition(is_sym(r.var("?x")));
    r.add_condition(is_const_or_distinct_var(r.var("?c"), r.var("?x")));
  }
  rw("d-add", "(d ?x (+ ?a ?b))", "(+ (d ?x ?a) (d ?x ?b))");
  rw("d-mul", "(d ?x (* ?a ?b))", "(+ (* ?a (d ?x ?b)) (* ?b (d ?x ?a)))");
  rw("d-sin", "(d ?x (sin ?x))", "(cos ?x)");
  rw("d-cos", "(d ?x (cos ?x))", "(* -1 (sin ?x))");
  { auto& r = rw("d-ln", "(d ?x (ln ?x))", "(/ 1 ?x)"); r.add_condition(is_not_zero(r.var("?x"))); }
  {
    auto& r = rw("d-power", "(d ?x (pow ?f ?g))", "(* (pow ?f ?g) (+ (* (d ?x ?f) (/ ?g ?f)) (* (d ?x ?g) (ln ?f))))");
    r.add_condition(is_not_zero(r.var("?f")));
    r.add_condition(is_not_zero(r.var("?g")));
  }
  rw("i-one", "(i 1 ?x)", "?x");
  { auto& r = rw("i-power-const", "(i (pow ?x ?c) ?x)", "(/ (pow ?x (+ ?c 1)) (+ ?c 1))"); r.add_condition(is_const(r.var("?c"))); }
  rw("i-cos", "(i (cos ?x) ?x)", "(sin ?x)");
  rw("i-sin", "(i (sin ?x) ?x)", "(* -1 (cos ?x))");
  rw("i-sum", "(i (+ ?f ?g) ?x)", "(+ (i ?f ?x) (i ?g ?x))");
  rw("i-dif", "(i (- ?f ?g) ?x)", "(- (i ?f ?x) (i ?g ?x))");
  rw("i-parts", "(i (* ?a ?b) ?x)", "(- (* ?a (i ?b ?x)) (i (* (d ?x ?a) (i ?b ?x)) ?x))");
  return rs;
}

Id add_expr(EGraph& g, MathLanguage& lang, std::string_view text) {
  std::vector<std::string> vars;
  eg::Pattern p = eg::Pattern::parse(text, lang, vars);
  if (!vars.empty()) throw eg::PatternError("add_expr: \"" + std::string(text) + "\" has variables");
  return eg::instantiate_pattern(g, p, Subst{nullptr}, g.explain() != nullptr);
}

}  // namespace sator::math
