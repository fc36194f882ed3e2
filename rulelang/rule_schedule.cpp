// When a compiled rule's lets and conditions run (CompiledRule::checks_at).
#include <algorithm>

#include "rulelang/compiled_rule.h"

namespace sator::rulelang {

namespace {

// Variables an expression reads.
void reads(const Expr& e, uint64_t& vars) {
  if ((e.kind == Expr::Kind::Var || e.kind == Expr::Kind::Like) && e.var >= 0) vars |= uint64_t{1} << e.var;
  for (const Expr& a : e.args) reads(a, vars);
}

}  // namespace

// Where each let and condition runs (CompiledRule::checks_at): the first
// point at which every variable it reads is bound. The matcher binds the
// pattern's tensor variables before point 0; step i binds its node's name,
// its attribute variables and a family's inputs, by point i + 1.
void schedule_checks(CompiledRule& r) {
  std::vector<size_t> ready(r.vars.size(), 0);
  std::vector<bool> seen(r.vars.size(), false);
  for (size_t v = 0; v < r.vars.size(); ++v) seen[v] = r.vars[v].in_pattern;
  const auto bind = [&](int v, size_t point) {
    if (v < 0 || seen[static_cast<size_t>(v)]) return;
    seen[static_cast<size_t>(v)] = true;
    ready[static_cast<size_t>(v)] = point;
  };
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const PatternNode& n = r.pattern[static_cast<size_t>(r.steps[i].node)];
    bind(n.var, i + 1);
    for (const PatternArg& a : n.args) {
      if (a.kind == PatternArg::Kind::Var) bind(a.var, i + 1);
      if (n.family && a.kind == PatternArg::Kind::Child) bind(r.pattern[static_cast<size_t>(a.child)].var, i + 1);
    }
  }
  // Anything not placed above (a variable only the checks bind) waits
  // for the complete binding.
  for (size_t v = 0; v < r.vars.size(); ++v)
    if (!seen[v]) ready[v] = r.steps.size();
  const auto point_of = [&](const Expr& e) {
    uint64_t vars = 0;
    reads(e, vars);
    size_t p = 0;
    for (size_t v = 0; v < r.vars.size(); ++v)
      if ((vars >> v) & 1) p = std::max(p, ready[v]);
    return p;
  };
  r.checks_at.assign(r.steps.size() + 1, {});
  for (size_t k = 0; k < r.lets.size(); ++k) {
    const size_t p = point_of(r.lets[k].second);
    ready[static_cast<size_t>(r.lets[k].first)] = p;
    r.checks_at[p].push_back({true, k});
  }
  for (size_t k = 0; k < r.conditions.size(); ++k) r.checks_at[point_of(r.conditions[k])].push_back({false, k});
}

}  // namespace sator::rulelang
