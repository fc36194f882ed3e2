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
  std::vector<std::string> texts;  // each file's text as read, compiled and checked
  bool only = false;
};
// Reads the files, compiles them and, unless --unchecked, makes sure each
// rule passes check-rules (a proof cache keeps the second run cheap).
// Throws RuleError (exit 2) naming the file, line and column.
UserRules load_user_rules(const UserRuleOptions& o);

// The checked rules for batch's worker processes: the texts the parent read
// and checked, written to a folder of its own (0700, made by mkdtemp and
// removed with this object), never the user's paths, which could be
// replaced once checked; the workers get them with --unchecked.
class WorkerRuleFiles {
 public:
  explicit WorkerRuleFiles(const UserRules& checked);
  WorkerRuleFiles(const WorkerRuleFiles&) = delete;
  ~WorkerRuleFiles();
  const std::vector<std::string>& args() const { return args_; }

 private:
  std::string dir_;
  std::vector<std::string> args_;
};

}  // namespace sator::cli
