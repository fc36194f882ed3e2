// `sator greedy GRAPH.json [-o OUT.json] [--report R.json] [--fixpoint] ...`:
// the same rules applied the way Inductor's pattern matcher applies its
// patterns (pipeline/greedy.h; docs/greedy.md) -- the baseline that equality
// saturation is measured against. Same input, output and report as optimize.
#include <chrono>
#include <cstdio>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/kept_until_exit.h"
#include "cli/commands.h"
#include "cli/user_rules.h"
#include "cli/validators.h"
#include "cli/output_paths.h"
#include "cli/run_report.h"
#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "pipeline/greedy.h"

namespace sator::cli {

namespace {

struct GreedyCliOptions {
  std::string path, out, report;
  bool fixpoint = false, verify = false, fuse_dropout = false, list_passes = false;
  size_t max_rounds = 10;
  std::string cost = "roofline", device = "h200";
  UserRuleOptions user_rules;
};

void list_passes(bool fuse_dropout) {
  size_t i = 0;
  for (const pipeline::GreedyPassInfo& p : pipeline::greedy_passes(fuse_dropout)) {
    std::printf("pass %zu: %s\n", ++i, p.name.c_str());
    for (const std::string& r : p.rules) std::printf("  %s\n", r.c_str());
  }
}

void run_greedy(const GreedyCliOptions& o) {
  if (o.list_passes) return list_passes(o.fuse_dropout);
  if (o.path.empty()) throw GraphError("", "", "a graph file is required (or --list-passes)");
  check_model_options(o.path, o.cost, o.device, "");
  if (o.max_rounds == 0) throw GraphError(o.path, "", "--max-rounds must be at least 1");
  const auto start = std::chrono::steady_clock::now();
  require_distinct_outputs(o.path, {{"-o", o.out}, {"--report", o.report}});
  const UserRules user = load_user_rules(o.user_rules);
  const Graph& input = keep_until_exit(load_graph(o.path));
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  pipeline::GreedyOptions opts;
  opts.fixpoint = o.fixpoint;
  opts.max_rounds = o.max_rounds;
  opts.fuse_dropout = o.fuse_dropout;
  opts.cost = o.cost;
  opts.device = o.device;
  opts.user_rules = user.files;
  opts.rules_only = user.only;
  const pipeline::GreedyResult& g = keep_until_exit(pipeline::greedy_optimize(input, opts));

  std::optional<interp::VerifyResult> verified;
  if (o.verify) verified = interp::verify_optimized(input, g.result.output, verify_options());
  const bool failed = verified && verified->status == interp::VerifyResult::Status::Failed;
  const auto tw = std::chrono::steady_clock::now();
  if (!o.out.empty() && !failed) write_graph_file(g.result.output, o.out);
  RunContext c;
  c.method = "greedy";
  c.cost = o.cost;
  c.device = o.device;
  c.greedy = &g;
  c.load_ms = load_ms;
  c.write_ms = g.result.write_ms + std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tw).count();
  c.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  c.verify = verified ? &*verified : nullptr;
  if (!o.report.empty()) write_file_atomic(o.report, run_report(input, g.result, c).dump(2) + "\n");
  print_run(input, g.result, c);
  if (verified) {
    print_verify(*verified);
    fail_if_unverified(o.path, *verified);
  }
  if (!o.out.empty()) std::printf("wrote %s\n", o.out.c_str());
  if (verified) exit_if_not_verified(*verified);
}

}  // namespace

void add_greedy_command(CLI::App& app) {
  static GreedyCliOptions opt;
  CLI::App* cmd = app.add_subcommand("greedy", "the same rules applied greedily, as Inductor's pattern matcher does (the baseline)");
  cmd->add_option("graph", opt.path, "a sator.graph JSON file");
  cmd->add_option("-o,--output", opt.out, "write the rewritten graph here")->check(output_path());
  add_user_rule_options(cmd, opt.user_rules);
  cmd->add_option("--report", opt.report, "write a JSON report here")->check(output_path());
  cmd->add_flag("--fixpoint", opt.fixpoint, "repeat the passes until a round changes nothing (Inductor: one round)");
  cmd->add_option("--max-rounds", opt.max_rounds, "round limit with --fixpoint (default 10)")
      ->check(non_negative_count());
  cmd->add_option("--cost", opt.cost, "cost model for the report: roofline (default) or nodes");
  cmd->add_option("--device", opt.device, "cost-model device: h200 (default) or h100");
  cmd->add_flag("--verify", opt.verify, "compare input and output in the float64 reference interpreter, as optimize --verify");
  cmd->add_flag("--fuse-dropout", opt.fuse_dropout, "also use the attention-with-dropout rule, as optimize --fuse-dropout");
  cmd->add_flag("--list-passes", opt.list_passes, "print the passes and their rules in the order they are tried");
  cmd->callback([] { run_greedy(opt); });
}

}  // namespace sator::cli
