// A rule file read into entries, before any op or type is looked at.
//
//   # a comment
//   (define (same-shape ?a ?b) (= (shape ?a) (shape ?b)))     a helper
//   view-identity: ?out=(view ?x _) => ?x                       a rule
//     if (same-shape ?x ?out)
//     doc "view(x, s) = x when s is x's shape"
//
// An entry starts at `NAME:` and runs to the next; after the two sides come
// its clauses in any order: `if COND` (all must hold), `let ?v EXPR` (a
// name for a value, in order) and `doc "TEXT"`. `<=>` makes a rule that
// also runs right to left (its second direction is named NAME-reverse).
// A multi-pattern has several named patterns on the left, joined on the
// variables they share, and rewrites their roots on the right:
//   NAME: ?a=(P1) ?b=(P2) => ?b=EXPR

// docs/rule-language.md is the full description.
#pragma once

#include <string>
#include <vector>

#include "rulelang/sexpr.h"

namespace sator::rulelang {

struct RuleSpec {
  std::string name;
  Where at;
  std::vector<SExpr> lhs, rhs;  // one pattern and one expression, or a multi-pattern's
  bool both_ways = false;
  std::vector<std::pair<SExpr, SExpr>> lets;  // (?v, EXPR)
  std::vector<SExpr> conditions;
  std::string doc;
  // `approx "why"`: the two sides may differ at the graph's own dtypes by
  // more than a rounding, and why that is accepted (check-rules says so).
  std::string approx;
  std::string text;  // its meaning in one line, helpers expanded (the proof cache's key)
};

// Parses a file's entries, with helpers expanded in place. Throws RuleError.
std::vector<RuleSpec> parse_rule_file(std::string_view text, const std::string& file);

}  // namespace sator::rulelang
