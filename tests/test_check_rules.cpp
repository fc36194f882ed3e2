// check-rules: every shipped rule passes, every planted wrong rule is caught,
// and the index proofs and instance builder behave.
#include <catch2/catch.hpp>

#include "check/index_proof.h"
#include "check/rule_cases.h"
#include "check/rule_check.h"

using namespace sator;
using namespace sator::check;
using eg::Id;
using eg::kNoId;
using eg::Subst;

namespace {

CheckOptions quick() {
  CheckOptions o;
  o.trials = 60;
  return o;
}

const RuleCase& shipped(const std::string& name) {
  static const std::vector<RuleCase> cases = shipped_cases();
  for (const RuleCase& c : cases)
    if (c.name == name) return c;
  throw std::logic_error("no case " + name);
}

// One planted rule under the name of the case whose instances it is run on.
RuleReport check_planted(const std::string& case_name, const char* searcher,
                         std::function<Id(TensorEGraph&, eg::EGraph&, Id, Subst)> build) {
  RuleFactory factory = [=](TensorEGraph& t) {
    std::vector<eg::Rewrite> rs;
    rs.emplace_back(case_name, t.lang, searcher, [&t, build](eg::EGraph& g, Id c, Subst s) { return build(t, g, c, s); });
    return rs;
  };
  return check_rule(shipped(case_name), factory, quick());
}

std::vector<int64_t> dims_of(const TensorEGraph& t, const eg::EGraph& g, Id node, size_t rank) {
  std::vector<int64_t> d;
  for (const Value& v : t.lang.attrs(g.attr(node)).args.at(1).list) d.push_back(v.i < 0 ? v.i + static_cast<int64_t>(rank) : v.i);
  return d;
}

Id add(TensorEGraph& t, eg::EGraph& g, const char* op, NodeAttrs a, std::vector<Id> kids) {
  return g.add(t.lang.op(op), t.lang.intern(a), kids);
}

}  // namespace

TEST_CASE("check-rules: every shipped rule has a generator and passes", "[check]") {
  const RuleFactory rules = shipped_rules();
  const std::vector<RuleCase> cases = shipped_cases();
  CHECK(uncovered_rules(rules, cases).empty());
  CheckOptions o = quick();
  o.trials = 40;
  for (const RuleCase& c : cases) {
    const RuleReport r = check_rule(c, rules, o);
    INFO(c.name << ": " << r.shape << " / " << r.index << (r.failures.empty() ? "" : "\n" + r.failures[0]));
    CHECK(r.ok());
    CHECK(r.trials == o.trials);
    CHECK(r.shape.rfind("proved", 0) == 0);
    if (c.index_map) CHECK(r.index.find("proved") != std::string::npos);
  }
}

TEST_CASE("check-rules: a rule with no generator is reported", "[check]") {
  const RuleFactory rules = shipped_rules();
  std::vector<RuleCase> cases = shipped_cases();
  cases.erase(cases.begin());
  const auto missing = uncovered_rules(rules, cases);
  REQUIRE(missing.size() == 1);
  CHECK(missing[0] == shipped_cases()[0].name);
}

TEST_CASE("planted bug: permutations composed in the wrong order", "[check][planted]") {
  const RuleReport r = check_planted("permute-of-permute", "(aten.permute.default@_ (aten.permute.default@_ ?x))",
                                     [](TensorEGraph& t, eg::EGraph& g, Id, Subst s) -> Id {
    const auto* in = t.analysis.shape(g, s[0]);
    if (!in) return kNoId;
    const size_t rank = in->size();
    const auto outer = dims_of(t, g, s.root, rank);
    const auto inner = dims_of(t, g, g.class_nodes(g.find(g.children(s.root)[0]))[0], rank);
    std::vector<int64_t> wrong(rank);
    for (size_t i = 0; i < rank; ++i) wrong[i] = outer[static_cast<size_t>(inner[i])];  // should be inner[outer[i]]
    const Id kids[1] = {s[0]};
    return g.add(t.lang.op("aten.permute.default"), t.lang.permute_attr(wrong), kids);
  });
  INFO(r.shape << (r.failures.empty() ? "" : "\n" + r.failures[0]));
  CHECK_FALSE(r.ok());
  REQUIRE_FALSE(r.failures.empty());
}

TEST_CASE("planted bug: a view pair read as a transpose", "[check][planted]") {
  // view(view(x, [a*b]), [b, a]) is not permute(x, [1, 0]): same shape, other values.
  const RuleReport r = check_planted("view-of-view", "(aten.view.default@_ (aten.view.default@_ ?x))",
                                     [](TensorEGraph& t, eg::EGraph& g, Id eclass, Subst s) -> Id {
    const auto *in = t.analysis.shape(g, s[0]), *out = t.analysis.shape(g, eclass);
    if (!in || !out || in->size() != 2 || out->size() != 2 || !t.prover.is_equal((*in)[0], (*out)[1]) ||
        !t.prover.is_equal((*in)[1], (*out)[0]))
      return kNoId;
    const Id kids[1] = {s[0]};
    return g.add(t.lang.op("aten.permute.default"), t.lang.permute_attr({1, 0}), kids);
  });
  INFO(r.shape << " / " << r.index << (r.failures.empty() ? "" : "\n" + r.failures[0]));
  CHECK_FALSE(r.ok());
  REQUIRE_FALSE(r.failures.empty());
  // The index proof refutes it with a counterexample, not only the values.
  bool index_refuted = false;
  for (const auto& f : r.failures) index_refuted |= f.find("index proof") != std::string::npos;
  CHECK(index_refuted);
}

TEST_CASE("planted bug: a view pair with a mismatched size", "[check][planted]") {
  // view(view(x, s1), s2) = x whenever the ranks agree: wrong when s2 is not x's shape.
  const RuleReport r = check_planted("view-of-view", "(aten.view.default@_ (aten.view.default@_ ?x))",
                                     [](TensorEGraph& t, eg::EGraph& g, Id eclass, Subst s) -> Id {
    const auto *in = t.analysis.shape(g, s[0]), *out = t.analysis.shape(g, eclass);
    (void)g;
    return in && out && in->size() == out->size() ? s[0] : kNoId;
  });
  INFO(r.shape << (r.failures.empty() ? "" : "\n" + r.failures[0]));
  CHECK_FALSE(r.ok());
  REQUIRE_FALSE(r.failures.empty());
  CHECK(r.failures[0].find("shape") != std::string::npos);
}

TEST_CASE("planted bug: softmax over the wrong dim", "[check][planted]") {
  const RuleReport r = check_planted(
      "softmax-recompose",
      "(aten.div.Tensor (aten.exp.default (aten.sub.Tensor ?x ?m)) (aten.sum.dim_IntList@_ (aten.exp.default (aten.sub.Tensor ?x ?m))))",
      [](TensorEGraph& t, eg::EGraph& g, Id, Subst s) -> Id {
        const auto* sx = t.analysis.shape(g, s[0]);
        if (!sx || sx->empty()) return kNoId;
        NodeAttrs a;
        a.args = {Value::of_node(0), Value::of_int(0), Value::of_bool(false)};  // always dim 0
        return add(t, g, "aten._softmax.default", a, {s[0]});
      });
  INFO(r.shape << (r.failures.empty() ? "" : "\n" + r.failures[0]));
  CHECK_FALSE(r.ok());
  REQUIRE_FALSE(r.failures.empty());
  CHECK(r.failures[0].find("values differ") != std::string::npos);
}

TEST_CASE("planted bug: the mask added after the softmax", "[check][planted]") {
  // matmul(_softmax(scores + mask), v) rewritten as matmul(_softmax(scores) + mask, v).
  const RuleReport r = check_planted(
      "attention", "(aten.matmul.default (aten._softmax.default@_ (aten.add.Tensor@_ ?s ?m)) ?v)",
      [](TensorEGraph& t, eg::EGraph& g, Id, Subst s) -> Id {
        NodeAttrs sm;
        sm.args = {Value::of_node(0), Value::of_int(-1), Value::of_bool(false)};
        NodeAttrs two;
        two.args = {Value::of_node(0), Value::of_node(1)};
        const Id p = add(t, g, "aten._softmax.default", sm, {s[0]});
        const Id masked = add(t, g, "aten.add.Tensor", two, {p, s[1]});
        return add(t, g, "aten.matmul.default", two, {masked, s[2]});
      });
  INFO(r.shape << (r.failures.empty() ? "" : "\n" + r.failures[0]));
  CHECK_FALSE(r.ok());
  REQUIRE_FALSE(r.failures.empty());
}

TEST_CASE("planted bug: a scale applied twice", "[check][planted]") {
  // matmul(x * c, y) = matmul(x, y) * c * c: the scale moved out twice.
  const RuleReport r = check_planted("scalar-out-of-matmul", "(aten.matmul.default (aten.mul.Tensor@_ ?x) ?y)",
                                     [](TensorEGraph& t, eg::EGraph& g, Id, Subst s) -> Id {
    const Id scaled = g.find(g.children(s.root)[0]);
    for (Id n : g.class_nodes(scaled)) {
      const NodeAttrs& a = t.lang.attrs(g.attr(n));
      if (t.lang.op_name(g.op(n)) != "aten.mul.Tensor" || a.args.size() != 2 || a.args[1].kind != Value::Kind::Float) continue;
      NodeAttrs two;
      two.args = {Value::of_node(0), Value::of_node(1)};
      const Id mm = add(t, g, "aten.matmul.default", two, {s[0], s[1]});
      NodeAttrs times;
      times.args = {Value::of_node(0), a.args[1]};
      return add(t, g, "aten.mul.Tensor", times, {add(t, g, "aten.mul.Tensor", times, {mm})});
    }
    return kNoId;
  });
  INFO(r.shape << (r.failures.empty() ? "" : "\n" + r.failures[0]));
  CHECK_FALSE(r.ok());
  REQUIRE_FALSE(r.failures.empty());
  CHECK(r.failures[0].find("values differ") != std::string::npos);
}

TEST_CASE("index proof: a transpose is not a reshape, with a counterexample", "[check]") {
  GraphBuilder a("a"), b("b");
  const SymExpr m = a.symbol(2, 3), n = a.symbol(2, 5);
  b.symbol(2, 3);
  b.symbol(2, 5);
  const NodeId xa = a.input({m, n}), xb = b.input({m, n});
  const Graph lhs = a.finish({a.op("aten.permute.default", {GraphBuilder::ref(xa), GraphBuilder::ints({1, 0})})});
  const Graph rhs = b.finish({b.op("aten.view.default", {GraphBuilder::ref(xb), GraphBuilder::sizes({n, m})})});
  const IndexProof p = prove_same_indices(lhs, rhs);
  CHECK(p.status == IndexProof::Status::Refuted);
  CHECK(p.detail.find("at output index") != std::string::npos);
  // And a permute equals itself written as a transpose, at symbolic sizes.
  GraphBuilder c("c");
  c.symbol(2, 3);
  c.symbol(2, 5);
  const NodeId xc = c.input({m, n});
  const Graph same = c.finish({c.op("aten.transpose.int", {GraphBuilder::ref(xc), Value::of_int(0), Value::of_int(1)})});
  CHECK(prove_same_indices(lhs, same).status == IndexProof::Status::Proved);
}
