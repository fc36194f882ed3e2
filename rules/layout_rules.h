// Layout identities: by value every layout op is an index remapping, so
// chains of them collapse and identities disappear. Every condition on sizes
// is decided by the ShapeProver; "unknown" means the rule does not fire.
#pragma once

#include <vector>

#include "egraph/rewrite.h"
#include "tensor/tensor_egraph.h"

namespace sator::rules {

// The rules, each with a one-line description (for reports and check-rules).
struct RuleInfo {
  const char* name;
  const char* description;
};
const std::vector<RuleInfo>& layout_rule_info();

std::vector<eg::Rewrite> layout_rules(TensorEGraph& t);

}  // namespace sator::rules
