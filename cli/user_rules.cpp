#include "cli/user_rules.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <unistd.h>

#include "check/proof_cache.h"
#include "ir/graph_io.h"
#include "rules/shipped_rules.h"

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
  for (const std::string& path : u.only ? o.rules_only : o.rules) {
    u.texts.push_back(rulelang::read_rule_text(path));
    u.files.push_back(rulelang::parse_rule_text(u.texts.back(), path));
  }
  if (u.files.empty()) return u;
  // A user's rule may not take a shipped rule's name: reports, --explain and
  // --without-rule would mean two rules by it.
  for (const rulelang::RuleFile& f : u.files)
    for (const rulelang::RuleSpec& r : f.rules)
      if (rules::is_shipped_rule(r.name))
        throw rulelang::RuleError(r.at, "rule '" + r.name + "' has the name of a shipped rule; name it otherwise");
  TensorLanguage lang;
  rulelang::compile_rules(u.files, lang);  // every error before anything runs
  if (!o.unchecked) check::require_proved(u.files, &std::cerr);
  return u;
}

WorkerRuleFiles::WorkerRuleFiles(const UserRules& checked) {
  if (checked.files.empty()) return;
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/sator-rules.XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw GraphError(tmpl, "", std::string("cannot make a folder for the checked rules: ") + std::strerror(errno));
  dir_ = tmpl;
  for (size_t i = 0; i < checked.files.size(); ++i) {
    const std::string copy =
        dir_ + "/" + std::to_string(i) + "-" + std::filesystem::path(checked.files[i].path).filename().string();
    write_file_atomic(copy, checked.texts[i]);
    args_.insert(args_.end(), {checked.only ? "--rules-only" : "--rules", copy});
  }
  args_.push_back("--unchecked");
}

WorkerRuleFiles::~WorkerRuleFiles() {
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace sator::cli
