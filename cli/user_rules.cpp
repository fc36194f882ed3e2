#include "cli/user_rules.h"

#include <iostream>

#include "check/proof_cache.h"

namespace sator::cli {

void add_user_rule_options(CLI::App* cmd, UserRuleOptions& o) {
  // One file per option, repeatable: `--rules a.rules g.json` must not read
  // the graph as a rule file.
  auto* add = cmd->add_option("--rules", o.rules,
                              "also apply the rules of this rule file (repeatable; docs/rule-language.md)")
                  ->expected(1)
                  ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                  ->allow_extra_args(false);
  auto* only = cmd->add_option("--rules-only", o.rules_only, "apply only the rules of this rule file (repeatable)")
                   ->expected(1)
                   ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                   ->allow_extra_args(false);
  add->excludes(only);
  cmd->add_flag("--unchecked", o.unchecked, "run the files' rules without check-rules passing them first");
}

UserRules load_user_rules(const UserRuleOptions& o) {
  UserRules u;
  u.only = !o.rules_only.empty();
  for (const std::string& path : u.only ? o.rules_only : o.rules) u.files.push_back(rulelang::read_rule_file(path));
  if (u.files.empty()) return u;
  TensorLanguage lang;
  rulelang::compile_rules(u.files, lang);  // every error before anything runs
  if (!o.unchecked) check::require_proved(u.files, &std::cerr);
  return u;
}

std::vector<std::string> user_rule_args(const UserRuleOptions& o) {
  std::vector<std::string> args;
  for (const std::string& f : o.rules) args.insert(args.end(), {"--rules", f});
  for (const std::string& f : o.rules_only) args.insert(args.end(), {"--rules-only", f});
  if (!args.empty()) args.push_back("--unchecked");
  return args;
}

}  // namespace sator::cli
