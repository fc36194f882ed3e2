// egg's tests/math.rs, ported: the 20 test_fn cases and assoc_mul_saturates,
// with the same rules, analysis, runner settings and goals. After every run
// the e-graph's invariants (and the constant-folding analysis) are checked.
#include <catch2/catch.hpp>

#include "math_harness.h"

using namespace sator;
using namespace sator::math;

namespace {

struct Case {
  const char* name;
  const char* start;
  std::vector<std::string> goals;
  std::function<void(eg::Runner&)> configure = {};
  std::vector<std::string> extra = {};
};

void check_invariants(MathRun& r) {
  const std::string why = r.g.check_invariants([&](const eg::EGraph& g, Id c) { return r.fold.check(g, c); });
  INFO(why);
  CHECK(why.empty());
}

// A hook that checks the invariants before every iteration, i.e. after every
// rebuild (and stops the run with the failure, if any).
void check_every_rebuild(MathRun& r) {
  r.runner.with_hook([&r](const eg::Runner&, const eg::EGraph& g) -> std::optional<std::string> {
    std::string why = g.check_invariants([&r](const eg::EGraph& gg, Id c) { return r.fold.check(gg, c); });
    if (why.empty()) return std::nullopt;
    return "invariant broken: " + why;
  });
}

void prove(const Case& c) {
  INFO(c.name);
  MathRun r;
  if (c.configure) c.configure(r.runner);
  check_every_rebuild(r);
  const auto rules = math::rules(r.lang, r.fold);
  REQUIRE(rules.size() == 36);
  r.run(rules, c.start, c.goals, true, c.extra);
  INFO(r.runner.report(r.g));
  CHECK(r.missing(c.goals).empty());
  CHECK(r.runner.stop_reason() == eg::StopReason::Other);  // stopped by the goal hook
  CHECK(r.runner.stop_message() == "Done");              // not by a broken invariant
  check_invariants(r);
}

}  // namespace

TEST_CASE("math: egg's test_fn cases reach their goals", "[math]") {
  const std::vector<Case> cases = {
      {"math_simplify_add", "(+ x (+ x (+ x x)))", {"(* 4 x)"}},
      {"math_powers", "(* (pow 2 x) (pow 2 y))", {"(pow 2 (+ x y))"}},
      {"math_simplify_const", "(+ 1 (- a (* (- 2 1) a)))", {"1"}},
      {"math_simplify_root", "(/ 1 (- (/ (+ 1 (sqrt five)) 2) (/ (- 1 (sqrt five)) 2)))", {"(/ 1 (sqrt five))"},
       [](eg::Runner& r) { r.with_node_limit(75000); }},
      {"math_simplify_factor", "(* (+ x 3) (+ x 1))", {"(+ (+ (* x x) (* 4 x)) 3)"}},
      {"math_diff_same", "(d x x)", {"1"}},
      {"math_diff_different", "(d x y)", {"0"}},
      {"math_diff_simple1", "(d x (+ 1 (* 2 x)))", {"2"}},
      {"math_diff_simple2", "(d x (+ 1 (* y x)))", {"y"}},
      {"math_diff_ln", "(d x (ln x))", {"(/ 1 x)"}},
      {"diff_power_simple", "(d x (pow x 3))", {"(* 3 (pow x 2))"}},
      {"diff_power_harder", "(d x (- (pow x 3) (* 7 (pow x 2))))", {"(* x (- (* 3 x) 14))"},
       [](eg::Runner& r) { r.with_time_limit(10).with_iter_limit(60).with_node_limit(100000); },
       {"(* x (- (* 3 x) 14))"}},
      {"integ_one", "(i 1 x)", {"x"}},
      {"integ_sin", "(i (cos x) x)", {"(sin x)"}},
      {"integ_x", "(i (pow x 1) x)", {"(/ (pow x 2) 2)"}},
      {"integ_part1", "(i (* x (cos x)) x)", {"(+ (* x (sin x)) (cos x))"}},
      {"integ_part2", "(i (* (cos x) x) x)", {"(+ (* x (sin x)) (cos x))"}},
      {"integ_part3", "(i (ln x) x)", {"(- (* x (ln x)) x)"}},
  };
  for (const Case& c : cases) prove(c);
}

TEST_CASE("math_associate_adds: 7 iterations of comm/assoc give 127 classes", "[math]") {
  MathRun r;
  std::vector<eg::Rewrite> rules;
  rules.emplace_back("comm-add", r.lang, "(+ ?a ?b)", "(+ ?b ?a)");
  rules.emplace_back("assoc-add", r.lang, "(+ ?a (+ ?b ?c))", "(+ (+ ?a ?b) ?c)");
  // egg runs this one with the unit analysis (no constant folding).
  eg::EGraph plain;
  r.runner.with_iter_limit(7).with_scheduler(std::make_unique<eg::SimpleScheduler>());
  const Id root = add_expr(plain, r.lang, "(+ 1 (+ 2 (+ 3 (+ 4 (+ 5 (+ 6 7))))))");
  r.runner.run(plain, rules);
  CHECK(r.runner.stop_reason() == eg::StopReason::IterationLimit);
  CHECK(plain.num_classes() == 127);
  std::vector<std::string> vars;
  eg::Pattern goal = eg::Pattern::parse("(+ 7 (+ 6 (+ 5 (+ 4 (+ 3 (+ 2 1))))))", r.lang, vars);
  eg::Matches m;
  eg::Program::compile({&goal}, 0).search_class(plain, root, m);
  CHECK(m.size() == 1);
  CHECK(plain.check_invariants().empty());
}

TEST_CASE("math_fail: (+ x y) is not (/ x y)", "[math]") {
  MathRun r;
  const auto rules = math::rules(r.lang, r.fold);
  r.run(rules, "(+ x y)", {"(/ x y)"});
  CHECK(r.missing({"(/ x y)"}).size() == 1);  // egg: "Could not prove goal 0"
  CHECK(r.runner.stop_reason() != eg::StopReason::Other);
  check_invariants(r);
}

TEST_CASE("assoc_mul_saturates", "[math]") {
  MathRun r;
  r.runner.with_iter_limit(3);
  const auto rules = math::rules(r.lang, r.fold);
  add_expr(r.g, r.lang, "(* x 1)");
  CHECK(r.runner.run(r.g, rules) == eg::StopReason::Saturated);
  check_invariants(r);
}

TEST_CASE("the backoff scheduler bans explosive rules and unbans them before stopping", "[math][runner]") {
  MathRun r;
  // A fixed limit (egg's: no share per node), so that a rule matching every
  // class counts as explosive here.
  auto backoff = std::make_unique<eg::BackoffScheduler>(/*match_limit=*/8, /*ban_length=*/2, /*matches_per_node=*/0.0);
  eg::BackoffScheduler* sched = backoff.get();
  r.runner.with_scheduler(std::move(backoff)).with_iter_limit(12).with_node_limit(50000);
  const auto rules = math::rules(r.lang, r.fold);
  add_expr(r.g, r.lang, "(+ p (+ q (+ r (+ s t))))");
  r.runner.run(r.g, rules);
  // add-zero ("?a") matches every class: more than 8 from the first iteration.
  size_t add_zero = 0;
  while (rules[add_zero].name() != "add-zero") ++add_zero;
  CHECK(sched->times_banned(add_zero) >= 1);
  // While banned it found no matches to apply: some iteration saw fewer matches
  // than there were classes, though add-zero alone would match them all.
  bool skipped = false;
  for (const eg::Iteration& it : r.runner.iterations()) skipped |= it.matches < it.classes;
  CHECK(skipped);
  CHECK(r.g.check_invariants().empty());

  // With the simple scheduler nothing is banned: every class matches add-zero.
  MathRun s;
  s.runner.with_scheduler(std::make_unique<eg::SimpleScheduler>()).with_iter_limit(2);
  add_expr(s.g, s.lang, "(+ p (+ q (+ r (+ s t))))");
  s.runner.run(s.g, math::rules(s.lang, s.fold));
  for (const eg::Iteration& it : s.runner.iterations()) CHECK(it.matches >= 2 * it.classes);
}

TEST_CASE("runner limits stop the run with the right reason", "[math][runner]") {
  {
    MathRun r;
    r.runner.with_node_limit(300);
    r.run(math::rules(r.lang, r.fold), "(i (* (cos x) x) x)", {"nothing-like-this"}, false);
    CHECK(r.runner.stop_reason() == eg::StopReason::NodeLimit);
  }
  {
    MathRun r;
    r.runner.with_iter_limit(2);
    r.run(math::rules(r.lang, r.fold), "(i (* (cos x) x) x)", {}, false);
    CHECK(r.runner.stop_reason() == eg::StopReason::IterationLimit);
    CHECK(r.runner.iterations().size() == 2);
  }
  {
    MathRun r;
    r.runner.with_time_limit(0.0);
    r.run(math::rules(r.lang, r.fold), "(i (* (cos x) x) x)", {}, false);
    CHECK(r.runner.stop_reason() == eg::StopReason::TimeLimit);
  }
}
