// The instance generators of every rule sator ships, and the rule set they
// check. A shipped rule without a generator is reported, not skipped.
#pragma once

#include <string>
#include <vector>

#include "check/rule_case.h"

namespace sator::check {

std::vector<RuleCase> layout_cases();     // cases_layout.cpp
std::vector<RuleCase> recompose_cases();  // cases_attention.cpp
std::vector<RuleCase> attention_cases();  // cases_attention.cpp
std::vector<RuleCase> mask_algebra_cases();  // cases_masks.cpp
std::vector<RuleCase> sdpa_call_cases();     // cases_sdpa.cpp

// Every rule `sator optimize` can apply (attention-dropout included).
RuleFactory shipped_rules();
std::vector<RuleCase> shipped_cases();
// Names of rules in `rules` that no case in `cases` covers.
std::vector<std::string> uncovered_rules(const RuleFactory& rules, const std::vector<RuleCase>& cases);

}  // namespace sator::check
