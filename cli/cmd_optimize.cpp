// `sator optimize GRAPH.json [-o OUT.json] [--report R.json] [limits] ...`:
// saturate with the rules, extract, write the optimized graph and a report.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "interp/verify.h"
#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "rules/optimizer.h"

namespace sator::cli {

namespace {

struct OptimizeCliOptions {
  std::string path, out, report;
  size_t iter_limit = 30, node_limit = 200000;
  double time_limit = 10.0, ilp_time_limit = 60.0;
  std::string extractor = "dag", cost = "roofline", device = "h200", chunk = "off";
  std::string memory_budget;
  bool verify = false;
  bool fuse_dropout = false;
};

// Options of the CLI contract whose machinery lands with later issues are
// refused by name, never silently ignored.
void refuse_unavailable(const OptimizeCliOptions& o) {
  auto refuse = [&](const std::string& what) { throw GraphError(o.path, "", what); };
  if (o.extractor != "tree" && o.extractor != "dag" && o.extractor != "ilp")
    refuse("unknown --extractor " + o.extractor + " (tree, dag or ilp)");
  if (!(o.ilp_time_limit > 0)) refuse("--ilp-time-limit must be a positive number of seconds");
  if (o.cost != "nodes" && o.cost != "roofline") refuse("unknown --cost " + o.cost + " (nodes or roofline)");
  if (o.device != "h200") refuse("unknown --device " + o.device + " (known: h200)");
  if (o.chunk != "off") refuse("--chunk " + o.chunk + " is not available yet; use off");
  if (!o.memory_budget.empty()) refuse("--memory-budget needs chunking, which is not available yet");
  if (o.iter_limit == 0) refuse("--iter-limit must be at least 1");
  if (o.node_limit == 0) refuse("--node-limit must be at least 1");
  if (!(o.time_limit > 0)) refuse("--time-limit must be a positive number of seconds");
}

void run_optimize(const OptimizeCliOptions& o) {
  refuse_unavailable(o);
  const auto start = std::chrono::steady_clock::now();
  Graph input = load_graph(o.path);
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  rules::OptimizeOptions opts;
  opts.iter_limit = o.iter_limit;
  opts.node_limit = o.node_limit;
  opts.time_limit_s = o.time_limit;
  opts.fuse_dropout = o.fuse_dropout;
  opts.extractor = o.extractor;
  opts.cost = o.cost;
  opts.device = o.device;
  opts.ilp_time_limit_s = o.ilp_time_limit;
  rules::OptimizeResult r = rules::optimize(input, opts);

  // Verified before anything is written: a graph that fails is not output.
  std::optional<interp::VerifyResult> verified;
  if (o.verify) verified = interp::verify_optimized(input, r.output);
  const bool failed = verified && verified->status == interp::VerifyResult::Status::Failed;

  const auto tw = std::chrono::steady_clock::now();
  if (!o.out.empty() && !failed) write_graph_file(r.output, o.out);
  const double write_ms = r.write_ms + std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tw).count();
  const double total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  nlohmann::ordered_json j;
  j["graph"] = input.name;
  j["nodes_in"] = r.nodes_in;
  j["nodes_out"] = r.nodes_out;
  j["layout_ops_in"] = r.layout_ops_in;
  j["layout_ops_out"] = r.layout_ops_out;
  j["attention_fused"] = r.sdpa_out > r.sdpa_in ? r.sdpa_out - r.sdpa_in : 0;
  j["extractor"] = o.extractor;
  j["extract_dag_cost"] = r.extract_dag_cost;
  if (o.extractor == "ilp") j["extract_proved_optimal"] = r.extract_proved_optimal;
  j["cost_model"] = o.cost == "roofline" ? "roofline (estimated compiled us on " + o.device + ")" : "nodes";
  j["cost_in"] = r.cost_in;
  j["cost_out"] = r.cost_out;
  j["peak_bytes_in"] = nullptr;  // the liveness estimator comes with chunking
  j["peak_bytes_out"] = nullptr;
  j["egraph"] = {{"nodes", r.egraph_nodes},
                 {"classes", r.egraph_classes},
                 {"iterations", r.iterations},
                 {"stop_reason", eg::stop_reason_name(r.stop)}};
  j["z3"] = {{"queries", r.z3_queries}, {"cache_hits", r.z3_cache_hits}, {"solver_calls", r.z3_calls}};
  j["time_ms"] = {{"load", load_ms}, {"saturate", r.saturate_ms}, {"extract", r.extract_ms},
                  {"chunk", 0.0},    {"write", write_ms},         {"total", total_ms}};
  if (verified) {
    nlohmann::ordered_json v = {{"status", interp::verify_status_name(verified->status)},
                                {"max_rel_error", verified->max_error},
                                {"symbols", verified->symbols},
                                {"elements", verified->elements},
                                {"random_ops", verified->random_ops ? "drawn from identical streams (by node name)" : "none"},
                                {"seconds", verified->seconds}};
    if (!verified->detail.empty()) v["detail"] = verified->detail;
    j["verify"] = std::move(v);
  } else {
    j["verify"] = nullptr;
  }
  nlohmann::ordered_json iters = nlohmann::ordered_json::array();
  for (const eg::Iteration& it : r.per_iteration)
    iters.push_back({{"nodes", it.nodes}, {"classes", it.classes}, {"matches", it.matches}, {"applied", it.applied},
                     {"search_ms", it.search_s * 1e3}, {"apply_ms", it.apply_s * 1e3}, {"rebuild_ms", it.rebuild_s * 1e3}});
  j["iterations"] = std::move(iters);
  if (!o.report.empty()) write_file_atomic(o.report, j.dump(2) + "\n");

  std::printf("%s: %zu nodes -> %zu, layout ops %zu -> %zu, attention fused %zu\n", input.name.c_str(), r.nodes_in,
              r.nodes_out, r.layout_ops_in, r.layout_ops_out, r.sdpa_out > r.sdpa_in ? r.sdpa_out - r.sdpa_in : 0);
  if (o.cost == "roofline")
    std::printf("cost (roofline, %s): %.1f us -> %.1f us estimated; extracted with %s\n", o.device.c_str(), r.cost_in,
                r.cost_out, o.extractor.c_str());
  else
    std::printf("cost (nodes): %.0f -> %.0f; extracted with %s\n", r.cost_in, r.cost_out, o.extractor.c_str());
  std::printf("e-graph: %zu nodes, %zu classes, %zu iterations, %s; z3: %llu questions, %llu solver calls\n",
              r.egraph_nodes, r.egraph_classes, r.iterations, eg::stop_reason_name(r.stop),
              static_cast<unsigned long long>(r.z3_queries), static_cast<unsigned long long>(r.z3_calls));
  std::printf("time: load %.1f ms, saturate %.1f ms, extract %.1f ms, write %.1f ms, total %.1f ms\n", load_ms,
              r.saturate_ms, r.extract_ms, write_ms, total_ms);
  if (verified) {
    const interp::VerifyResult& v = *verified;
    std::string symbols;
    for (const auto& [name, value] : v.symbols) symbols += (symbols.empty() ? "" : ", ") + name + "=" + std::to_string(value);
    if (v.status == interp::VerifyResult::Status::Skipped)
      std::printf("verify: skipped: %s\n", v.detail.c_str());
    else
      std::printf("verify: %s, max relative error %.2e (float64 reference%s%s%s), %.1f s\n",
                  interp::verify_status_name(v.status), v.max_error, symbols.empty() ? "" : " at ", symbols.c_str(),
                  v.random_ops ? "; random ops on identical streams" : "", v.seconds);
    if (failed) {  // a finding about the optimizer, not a crash: exit 1 with the finding alone
      std::fprintf(stderr, "sator: verify failed for %s: %s (no output written)\n", o.path.c_str(), v.detail.c_str());
      throw CLI::RuntimeError(1);
    }
  }
  if (!o.out.empty()) std::printf("wrote %s\n", o.out.c_str());
}

}  // namespace

void add_optimize_command(CLI::App& app) {
  static OptimizeCliOptions opt;
  CLI::App* cmd = app.add_subcommand("optimize", "optimize a graph by equality saturation");
  cmd->add_option("graph", opt.path, "a sator.graph JSON file")->required();
  cmd->add_option("-o,--output", opt.out, "write the optimized graph here");
  cmd->add_option("--report", opt.report, "write a JSON report here");
  cmd->add_option("--iter-limit", opt.iter_limit, "saturation iterations (default 30)");
  cmd->add_option("--node-limit", opt.node_limit, "e-graph size limit (default 200000)");
  cmd->add_option("--time-limit", opt.time_limit, "saturation time limit in seconds (default 10)");
  cmd->add_option("--extractor", opt.extractor, "tree, dag (default) or ilp");
  cmd->add_option("--ilp-time-limit", opt.ilp_time_limit, "seconds for the ilp extractor (default 60)");
  cmd->add_option("--cost", opt.cost, "roofline (default; docs/cost-model.md) or nodes");
  cmd->add_option("--device", opt.device, "cost-model device (h200)");
  cmd->add_option("--chunk", opt.chunk, "off (auto, N: later)");
  cmd->add_option("--memory-budget", opt.memory_budget, "bytes (with chunking, later)");
  cmd->add_flag("--verify", opt.verify, "run input and output on the same random inputs in the float64 reference interpreter "
                "(symbols at small values) and compare; exit 1 without output if they differ");
  cmd->add_flag("--fuse-dropout", opt.fuse_dropout,
                "also fuse attention written with explicit dropout; SDPA draws its own random numbers, so the "
                "result is equal in distribution, not bit for bit");
  cmd->callback([] { run_optimize(opt); });
}

}  // namespace sator::cli
