// One graph file through the whole pipeline, as `sator optimize` runs it:
//   load -> saturate -> extract -> write back in the extraction's order
//   (pipeline/optimize.h) -> chunk (chunk/plan.h) -> verify (--verify) ->
//   write the output file.
// A graph that fails --verify, or a run that throws, writes no file.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "chunk/plan.h"
#include "interp/verify.h"
#include "ir/graph.h"
#include "pipeline/optimize.h"

namespace sator::pipeline {

struct RunOptions {
  // The whole run's time, from `start` (loading, saturation, extraction and
  // chunk planning share it; writing, which must finish, is not cut).
  double time_limit_s = 10.0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  OptimizeOptions optimize;  // its time_limit_s is what loading leaves
  std::optional<chunk::ChunkOptions> chunk;  // chunk the extracted graph
  bool verify = false;     // float64 reference run of input and output
  interp::VerifyOptions verify_options;
  // Write the input unchanged when sator fused no attention, changed no
  // attention call and chunked nothing: layout rewrites alone are not worth
  // a user's step (measured from 2.8% faster to 1.4% slower on the zoo's
  // training steps, docs/results/zoo.md).
  bool decline_without_gain = false;
};

struct RunResult {
  Graph input;
  OptimizeResult result;  // output(): the graph to write (the caller writes it)
  std::optional<chunk::ChunkPlan> plan;
  std::optional<interp::VerifyResult> verified;
  std::string declined;  // why the input was written unchanged ("" when it was not)
  double load_ms = 0, chunk_ms = 0;
  // The graph to write: the optimized one, or the input where it was kept
  // (not copied into result.output).
  const Graph& output() const { return kept_or_output(result, input); }
};

// Throws GraphError (bad input, an impossible --memory-budget) naming
// `path`, and what optimize() throws.
RunResult run_file(const std::string& path, const RunOptions& options);

// The chunk step: the planner, with a budget it cannot meet refused as a
// GraphError naming `path` rather than written as if it were met.
chunk::ChunkPlan plan_or_refuse(const std::string& path, const Graph& g, const chunk::ChunkOptions& o);

}  // namespace sator::pipeline
