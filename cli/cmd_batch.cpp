// `sator batch DIR|MANIFEST --out DIR [--jobs N] [--shard I/N] [--resume]`
// and `sator batch-merge DIR... --out DIR` (docs/batch.md).
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/batch.h"
#include "cli/batch_isolate.h"
#include "cli/chunk_report.h"
#include "cli/commands.h"
#include "cli/user_rules.h"
#include "cli/validators.h"
#include "cli/run_report.h"
#include "ir/graph_io.h"

namespace sator::cli {

namespace {

struct BatchCliOptions {
  BatchOptions batch;
  std::string shard = "1/1";
  std::string graph_memory;
  UserRuleOptions user_rules;
};

struct BatchOneOptions {
  std::string graph, name, result;
  CompareOptions compare;
  double memory = 0;
  UserRuleOptions user_rules;
};

struct MergeCliOptions {
  std::vector<std::string> dirs;
  std::string out, expect;
};

void parse_shard(const std::string& text, BatchOptions& o) {
  const size_t slash = text.find('/');
  size_t i = 0, n = 0;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("no slash");
    size_t used = 0;
    i = std::stoul(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument("index");
    n = std::stoul(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument("count");
  } catch (const std::exception&) {
    throw GraphError("", "", "--shard takes I/N, e.g. 2/8 (got '" + text + "')");
  }
  if (n == 0 || i == 0 || i > n) throw GraphError("", "", "--shard I/N needs 1 <= I <= N (got '" + text + "')");
  o.shard_index = i;
  o.shard_count = n;
}

void check_compare_options(const CompareOptions& c) {
  check_model_options("", c.cost, c.device, c.extractor);
}

}  // namespace

void add_batch_commands(CLI::App& app) {
  static BatchCliOptions opt;
  CLI::App* cmd = app.add_subcommand("batch", "compare greedy and equality saturation on many graphs, in parallel");
  cmd->add_option("source", opt.batch.source, "a folder of graphs (*.json) or a manifest")->required();
  cmd->add_option("--out", opt.batch.out, "output folder: graphs/NAME.json per graph, summary.csv/.json/.md")->required();
  cmd->add_option("--jobs", opt.batch.jobs, "graphs at a time, each in a worker process (default: every core)")
      ->check(non_negative_count());
  cmd->add_option("--shard", opt.shard, "take shard I of N (1-based), e.g. 3/8 (default 1/1)");
  cmd->add_flag("--resume", opt.batch.resume, "skip graphs whose result is already in --out (failed ones run again)");
  cmd->add_flag("--list", opt.batch.list_only,
                "print the graphs this run would take (NAME<tab>PATH per line, after --shard and --resume) and run none");
  cmd->add_option("--cost", opt.batch.compare.cost, "roofline (default) or nodes");
  cmd->add_option("--device", opt.batch.compare.device, "cost-model device: h200 (default) or h100");
  cmd->add_option("--extractor", opt.batch.compare.extractor, "saturation's extractor: tree, dag (default) or ilp");
  cmd->add_flag("--greedy-fixpoint", opt.batch.compare.greedy_fixpoint, "let greedy repeat its passes to a fixpoint");
  cmd->add_option("--objective", opt.batch.compare.objective,
                  "saturation's objective: memory (default: never raise the estimated peak; else keep the input), "
                  "balanced or time (sator optimize --objective)")
      ->check(CLI::IsMember({"memory", "balanced", "time"}));
  cmd->add_option("--repeat", opt.batch.compare.repeat, "time each method as the median of this many runs (default 3)");
  add_user_rule_options(cmd, opt.user_rules);
  cmd->add_option("--graph-timeout", opt.batch.graph_seconds,
                  "seconds one graph may take before its worker is killed and the graph recorded as failed (default 600)");
  cmd->add_option("--graph-memory", opt.graph_memory,
                  "memory one graph's worker may allocate (bytes, or 8GiB); past it the graph fails (default: no limit)");
  cmd->callback([] {
    parse_shard(opt.shard, opt.batch);
    if (!(opt.batch.graph_seconds > 0)) throw GraphError("", "", "--graph-timeout must be a positive number of seconds");
    if (!opt.graph_memory.empty()) opt.batch.graph_memory_bytes = parse_bytes("", "--graph-memory", opt.graph_memory);
    check_compare_options(opt.batch.compare);
    // The rule files are read and checked once, here; the workers get the
    // checked texts (private copies) with --unchecked.
    const WorkerRuleFiles worker_rules(load_user_rules(opt.user_rules));
    opt.batch.compare.user_rule_args = worker_rules.args();
    const int status = run_batch(opt.batch);
    if (status != 0) throw CLI::RuntimeError(status);
  });

  // The worker process of one batch graph (batch_isolate.h); not for users.
  static BatchOneOptions one;
  CLI::App* w = app.add_subcommand("batch-one", "one graph of a batch, in its worker process");
  w->group("");  // hidden from --help
  w->add_option("graph", one.graph)->required();
  w->add_option("--name", one.name)->required();
  w->add_option("--result", one.result)->required();
  w->add_option("--cost", one.compare.cost);
  w->add_option("--device", one.compare.device);
  w->add_option("--extractor", one.compare.extractor);
  w->add_flag("--greedy-fixpoint", one.compare.greedy_fixpoint);
  w->add_option("--objective", one.compare.objective);
  w->add_option("--repeat", one.compare.repeat);
  w->add_option("--memory", one.memory);
  add_user_rule_options(w, one.user_rules);
  w->callback([] {
    const UserRules user = load_user_rules(one.user_rules);
    one.compare.user_rules = user.files;
    one.compare.rules_only = user.only;
    run_batch_one(one.graph, one.name, one.result, one.compare, one.memory);
  });

  static MergeCliOptions merge;
  CLI::App* m = app.add_subcommand("batch-merge", "combine the outputs of several batch runs (shards) into one summary");
  m->add_option("dirs", merge.dirs, "batch output folders")->required();
  m->add_option("--out", merge.out, "the merged output folder")->required();
  m->add_option("--expect", merge.expect,
                "the batch's source (folder or manifest): its graphs that no folder holds a result of are listed as not "
                "run, and the exit status is 1");
  m->callback([] {
    const int status = merge_batches(merge.dirs, merge.out, merge.expect);
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace sator::cli
