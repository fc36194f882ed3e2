// `--rules FILE...`, `--rules-only FILE...` and `--unchecked`, shared by
// optimize, greedy, compare and batch: a user's rule files, read, compiled
// and (unless --unchecked) passed by check-rules before anything runs.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "rulelang/rule_set.h"

namespace sator::cli {

struct UserRuleOptions {
  std::vector<std::string> rules;       // added to the shipped rules
  std::vector<std::string> rules_only;  // in place of the shipped rules
  bool unchecked = false;
};

void add_user_rule_options(CLI::App* cmd, UserRuleOptions& o);

struct UserRules {
  std::vector<rulelang::RuleFile> files;
  bool only = false;
};
// Reads the files, compiles them and, unless --unchecked, makes sure each
// rule passes check-rules (a proof cache keeps the second run cheap).
// Throws RuleError (exit 2) naming the file, line and column.
UserRules load_user_rules(const UserRuleOptions& o);

// The same options as arguments (for batch's worker processes, which get
// --unchecked: the parent has checked the rules).
std::vector<std::string> user_rule_args(const UserRuleOptions& o);

}  // namespace sator::cli
