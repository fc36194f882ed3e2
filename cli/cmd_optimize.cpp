// `sator optimize GRAPH.json [-o OUT.json] [--report R.json] [limits] ...`:
// saturate with the rules, extract, write the optimized graph and a report.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/chunk_report.h"
#include "cli/commands.h"
#include "cli/user_rules.h"
#include "ir/printable.h"
#include "cli/validators.h"
#include "cli/output_paths.h"
#include "cli/kept_until_exit.h"
#include "cli/run_report.h"
#include "cli/signals_held.h"
#include "ir/graph_io.h"
#include "ir/output_target.h"
#include "pipeline/run.h"
#include "rules/shipped_rules.h"

namespace sator::cli {

namespace {

struct OptimizeCliOptions {
  std::string path, out, report;
  size_t iter_limit = 30;
  std::optional<size_t> node_limit;  // default: pipeline::default_node_limit(input)
  double time_limit = 10.0, ilp_time_limit = 60.0;
  std::string extractor = "dag", cost = "roofline", device = "h200", chunk = "off";
  std::string memory_budget;
  std::string target = "any";
  std::string objective = "memory";
  std::string preset;
  bool decline_without_gain = false;
  bool verify = false;
  bool fuse_dropout = false, no_training_attention = false, training_attention_bias = true, no_weigh_biased_kernels = false;
  bool no_mixed_precision_attention = false;
  bool explain = false, explain_attention = false;
  UserRuleOptions user_rules;
  std::vector<std::string> without_rules;
};

// Options of the CLI contract whose machinery lands with later issues are
// refused by name, never silently ignored.
void refuse_unavailable(const OptimizeCliOptions& o) {
  auto refuse = [&](const std::string& what) { throw GraphError(o.path, "", what); };
  check_model_options(o.path, o.cost, o.device, o.extractor);
  if (!(o.ilp_time_limit > 0)) refuse("--ilp-time-limit must be a positive number of seconds");
  if (!o.memory_budget.empty() && o.chunk == "off") refuse("--memory-budget needs --chunks auto");
  if (o.iter_limit == 0) refuse("--iter-limit must be at least 1");
  if (o.objective != "memory" && o.objective != "time" && o.objective != "balanced")
    refuse("--objective must be memory (the default: never raise the estimated peak), balanced or time");
  if (o.node_limit && *o.node_limit == 0) refuse("--node-limit must be at least 1");
  if (!(o.time_limit > 0)) refuse("--time-limit must be a positive number of seconds");
  for (const std::string& name : o.without_rules)
    if (!rules::is_shipped_rule(name))
      refuse("--without-rule: no shipped rule is named '" + name + "' (`sator check-rules --list` lists them)");
  try {
    output_target(o.target);
  } catch (const std::invalid_argument& e) {
    refuse(std::string("--target: ") + e.what());
  }
}

// --preset inductor: what sator_torch.InductorPass() runs by default, so a
// kept graph's decision can be reproduced from the command line.
OptimizeCliOptions with_preset(OptimizeCliOptions o) {
  if (o.preset.empty()) return o;
  if (o.preset != "inductor") throw GraphError(o.path, "", "unknown --preset " + o.preset + " (inductor)");
  o.target = "inductor-joint";
  o.fuse_dropout = true;
  o.decline_without_gain = true;
  return o;
}

void run_optimize(const OptimizeCliOptions& given) {
  const OptimizeCliOptions o = with_preset(given);
  refuse_unavailable(o);
  require_distinct_outputs(o.path, {{"-o", o.out}, {"--report", o.report}});
  pipeline::RunOptions run;
  if (o.chunk != "off") run.chunk = read_chunk_options(o.path, o.chunk, o.memory_budget, o.device);
  // Rule file errors come first too: exit 2, nothing written.
  const UserRules user = load_user_rules(o.user_rules);
  run.start = std::chrono::steady_clock::now();
  run.time_limit_s = o.time_limit;
  run.verify = o.verify;
  run.verify_options = verify_options();
  run.decline_without_gain = o.decline_without_gain;
  pipeline::OptimizeOptions& opts = run.optimize;
  opts.iter_limit = o.iter_limit;
  opts.node_limit = o.node_limit.value_or(0);  // 0: pipeline::default_node_limit
  opts.fuse_dropout = o.fuse_dropout;
  opts.training_attention = !o.no_training_attention;
  opts.weigh_biased_kernels = !o.no_weigh_biased_kernels;
  opts.training_attention_bias = o.training_attention_bias;
  opts.mixed_precision_attention = !o.no_mixed_precision_attention;
  opts.extractor = o.extractor;
  opts.cost = o.cost;
  opts.device = o.device;
  opts.ilp_time_limit_s = o.ilp_time_limit;
  opts.target = o.target;
  opts.hold_peak = o.objective != "time";
  opts.balanced = o.objective == "balanced";
  opts.user_rules = user.files;
  opts.rules_only = user.only;
  opts.without_rules = o.without_rules;
  opts.explain = o.explain;
  opts.explain_attention = o.explain_attention;
  const pipeline::RunResult& done = keep_until_exit(pipeline::run_file(o.path, run));
  const Graph& input = done.input;
  const pipeline::OptimizeResult& r = done.result;
  const std::optional<chunk::ChunkPlan>& plan = done.plan;
  const std::optional<interp::VerifyResult>& verified = done.verified;

  RunContext c;
  c.peak_in = r.peak_in;    // the peak guard's estimate of the input, where it made one
  c.peak_out = r.peak_out;  // and of the order it wrote
  c.method = "saturation";
  c.extractor = o.extractor;
  c.cost = o.cost;
  c.device = o.device;
  c.load_ms = done.load_ms;
  // Both outputs or neither: a graph that failed --verify is not written, and
  // an interrupt between the graph and its report waits until both are.
  const bool failed = verified && verified->status == interp::VerifyResult::Status::Failed;
  SignalsHeld held;
  const auto t_write = std::chrono::steady_clock::now();
  bool written = false;
  if (!o.out.empty() && !failed) {
    write_graph_file(done.output(), o.out);
    written = true;
  }
  const double file_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_write).count();
  c.write_ms = r.write_ms + file_ms;
  c.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - run.start).count();
  c.verify = verified ? &*verified : nullptr;
  c.chunk_ms = done.chunk_ms;
  c.time_limit_s = o.time_limit;
  if (!o.report.empty()) {
    nlohmann::ordered_json j = run_report(input, r, c);
    j["target"] = o.target;
    j["version"] = SATOR_VERSION;
    j["preset"] = o.preset.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(o.preset);
    j["declined_without_gain"] = done.declined.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(done.declined);
    j["chunk"] = plan ? chunk_plan_json(*plan) : nlohmann::ordered_json(nullptr);
    if (o.explain_attention) {
      j["attention_blocks"] = nlohmann::ordered_json::array();
      for (const pipeline::AttentionBlock& a : r.attention)
        j["attention_blocks"].push_back({{"softmax", a.softmax}, {"fused", a.fused}, {"why", a.fused ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.why)}});
    }
    if (o.explain) {
      j["made_by"] = nlohmann::ordered_json::array();
      for (const auto& [node, rule] : r.made_by) j["made_by"].push_back({{"node", node}, {"rule", rule}});
      j["removed"] = nlohmann::ordered_json::array();
      for (const pipeline::Removal& x : r.removed)
        j["removed"].push_back({{"node", x.node},
                                {"replaced_by", x.replaced_by.empty() ? nlohmann::ordered_json(nullptr)
                                                                      : nlohmann::ordered_json(x.replaced_by)},
                                {"rules", x.explained ? nlohmann::ordered_json(x.rules) : nlohmann::ordered_json(nullptr)}});
    }
    write_file_atomic(o.report, j.dump(2) + "\n");
  }
  print_run(input, r, c);
  if (o.explain) {
    // The nodes rules made (the others are the input's own, rewritten or not).
    std::printf("made by rules: %zu node%s\n", r.made_by.size(), r.made_by.size() == 1 ? "" : "s");
    for (const auto& [node, rule] : r.made_by) std::printf("  %s  <- %s\n", printable(node).c_str(), rule.c_str());
    // The input's nodes the output no longer computes, and why.
    std::printf("removed: %zu node%s of the input\n", r.removed.size(), r.removed.size() == 1 ? "" : "s");
    for (const pipeline::Removal& x : r.removed) {
      std::string rules;
      for (const std::string& rule : x.rules) rules += (rules.empty() ? "" : ", ") + rule;
      if (x.replaced_by.empty())
        std::printf("  %s  no longer read (what read it was rewritten)\n", printable(x.node).c_str());
      else if (!x.explained)
        std::printf("  %s  -> %s\n", printable(x.node).c_str(), printable(x.replaced_by).c_str());
      else
        std::printf("  %s  -> %s  by %s\n", printable(x.node).c_str(), printable(x.replaced_by).c_str(),
                    rules.empty() ? "loading (an identical node)" : rules.c_str());
    }
  }
  if (o.explain_attention) {
    size_t fused = 0;
    for (const pipeline::AttentionBlock& a : r.attention) fused += a.fused;
    std::printf("attention: %zu softmax%s over rank-4 tensors, %zu fused\n", r.attention.size(),
                r.attention.size() == 1 ? "" : "es", fused);
    for (const pipeline::AttentionBlock& a : r.attention)
      std::printf("  %s  %s%s\n", printable(a.softmax).c_str(), a.fused ? "fused" : "not fused: ", a.fused ? "" : a.why.c_str());
  }
  if (plan) print_chunk_plan(*plan);
  if (verified) {
    print_verify(*verified);
    fail_if_unverified(o.path, *verified);
  }
  if (!done.declined.empty()) std::printf("declined: %s; the input is written unchanged\n", done.declined.c_str());
  if (written) std::printf("wrote %s\n", o.out.c_str());
  // Asked to verify and could not: the output stands, but a script (a CI
  // job) must not read the run as verified (issue 42).
  if (verified) exit_if_not_verified(*verified);
}

}  // namespace

void add_optimize_command(CLI::App& app) {
  static OptimizeCliOptions opt;
  CLI::App* cmd = app.add_subcommand("optimize", "optimize a graph by equality saturation");
  cmd->add_option("graph", opt.path, "a sator.graph JSON file")->required();
  cmd->add_option("-o,--output", opt.out, "write the optimized graph here")->check(output_path());
  add_user_rule_options(cmd, opt.user_rules);
  cmd->add_option("--without-rule", opt.without_rules,
                  "leave out the shipped rule of this name (repeatable; `sator check-rules --list` lists them)");
  cmd->add_flag("--explain", opt.explain, "name the rule that made each node of the result, and the rules behind each node of the input it no longer computes (also in --report as made_by and removed)");
  cmd->add_flag("--explain-attention", opt.explain_attention,
                "list every softmax over a rank-4 tensor: fused, or the first reason it was not (also in --report as "
                "attention_blocks)");
  cmd->add_option("--report", opt.report, "write a JSON report here")->check(output_path());
  cmd->add_option("--iter-limit", opt.iter_limit, "saturation iterations (default 30)")
      ->check(non_negative_count())
      ->check(in_range(1, 1e6));
  cmd->add_option("--node-limit", opt.node_limit,
                  "e-graph size limit (default 200000 or 20 per input node, whichever is larger)")
      ->check(non_negative_count())
      ->check(in_range(1, 1e9));
  cmd->add_option("--time-limit", opt.time_limit,
                  "seconds for the run: saturation (at most half of it), extraction, the order search and chunk "
                  "planning stop at it with their best so far (the input kept where it passed before extraction; "
                  "default 10)")
      ->check(in_range(0, 86400, true));
  cmd->add_option("--objective", opt.objective,
                  "memory (default): the fastest form whose estimated peak is at most the input's, else the input; "
                  "balanced: the fastest form where its peak rises by no more percent than its time falls, else as "
                  "memory; time: the fastest form, even where its peak is higher (all written in the order of least "
                  "peak)");
  cmd->add_option("--extractor", opt.extractor, "tree, dag (default) or ilp");
  cmd->add_option("--ilp-time-limit", opt.ilp_time_limit, "seconds for the ilp extractor (default 60)")
      ->check(in_range(0, 86400, true));
  cmd->add_option("--cost", opt.cost, "roofline (default; docs/cost-model.md) or nodes");
  cmd->add_option("--device", opt.device, "cost-model device: h200 (default) or h100 (its measured attention table; sator_torch.InductorPass picks the GPU's)");
  cmd->add_option("--target", opt.target,
                  "what reads the output: any (default) or inductor-joint (only ops Inductor lowers in a joint "
                  "graph; what sator recomposed and did not fuse is written back in the input's form)");
  CLI::Option* chunks = cmd->add_option("--chunks", opt.chunk, "off (default), auto or N: chunk the extracted graph (sator chunk)");
  add_old_spelling(cmd, "--chunk", chunks, opt.chunk);
  cmd->add_option("--memory-budget", opt.memory_budget, "with --chunks auto: the fewest chunks whose estimated peak fits (bytes, or 8GiB)");
  cmd->add_flag("--verify", opt.verify, "run input and output on the same random inputs in the float64 reference interpreter "
                "(symbols at small values) and compare; exit 1 without output if they differ");
  cmd->add_flag("--no-training-attention", opt.no_training_attention,
                "keep a joint graph's attention decomposed (default: forward and backward fused together)");
  cmd->add_flag("--training-attention-bias,!--no-training-attention-bias", opt.training_attention_bias,
                "a joint graph's attention whose scores add a mask tensor (a bias) may also take the efficient "
                "kernels, the mask as attn_bias (its gradient from them where it needs one), each such block kept "
                "where the graph as Inductor fuses it is estimated cheaper with them (default; --no-...: only the "
                "cuDNN kernels take a bias, 16-bit, no gradient)");
  cmd->add_flag("--no-weigh-biased-kernels", opt.no_weigh_biased_kernels,
                "keep the efficient kernels where the extraction gave them a training block's bias, without weighing "
                "the graph as Inductor fuses it: their lower peak, at the time the GPU measured (slower in most "
                "places, docs/results/attention_bias_forms.md)");
  cmd->add_flag("--no-mixed-precision-attention", opt.no_mixed_precision_attention,
                "keep attention under autocast (16-bit scores, a float32 mask and softmax) decomposed (default: "
                "fused in 16 bits, the mask cast as torch's SDPA casts it where that is exact: a mask of zeros and masking "
                "values; a real-valued bias is left alone)");
  cmd->add_option("--preset", opt.preset,
                  "inductor: what sator_torch.InductorPass() runs by default (--target inductor-joint --fuse-dropout "
                  "--decline-without-gain)");
  cmd->add_flag("--decline-without-gain", opt.decline_without_gain,
                "write the input unchanged when no attention was fused or changed and nothing was chunked");
  cmd->add_flag("--fuse-dropout", opt.fuse_dropout,
                "also fuse attention written with explicit dropout; SDPA draws its own random numbers, so the "
                "result is equal in distribution, not bit for bit");
  cmd->callback([] { run_optimize(opt); });
}

}  // namespace sator::cli
