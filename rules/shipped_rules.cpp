#include "rules/shipped_rules.h"

#include <algorithm>

#include "ir/graph_builder.h"

#include "rules/attention_rules.h"
#include "rules/attention_train_rules.h"
#include "rules/key_gradient_sum.h"
#include "rules/layout_rules.h"
#include "rules/mask_algebra.h"
#include "rules/mixed_precision.h"
#include "rules/sdpa_calls.h"

namespace sator::rules {

std::vector<eg::Rewrite> all_shipped_rules(TensorEGraph& t) {
  std::vector<eg::Rewrite> rs = layout_rules(t);
  const auto append = [&](std::vector<eg::Rewrite> more) {
    for (eg::Rewrite& r : more) rs.push_back(std::move(r));
  };
  append(recompose_rules(t));
  append(attention_rules(t, /*fuse_dropout=*/true));
  append(attention_train_rules(t, /*fuse_dropout=*/true, TrainingBias::Always));
  append(key_gradient_rules(t));
  append(mixed_precision_rules(t));
  append(mask_algebra_rules(t));
  append(sdpa_call_rules(t, /*fuse_dropout=*/true));
  return rs;
}

const std::vector<std::string>& shipped_rule_names() {
  static const std::vector<std::string> names = [] {
    GraphBuilder b("rule names");
    const Graph g = b.finish({b.input({1})});
    TensorEGraph t(g);
    std::vector<std::string> out;
    for (const eg::Rewrite& r : all_shipped_rules(t))
      if (std::find(out.begin(), out.end(), r.name()) == out.end()) out.push_back(r.name());
    return out;
  }();
  return names;
}

bool is_shipped_rule(const std::string& name) {
  const auto& names = shipped_rule_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace sator::rules
