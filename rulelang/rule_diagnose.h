// Where a rule could match in an e-graph, and why it does not fire there
// (`sator check-rules --rules FILE --rule NAME --graph G.json`): every e-node
// of the rule's root op is a place it could match; at each, the first part
// of the pattern the e-graph does not hold (which argument, which op, which
// attribute, where the file writes it) or, for a whole match, the first
// condition that fails.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "rulelang/compiled_rule.h"

namespace sator::rulelang {

struct RulePlace {
  eg::Id node = eg::kNoId;  // the e-node the rule's root pattern could match
  bool fires = false;
  std::string why;  // when it does not fire
};

// Every place in `t`'s e-graph (as it stands: saturate it first to see what
// `optimize` would) where `rule`'s first pattern's root op occurs, at most
// `limit` of them (the count of all in *places_total).
std::vector<RulePlace> rule_places(const std::shared_ptr<CompiledRule>& rule, TensorEGraph& t, size_t limit,
                                   size_t* places_total);

}  // namespace sator::rulelang
