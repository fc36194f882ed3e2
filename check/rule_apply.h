// Applies one rule, once, to one instance of its left-hand side and reads
// back what the rule claims is equal: the right-hand side.
#pragma once

#include <optional>
#include <string>

#include "check/rule_case.h"

namespace sator::check {

struct Application {
  // Cyclic: the rule added nothing to the root's class but terms that are
  // the root itself. (A right-hand side holding the left-hand side as an
  // inner term, x = f(x), is Rewritten: f applied to the original x.)
  enum class Outcome : uint8_t { Rewritten, NotFired, Unsound, Cyclic } outcome = Outcome::NotFired;
  Graph rhs;            // Rewritten: the instance with the root's class read through the rule's result
  std::string message;  // Unsound: why (a merge of classes of provably different types)
};

// `lhs`'s first `rewritten` outputs are the nodes the rule must rewrite (one,
// or a multi-pattern's roots). One iteration of the rule alone runs on the
// e-graph; the outputs are then extracted with those original nodes forbidden
// (and every new node preferred over an original one), so the extraction is
// the rule's right-hand side.
Application apply_once(const Graph& lhs, const RuleFactory& rules, const std::string& rule_name, size_t rewritten = 1);

}  // namespace sator::check
