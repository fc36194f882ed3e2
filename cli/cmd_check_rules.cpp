// `sator check-rules [--rules FILE...] [--rule NAME] [--trials N] [--json]`: every shipped
// rewrite rule through the Z3 shape proof, the Z3 index proof (layout rules)
// and differential tests in the float64 reference interpreter. Exit 1 if any
// rule fails, 2 for bad usage or a rule file that does not compile. With
// --rules, a user's rule files instead, their instances drawn from each
// rule's own left-hand side (check/cases_generated.h).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "check/cases_generated.h"
#include "check/rule_cases.h"
#include "check/rule_check.h"
#include "rules/attention_rules.h"
#include "rules/attention_train_rules.h"
#include "rules/key_gradient_sum.h"
#include "rules/layout_rules.h"
#include "rules/mask_algebra.h"
#include "rules/mixed_precision.h"
#include "rules/sdpa_calls.h"
#include "cli/commands.h"
#include "cli/rule_on_graph.h"
#include "cli/validators.h"

namespace sator::cli {

namespace {

struct Options {
  std::vector<std::string> rules;
  std::vector<std::string> rule_files;  // --rules: a user's files instead of the shipped rules
  size_t trials = 200;
  uint64_t seed = 1;
  bool json = false;
  bool list = false;
  bool markdown = false;
  std::string graph;  // --graph: where the rules could match in it, and why they do not
};

// Every shipped rule as a markdown table (docs/rules.md's is this output):
// its name, where it is written, its description.
void print_rule_table() {
  std::printf("| rule | written in | what it says |\n| --- | --- | --- |\n");
  auto rows = [&](const std::vector<rules::RuleInfo>& infos, const char* cpp) {
    for (const rules::RuleInfo& r : infos) {
      std::string where = std::string("C++, `") + cpp + "`";
      for (const std::string& name : rulelang::shipped_rule_file_names()) {
        const rulelang::RuleFile& file = rulelang::shipped_rule_file(name);
        for (const rulelang::RuleSpec& spec : file.rules)
          if (spec.name == r.name) where = "`" + file.path + ":" + std::to_string(spec.at.line) + "`";
      }
      std::string text = r.description;
      for (size_t i = 0; (i = text.find('|', i)) != std::string::npos; i += 2) text.replace(i, 1, "\\|");
      std::printf("| `%s` | %s | %s |\n", r.name, where.c_str(), text.c_str());
    }
  };
  rows(rules::layout_rule_info(), "rules/layout_rules.cpp");
  rows(rules::recompose_rule_info(), "rules/attention_rules.cpp");
  rows(rules::attention_rule_info(), "rules/attention_rules.cpp");
  rows(rules::attention_train_rule_info(), "rules/attention_train_rules.cpp");
  rows(rules::key_gradient_rule_info(), "rules/key_gradient_sum.cpp");
  rows(rules::mixed_precision_rule_info(), "rules/mixed_precision.cpp");
  rows(rules::mask_algebra_rule_info(), "rules/mask_algebra.cpp");
  rows(rules::sdpa_call_rule_info(), "rules/sdpa_calls.cpp");
}

std::string fixed(double x, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", x);
  return buf;
}

int run(const Options& o) {
  // A user's rule files: their rules, with instances drawn from their own
  // left-hand sides.
  std::vector<rulelang::RuleFile> files;
  for (const std::string& path : o.rule_files) files.push_back(rulelang::read_rule_file(path));
  const check::RuleFactory rules = files.empty() ? check::shipped_rules() : check::file_rules(files);
  std::vector<check::RuleCase> cases = files.empty() ? check::shipped_cases() : check::generated_cases(files);
  if (!o.graph.empty()) return explain_rules_on_graph(files, o.rules, o.graph);
  if (o.list && o.markdown && o.rule_files.empty()) {
    print_rule_table();
    return 0;
  }
  if (o.list) {
    for (const check::RuleCase& c : cases) std::cout << c.name << "\n";
    return 0;
  }
  if (o.trials == 0) throw CLI::ValidationError("--trials", "must be at least 1");
  std::vector<check::RuleCase> chosen;
  for (const std::string& name : o.rules) {
    bool found = false;
    for (const check::RuleCase& c : cases)
      if (c.name == name) chosen.push_back(c), found = true;
    if (!found) throw CLI::ValidationError("--rule", "no rule named '" + name + "' (`sator check-rules --list` lists them)");
  }
  if (o.rules.empty()) chosen = cases;
  const std::vector<std::string> uncovered =
      o.rules.empty() && files.empty() ? check::uncovered_rules(rules, cases) : std::vector<std::string>{};

  check::CheckOptions options;
  options.trials = o.trials;
  options.seed = o.seed;
  std::vector<check::RuleReport> reports;
  const bool tty = isatty(fileno(stderr));
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (!o.json) std::cerr << (tty ? "\r\033[K" : "") << "[" << i + 1 << "/" << chosen.size() << "] " << chosen[i].name
                           << (tty ? "" : "\n") << std::flush;
    // A file's rule is checked with itself alone in the e-graph: building the
    // whole file's rules for each instance made checking a file quadratic.
    reports.push_back(
        check::check_rule(chosen[i], files.empty() ? rules : check::file_rule(files, chosen[i].name), options));
  }
  if (!o.json && tty) std::cerr << "\r\033[K";

  bool ok = uncovered.empty();
  for (const auto& r : reports) ok &= r.ok();
  if (o.json) {
    nlohmann::json j;
    j["ok"] = ok;
    j["trials_per_rule"] = o.trials;
    j["tolerance"] = options.tolerance;
    j["uncovered_rules"] = uncovered;
    for (const auto& r : reports)
      j["rules"].push_back({{"rule", r.name}, {"ok", r.ok()}, {"shape_proof", r.shape}, {"index_proof", r.index},
                            {"trials", r.trials}, {"attempts", r.attempts}, {"max_rel_error", r.max_error},
                            {"max_ulp_at_dtypes", r.max_ulp}, {"at_dtypes", r.at_dtypes()},
                            {"approx", r.approx.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.approx)},
                            {"seconds", r.seconds}, {"failures", r.failures}});
    std::cout << j.dump(2) << "\n";
    return ok ? 0 : 1;
  }
  // Each column as wide as its widest cell, so a long proof text (several
  // ranks and instances) does not push the rest of its row out of line.
  std::vector<std::vector<std::string>> rows = {
      {"rule", "result", "shape proof (Z3)", "index proof (Z3)", "trials", "max err", "at its dtypes", "time s"}};
  double total = 0;
  for (const auto& r : reports) {
    total += r.seconds;
    rows.push_back({r.name, r.ok() ? "ok" : "FAIL", r.shape, r.index, std::to_string(r.trials), sci(r.max_error),
                    r.at_dtypes(), fixed(r.seconds, 1)});
  }
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  const std::vector<bool> right = {false, false, false, false, true, true, false, true};  // numbers align right
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      line += (c ? "  " : "") + (right[c] ? pad + row[c] : row[c] + (c + 1 < row.size() ? pad : ""));
    }
    std::printf("%s\n", line.c_str());
  }
  for (const auto& r : reports)
    for (const std::string& f : r.failures) std::printf("\n%s: %s\n", r.name.c_str(), f.c_str());
  for (const std::string& name : uncovered)
    std::printf("\n%s: no instance generator in check/: a rule check-rules does not check does not ship\n", name.c_str());
  size_t passed = 0;
  for (const auto& r : reports) passed += r.ok();
  std::printf("\n%zu of %zu rules pass (%zu trials each, tolerance %.0e) in %.1f s\n", passed, reports.size(), o.trials,
              options.tolerance, total);
  return ok ? 0 : 1;
}

}  // namespace

void add_check_rules_command(CLI::App& app) {
  static Options opt;
  CLI::App* cmd = app.add_subcommand("check-rules", "prove and test every rewrite rule's soundness");
  cmd->add_option("--rule", opt.rules, "check only this rule (repeatable)");
  cmd->add_option("--rules", opt.rule_files, "check the rules of this rule file instead of the shipped ones (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
  cmd->add_option("--trials", opt.trials, "differential instances per rule (default 200)")
      ->check(non_negative_count());
  cmd->add_option("--seed", opt.seed, "random seed (default 1)");
  cmd->add_flag("--json", opt.json, "print the results as JSON");
  cmd->add_option("--graph", opt.graph,
                  "instead of checking the rules: where each could match in this graph (saturated as optimize would) and why "
                  "it does not fire there");
  cmd->add_flag("--list", opt.list, "list the rules and exit");
  cmd->add_flag("--markdown", opt.markdown, "with --list: the shipped rules as a markdown table (docs/rules.md's)");
  cmd->callback([]() {
    const int status = run(opt);
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace sator::cli
