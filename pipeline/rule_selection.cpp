#include "pipeline/rule_selection.h"

#include <algorithm>
#include <stdexcept>


#include "rulelang/rule_set.h"
#include "rules/attention_rules.h"
#include "rules/attention_train_rules.h"
#include "rules/key_gradient_sum.h"
#include "rules/layout_rules.h"
#include "rules/mask_algebra.h"
#include "rules/mixed_precision.h"
#include "rules/sdpa_calls.h"
#include "rules/shipped_rules.h"

namespace sator::pipeline {

bool is_training_graph(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.op == "placeholder" && n.role == Role::Tangent) return true;
  return false;
}

std::vector<eg::Rewrite> rules_for(const Graph& input, TensorEGraph& t, const OptimizeOptions& options) {
  for (const std::string& name : options.without_rules)
    if (!rules::is_shipped_rule(name))
      throw std::invalid_argument("--without-rule: no shipped rule is named '" + name +
                                  "' (`sator check-rules --list` lists them)");
  std::vector<eg::Rewrite> out;
  const auto append = [&](std::vector<eg::Rewrite> rs) {
    for (eg::Rewrite& r : rs)
      if (std::find(options.without_rules.begin(), options.without_rules.end(), r.name()) == options.without_rules.end())
        out.push_back(std::move(r));
  };
  if (!options.rules_only) {
    append(rules::layout_rules(t));
    append(rules::recompose_rules(t));
    // Training graphs fuse attention's forward and backward together: the
    // forward alone would keep the scores alive for the backward and save
    // nothing.
    const bool training = is_training_graph(input);
    if (!training) {
      append(rules::attention_rules(t, options.fuse_dropout));
    } else if (options.training_attention) {
      append(rules::attention_train_rules(t, options.fuse_dropout,
                                          options.training_attention_bias ? rules::TrainingBias::Always
                                                                          : rules::TrainingBias::WhereCudnn));
      // Once fused, a key bias's gradient (dK summed over the keys) is zero.
      append(rules::key_gradient_rules(t));
    }
    if (!training || options.training_attention) {
      // The input's own SDPA calls read as attention blocks: their masks
      // read, their kernels chosen by the measured table.
      append(rules::sdpa_call_rules(t, options.fuse_dropout));
      // Masks and casts written the ways models write them, seen through.
      append(rules::mask_algebra_rules(t));
      if (options.mixed_precision_attention) append(rules::mixed_precision_rules(t));
    }
  }
  for (eg::Rewrite& r : rulelang::make_rewrites(options.user_rules, t)) out.push_back(std::move(r));
  return out;
}

}  // namespace sator::pipeline
