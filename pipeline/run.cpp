#include "pipeline/run.h"

#include <cstdio>

#include "ir/graph_io.h"
#include "ir/shape_check.h"

namespace sator::pipeline {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

chunk::ChunkPlan plan_or_refuse(const std::string& path, const Graph& g, const chunk::ChunkOptions& o) {
  chunk::ChunkPlan plan;
  try {
    plan = chunk::plan_chunking(g, o);
  } catch (const std::invalid_argument& e) {
    throw GraphError(path, "", e.what());
  }
  if (o.memory_budget && plan.peak_after > *o.memory_budget) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "--memory-budget %.0f MiB cannot be met: the least estimated peak is %.0f MiB",
                  *o.memory_budget / (1024.0 * 1024.0), plan.peak_after / (1024.0 * 1024.0));
    throw GraphError(path, "", std::string(buf) + (plan.chunked ? "" : " (not chunked: " + plan.why_not + ")"));
  }
  return plan;
}

RunResult run_file(const std::string& path, const RunOptions& options) {
  RunResult run;
  const auto deadline = options.start + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(options.time_limit_s));
  auto t = Clock::now();
  run.input = load_graph(path);
  run.load_ms = ms_since(t);

  OptimizeOptions opts = options.optimize;
  opts.copy_kept_input = false;  // output() reads the input where it is kept
  opts.time_limit_s = std::max(1e-3, std::chrono::duration<double>(deadline - Clock::now()).count());
  run.result = optimize(run.input, opts);

  if (options.chunk) {
    // Chunking runs on the extracted graph, within the same deadline.
    t = Clock::now();
    chunk::ChunkOptions co = *options.chunk;
    co.deadline = deadline;
    run.plan = plan_or_refuse(path, run.output(), co);
    if (run.plan->time_limited) run.result.limited.push_back("chunk planning");
    // Moved, not copied (the plan's report reads its figures, never its
    // graph): a copy of a 165,000-node graph was a tenth of --chunks auto.
    run.result.output = std::move(run.plan->graph);
    run.result.peak_out.reset();  // the chunked graph's own peak: the report estimates it
    run.result.output_is_input = false;  // planning may have chunked it
    run.result.nodes_out = run.result.output.nodes.size();
    check_output_target(run.result.output, run.input, opts.target);
    run.chunk_ms = ms_since(t);
  }

  if (options.decline_without_gain) {
    const bool fused = run.result.sdpa_out > run.result.sdpa_in || run.result.attention_changed > 0;
    const bool chunked = run.plan && run.plan->chunked;
    if (!fused && !chunked) {
      run.declined = "nothing to gain: no attention fused or changed and no chunking (layout rewrites alone are not "
                     "worth the risk)";
      run.result.output = Graph();
      run.result.output_is_input = true;
      run.result.nodes_out = run.result.nodes_in;
      run.result.layout_ops_out = run.result.layout_ops_in;
      run.result.cost_out = run.result.cost_in;
      run.result.sdpa_out = run.result.sdpa_in;
    }
  }
  // Verified before the caller writes anything: a graph that fails is not output.
  if (options.verify) run.verified = interp::verify_optimized(run.input, run.output(), options.verify_options);
  return run;
}

}  // namespace sator::pipeline
