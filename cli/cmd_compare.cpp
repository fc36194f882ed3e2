// `sator compare GRAPH.json [--report R.json]`: greedy rewriting and
// equality saturation on the same graph, side by side, with Inductor's own
// result as a third column where `inductor/NAME.json` sits beside the graph's
// folder (the corpus layout) or `--inductor` names it.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/validators.h"
#include "cli/user_rules.h"
#include "cli/output_paths.h"
#include "cli/comparison.h"
#include "cli/run_report.h"
#include "ir/graph_io.h"

namespace sator::cli {

namespace {

struct CompareCliOptions {
  std::string path, report;
  CompareOptions opts;
  UserRuleOptions user_rules;
};

void run_compare(const CompareCliOptions& o) {
  check_model_options(o.path, o.opts.cost, o.opts.device, o.opts.extractor);
  require_distinct_outputs(o.path, {{"--report", o.report}});
  CompareOptions opts = o.opts;
  const UserRules user = load_user_rules(o.user_rules);
  opts.user_rules = user.files;
  opts.rules_only = user.only;
  const nlohmann::ordered_json c = compare_graph(o.path, opts);
  if (!o.report.empty()) write_file_atomic(o.report, c.dump(2) + "\n");
  std::fputs(comparison_table(c).c_str(), stdout);
}

}  // namespace

void add_compare_command(CLI::App& app) {
  static CompareCliOptions opt;
  CLI::App* cmd = app.add_subcommand("compare", "greedy rewriting vs equality saturation (and Inductor) on one graph");
  cmd->add_option("graph", opt.path, "a sator.graph JSON file")->required();
  cmd->add_option("--report", opt.report, "write the comparison as JSON here")->check(output_path());
  add_user_rule_options(cmd, opt.user_rules);
  cmd->add_option("--cost", opt.opts.cost, "roofline (default) or nodes");
  cmd->add_option("--device", opt.opts.device, "cost-model device: h200 (default) or h100");
  cmd->add_option("--extractor", opt.opts.extractor, "saturation's extractor: tree, dag (default) or ilp");
  cmd->add_flag("--greedy-fixpoint", opt.opts.greedy_fixpoint, "let greedy repeat its passes to a fixpoint");
  cmd->add_option("--objective", opt.opts.objective,
                  "saturation's objective: memory (default: never raise the estimated peak; else keep the input), "
                  "balanced or time (sator optimize --objective)")
      ->check(CLI::IsMember({"memory", "balanced", "time"}));
  cmd->add_option("--repeat", opt.opts.repeat, "time each method as the median of this many runs (default 3)");
  cmd->add_option("--inductor", opt.opts.inductor, "Inductor's graph (default: ../inductor/NAME.json beside the graph)");
  cmd->callback([] { run_compare(opt); });
}

}  // namespace sator::cli
