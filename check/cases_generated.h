// Instance generators made from a rule file's left-hand sides, for the rules
// a user writes (`check-rules --rules FILE`): each pattern is built bottom up
// at a rank, its tensor variables as inputs of that rank, its attribute
// variables and `_`s drawn by their schema parameter (a permutation for
// `dims`, a regrouping of the input's shape for a view's `size`, a dim in
// range for `dim`, ...). Draws that do not type-check are redrawn by the
// checker; a rule whose condition a draw does not meet simply does not fire
// on it.
#pragma once

#include <string>
#include <vector>

#include "check/rule_case.h"
#include "rulelang/rule_set.h"

namespace sator::check {

std::vector<RuleCase> generated_cases(const std::vector<rulelang::RuleFile>& files);
RuleFactory file_rules(const std::vector<rulelang::RuleFile>& files);
// The files' rule named `name` alone (either direction of a `<=>` rule):
// what checking one rule builds for each of its instances, so that checking
// every rule of a file grows with the file, not with its square.
RuleFactory file_rule(const std::vector<rulelang::RuleFile>& files, const std::string& name);

}  // namespace sator::check
