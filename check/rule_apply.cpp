#include "check/rule_apply.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "egraph/runner.h"
#include "egraph/extraction.h"
#include "ir/infer_context.h"

namespace sator::check {

Application apply_once(const Graph& lhs, const RuleFactory& rules, const std::string& rule_name, size_t rewritten) {
  Application a;
  TensorEGraph t(lhs);
  std::vector<eg::Rewrite> all = rules(t);
  std::vector<eg::Rewrite> one;
  for (eg::Rewrite& r : all)
    if (r.name() == rule_name) one.push_back(std::move(r));
  // (One rule may be several rewrites: attention's, one per softmax op.)
  if (one.empty()) throw std::logic_error("check-rules: the rule set has no rule named '" + rule_name + "'");

  std::vector<eg::Id> roots;  // the original nodes of the outputs the rule must rewrite
  for (size_t k = 0; k < rewritten; ++k) roots.push_back(t.node_of(lhs.nodes.back().args.at(0).list.at(k).node));
  try {
    eg::Runner runner;
    runner.with_iter_limit(1).with_node_limit(100000).with_time_limit(30);
    runner.run(t.egraph, one);
  } catch (const UnsoundMerge& e) {
    a.outcome = Application::Outcome::Unsound;
    a.message = e.what();
    return a;
  } catch (const ShapeError& e) {
    // The rule built a node whose arguments do not fit (a view to a shape of
    // another size): unsound, and reported as such rather than as a crash.
    a.outcome = Application::Outcome::Unsound;
    a.message = std::string("the rule built an ill-typed node: ") + e.what();
    return a;
  }
  constexpr double kForbidden = std::numeric_limits<double>::infinity();
  const auto x = eg::greedy_extract(t.egraph, [&](eg::Id n) {
    if (std::find(roots.begin(), roots.end(), n) != roots.end()) return kForbidden;
    if (!t.is_original(n)) return 1.0;
    const std::string& op = t.lang.op_name(t.egraph.op(n));
    return op == "placeholder" || op == "get_attr" ? 0.0 : 10.0;
  });
  for (size_t k = 0; k < rewritten; ++k) {
    const eg::Id out = t.egraph.find(*t.outputs().at(k));
    if (!x.has(out) || x.cost[out] == kForbidden) {
      if (t.egraph.class_nodes(out).size() > 1) {
        a.outcome = Application::Outcome::Cyclic;
        a.message = "the right-hand side contains the left-hand side itself (a cycle): it cannot be evaluated";
      }
      return a;  // else the rule did not rewrite this root
    }
  }
  a.outcome = Application::Outcome::Rewritten;
  a.rhs = t.write(x);
  return a;
}

}  // namespace sator::check
