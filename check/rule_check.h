// check-rules for one rule: Z3 shape proof, Z3 index proof (layout rules)
// and differential tests in the float64 reference interpreter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check/rule_case.h"

namespace sator::check {

struct CheckOptions {
  size_t trials = 200;            // differential instances where the rule fired
  size_t symbolic_per_rank = 4;   // symbolic instances per rank for the proofs
  size_t concrete_index_proofs = 25;  // concrete instances whose index maps Z3 checks too
  uint64_t seed = 1;
  double tolerance = 1e-9;
};

// The most two sides of a rule may differ by at the graph's own dtypes, in
// units in the last place of the output's dtype, without saying why
// (RuleCase::approx): one rounding in place of two is 1; a softmax
// recomposed 3 (measured on the shipped rules).
constexpr double kMaxUlpUnexplained = 4;

struct RuleReport {
  std::string name;
  // Shape proof: symbolic instances per rank, how many the rule rewrote and
  // all proved; a failure names the instance and a counterexample.
  bool shape_ok = false;
  std::string shape;  // e.g. "proved, ranks 1-6 (24 instances)"
  // Index proof (layout rules only): "proved", "proved at concrete sizes (..)", "n/a".
  bool index_ok = true;
  std::string index;
  size_t trials = 0;     // differential instances compared
  size_t attempts = 0;   // instances drawn (the rule need not fire on all)
  double max_error = 0;  // worst relative error over the trials
  // The same trials at the instances' own dtypes (each op's result rounded
  // to its dtype): the worst difference in units in the last place of the
  // output's dtype; 0: bit-identical on every trial (the rule is exact).
  double max_ulp = 0;
  std::string approx;  // RuleCase::approx: why a larger difference is accepted
  // "exact", "1 ulp" (within a rounding) or "approx 313 ulp".
  std::string at_dtypes() const;
  double seconds = 0;
  std::vector<std::string> failures;
  bool ok() const { return shape_ok && index_ok && failures.empty(); }
};

RuleReport check_rule(const RuleCase& c, const RuleFactory& rules, const CheckOptions& options);

// A compact text of a small graph, one node per line (for failure messages).
std::string describe(const Graph& g);

}  // namespace sator::check
