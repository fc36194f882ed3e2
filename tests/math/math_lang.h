// egg's math test language (egg/tests/math.rs), ported as a test language for
// sator's engine: the operators, the constant-folding analysis with pruning,
// the four rule conditions and the 36 active rules.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "egraph/analysis.h"
#include "egraph/egraph.h"
#include "egraph/language.h"
#include "egraph/rewrite.h"

namespace sator::math {

using eg::Id;

class MathLanguage : public eg::Language {
 public:
  MathLanguage();
  std::optional<eg::Term> parse_token(std::string_view token, size_t arity) override;
  std::string format_node(eg::OpId op, eg::AttrId attr) const override;

  eg::AttrId number(double v);           // the attribute of a numeric literal
  double value(eg::AttrId attr) const;   // its value
  bool is_leaf(eg::OpId op) const { return op == num || op == sym; }

  eg::OpId d, i, add, sub, mul, div, pow, ln, sqrt, sin, cos, num, sym;
};

// The constant and the pattern it came from, as egg's ConstantFold keeps
// (Option<(Constant, PatternAst)>): `op` is kNoId for a literal.
struct Constant {
  bool known = false;
  eg::OpId op = eg::kNoId;
  double value = 0;
  double lhs = 0, rhs = 0;
};

class ConstantFold : public eg::TypedAnalysis<Constant> {
 public:
  explicit ConstantFold(MathLanguage& lang) : lang_(lang) {}
  Constant make_data(const eg::EGraph& g, Id node) override;
  eg::DidMerge merge_data(Constant& into, Constant from) override;
  void modify(eg::EGraph& g, Id id) override;
  // For check_invariants: the class's constant agrees with every node.
  std::string check(const eg::EGraph& g, Id cls);

 private:
  MathLanguage& lang_;
};

// The rules of math.rs, in its order. Conditions read `fold`'s data.
std::vector<eg::Rewrite> rules(MathLanguage& lang, ConstantFold& fold);

// Adds a ground term written as an s-expression; returns its id (uncanonical
// when explanations are on, so proofs can start from it).
Id add_expr(eg::EGraph& g, MathLanguage& lang, std::string_view text);

}  // namespace sator::math
