// Every shipped rewrite, each set at its most permissive options (dropout
// fusion on, training attention with a bias): what check-rules checks and
// what `--without-rule` may name. The optimizer itself picks sets per graph
// (pipeline/rule_selection.h).
#pragma once

#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "tensor/tensor_egraph.h"

namespace sator::rules {

std::vector<eg::Rewrite> all_shipped_rules(TensorEGraph& t);

// Their names, each once (a rule may be several rewrites).
const std::vector<std::string>& shipped_rule_names();
bool is_shipped_rule(const std::string& name);

}  // namespace sator::rules
