// Explanations: the chain of rewrites between two equal terms, checked step
// by step like egg's check_proof — every step must be its rule applied at one
// position (either direction), or a constant fold.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "egraph/explain.h"
#include "math_harness.h"

using namespace sator;
using namespace sator::math;

namespace {

struct Tree {
  std::string head;
  std::vector<Tree> kids;
  bool operator==(const Tree&) const = default;
};

Tree parse_tree(std::string_view s, size_t& pos) {
  while (s[pos] == ' ') ++pos;
  Tree t;
  if (s[pos] != '(') {
    const size_t start = pos;
    while (pos < s.size() && s[pos] != ' ' && s[pos] != ')') ++pos;
    t.head = std::string(s.substr(start, pos - start));
    return t;
  }
  ++pos;
  const size_t start = pos;
  while (s[pos] != ' ' && s[pos] != ')') ++pos;
  t.head = std::string(s.substr(start, pos - start));
  while (true) {
    while (s[pos] == ' ') ++pos;
    if (s[pos] == ')') {
      ++pos;
      return t;
    }
    t.kids.push_back(parse_tree(s, pos));
  }
}

Tree parse_tree(std::string_view s) {
  size_t pos = 0;
  return parse_tree(s, pos);
}

// Matches pattern node `pn` against tree `t`, binding variables.
bool match(const eg::Pattern& p, uint32_t pn, const Tree& t, const MathLanguage& lang, std::map<uint32_t, Tree>& b) {
  const eg::PatternNode& n = p.nodes()[pn];
  if (n.is_var) {
    auto [it, fresh] = b.emplace(n.var, t);
    return fresh || it->second == t;
  }
  if (lang.format_node(n.term.op, n.term.attr) != t.head || n.children.size() != t.kids.size()) return false;
  for (size_t i = 0; i < n.children.size(); ++i)
    if (!match(p, n.children[i], t.kids[i], lang, b)) return false;
  return true;
}

Tree build(const eg::Pattern& p, uint32_t pn, const MathLanguage& lang, const std::map<uint32_t, Tree>& b) {
  const eg::PatternNode& n = p.nodes()[pn];
  if (n.is_var) return b.at(n.var);
  Tree t{lang.format_node(n.term.op, n.term.attr), {}};
  for (uint32_t c : n.children) t.kids.push_back(build(p, c, lang, b));
  return t;
}

bool is_number(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && *end == '\0';
}

// `from` -> `to` by rule `rw` (left to right) or constant folding, at the root.
bool root_step(const Tree& from, const Tree& to, const eg::Rewrite* rw, const MathLanguage& lang) {
  if (!rw) {  // constant_fold: (op a b) with numeric a, b becomes its value
    double a, b, v;
    if (from.kids.size() != 2 || !is_number(to.head, v) || !is_number(from.kids[0].head, a) ||
        !is_number(from.kids[1].head, b))
      return false;
    const double r = from.head == "+" ? a + b : from.head == "-" ? a - b : from.head == "*" ? a * b : a / b;
    return r == v;
  }
  std::map<uint32_t, Tree> b;
  return match(rw->searcher().front(), rw->searcher().front().root(), from, lang, b) &&
         build(*rw->applier(), rw->applier()->root(), lang, b) == to;
}

// One step: the trees differ at exactly one position, where the rule applies.
bool valid_step(const Tree& x, const Tree& y, const eg::Rewrite* rw, bool forward, const MathLanguage& lang) {
  if (forward ? root_step(x, y, rw, lang) : root_step(y, x, rw, lang)) return true;
  if (x.head != y.head || x.kids.size() != y.kids.size()) return false;
  int differing = -1;
  for (size_t i = 0; i < x.kids.size(); ++i)
    if (!(x.kids[i] == y.kids[i])) {
      if (differing >= 0) return false;
      differing = static_cast<int>(i);
    }
  return differing >= 0 && valid_step(x.kids[differing], y.kids[differing], rw, forward, lang);
}

void check_proof(const std::vector<eg::Explain::Step>& steps, const std::vector<eg::Rewrite>& rules,
                 const MathLanguage& lang) {
  for (size_t i = 1; i < steps.size(); ++i) {
    INFO("step " << i << ": " << steps[i - 1].term << " -> " << steps[i].term << " by " << steps[i].rule);
    const eg::Rewrite* rw = nullptr;
    for (const auto& r : rules)
      if (r.name() == steps[i].rule) rw = &r;
    REQUIRE((rw || steps[i].rule == "constant_fold"));
    CHECK(valid_step(parse_tree(steps[i - 1].term), parse_tree(steps[i].term), rw, steps[i].forward, lang));
  }
}

}  // namespace

TEST_CASE("explanations: every step of the proof is a rule application", "[explain]") {
  struct Proof {
    const char* start;
    const char* goal;
  };
  for (const Proof& pr : {Proof{"(+ x (+ x (+ x x)))", "(* 4 x)"}, Proof{"(d x (+ 1 (* 2 x)))", "2"},
                          Proof{"(* (pow 2 x) (pow 2 y))", "(pow 2 (+ x y))"}, Proof{"(i (cos x) x)", "(sin x)"}}) {
    INFO(pr.start << " = " << pr.goal);
    MathRun r;
    r.g.enable_explanations();
    const auto rules = math::rules(r.lang, r.fold);
    r.run(rules, pr.start, {pr.goal});
    REQUIRE(r.missing({pr.goal}).empty());
    const Id start = r.root;
    const Id goal = add_expr(r.g, r.lang, pr.goal);
    r.g.rebuild();
    REQUIRE(r.g.find(start) == r.g.find(goal));
    const auto steps = r.g.explain()->explain_equivalence(start, goal, r.lang);
    REQUIRE(steps.size() >= 2);
    CHECK(steps.front().term == pr.start);
    CHECK(steps.back().term == pr.goal);
    check_proof(steps, rules, r.lang);
    CHECK(r.g.check_invariants().empty());
  }
}

TEST_CASE("explanations refuse terms that are not equal", "[explain]") {
  MathRun r;
  r.g.enable_explanations();
  const Id a = add_expr(r.g, r.lang, "(+ x 1)");
  const Id b = add_expr(r.g, r.lang, "(+ x 2)");
  r.g.rebuild();
  CHECK_THROWS_AS(r.g.explain()->explain_equivalence(a, b, r.lang), std::invalid_argument);
  CHECK(r.g.explain()->explain_equivalence(a, a, r.lang).size() == 1);
}
