// `sator chunk GRAPH.json [-o OUT.json] [--chunks auto|N] [--memory-budget B]
// [--report R.json] [--device h200] [--min-bytes B] [--min-ratio X] [--hint S=V]... [--verify]`: find the amplifier, chunk
// its region into a sator.chunked node, report the plan (chunk/plan.h).
#include <chrono>
#include <cstdio>
#include <optional>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/kept_until_exit.h"
#include "cli/chunk_report.h"
#include "pipeline/run.h"
#include "cli/commands.h"
#include "cli/validators.h"
#include "cli/output_paths.h"
#include "cli/run_report.h"
#include "interp/verify.h"
#include "ir/graph_io.h"
#include "ir/shape_check.h"

namespace sator::cli {

namespace {

struct ChunkCliOptions {
  std::string path, out, report, chunks = "auto", budget, device = "h200", min_bytes;
  std::vector<std::string> hints;
  double min_ratio = 2.0;
  bool verify = false;
};

void run_chunk(const ChunkCliOptions& o) {
  chunk::ChunkOptions options = read_chunk_options(o.path, o.chunks, o.budget, o.device);
  if (!o.min_bytes.empty()) options.min_result_bytes = parse_bytes(o.path, "--min-bytes", o.min_bytes);
  if (!(o.min_ratio > 0)) throw GraphError(o.path, "", "--min-ratio must be a positive number");
  options.min_amplification = o.min_ratio;
  const auto start = std::chrono::steady_clock::now();
  require_distinct_outputs(o.path, {{"-o", o.out}, {"--report", o.report}});
  Graph& input = keep_until_exit(load_graph(o.path));
  apply_hints(o.path, input, o.hints);
  const chunk::ChunkPlan& plan = keep_until_exit(pipeline::plan_or_refuse(o.path, input, options));
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::optional<interp::VerifyResult> verified;
  if (o.verify && plan.chunked) verified = interp::verify_optimized(input, plan.graph, verify_options());
  const bool failed = verified && verified->status == interp::VerifyResult::Status::Failed;
  if (!o.out.empty() && !failed) write_graph_file(plan.graph, o.out);
  if (!o.report.empty()) {
    nlohmann::ordered_json j;
    j["graph"] = input.name;
    j["chunk"] = chunk_plan_json(plan);
    j["time_ms"] = ms;
    j["verify"] = verified ? nlohmann::ordered_json{{"status", interp::verify_status_name(verified->status)},
                                                   {"max_rel_error", verified->max_error},
                                                   {"symbols", verified->symbols},
                                                   {"detail", verified->detail}}
                           : nlohmann::ordered_json(nullptr);
    write_file_atomic(o.report, j.dump(2) + "\n");
  }
  std::printf("%s: %zu nodes -> %zu\n", input.name.c_str(), input.nodes.size(), plan.graph.nodes.size());
  print_chunk_plan(plan);
  std::printf("time: %.1f ms\n", ms);
  if (verified) {
    print_verify(*verified);
    fail_if_unverified(o.path, *verified);
  }
  if (!o.out.empty()) std::printf("wrote %s\n", o.out.c_str());
  if (verified) exit_if_not_verified(*verified);
}

}  // namespace

void add_chunk_command(CLI::App& app) {
  static ChunkCliOptions opt;
  CLI::App* cmd = app.add_subcommand("chunk", "split the memory-hungry region of a graph into chunks");
  cmd->add_option("graph", opt.path, "a sator.graph JSON file")->required();
  cmd->add_option("-o,--output", opt.out, "write the chunked graph here")->check(output_path());
  cmd->add_option("--report", opt.report, "write a JSON report here")->check(output_path());
  CLI::Option* chunks =
      cmd->add_option("--chunks", opt.chunks, "auto (default: double while it saves more memory than it costs time) or N");
  add_old_spelling(cmd, "--chunk", chunks, opt.chunks);
  cmd->add_option("--memory-budget", opt.budget, "the fewest chunks whose estimated peak fits (bytes, or 8GiB, 6000MiB)");
  cmd->add_option("--device", opt.device, "cost-model device: h200 (default) or h100");
  cmd->add_option("--min-bytes", opt.min_bytes, "an amplifier's result is at least this large (default 64MiB)");
  cmd->add_option("--min-ratio", opt.min_ratio, "an amplifier's result is this many times its inputs' bytes (default 2)");
  cmd->add_option("--hint", opt.hints, "SYMBOL=VALUE: plan at this size of a dynamic graph (repeatable)");
  cmd->add_flag("--verify", opt.verify, "compare the chunked graph with the input in the float64 reference interpreter");
  cmd->callback([] { run_chunk(opt); });
}

}  // namespace sator::cli
