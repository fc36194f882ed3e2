// What `sator optimize` and `sator greedy` print and write as their JSON
// report (design.md's report fields), shared so that both read alike and
// `compare` and `batch` can put them side by side.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "interp/verify.h"
#include "pipeline/greedy.h"
#include "pipeline/optimize.h"

namespace sator::cli {

struct RunContext {
  std::string method;     // "saturation" or "greedy"
  std::string extractor;  // saturation: tree, dag or ilp
  std::string cost = "roofline", device = "h200";
  double load_ms = 0, write_ms = 0, total_ms = 0, chunk_ms = 0;
  double time_limit_s = 0;  // saturation: --time-limit (0: none reported)
  const pipeline::GreedyResult* greedy = nullptr;  // greedy's own counters
  const interp::VerifyResult* verify = nullptr;
  // The input's and the output's estimated peaks, computed once for both
  // the report and the summary (each estimate is a pass over the graph:
  // four of them took 0.3 s at 165,000 nodes after the run's own time).
  mutable std::optional<double> peak_in, peak_out;
};

// Refuses (GraphError naming `path`, exit status 2) an unknown cost model,
// device (cost::find_device), or extractor (pass "" where there is none).
void check_model_options(const std::string& path, const std::string& cost, const std::string& device,
                         const std::string& extractor);

nlohmann::ordered_json run_report(const Graph& input, const pipeline::OptimizeResult& r, const RunContext& c);
// The human-readable lines (stdout).
void print_run(const Graph& input, const pipeline::OptimizeResult& r, const RunContext& c);

// The exit status of `optimize --verify` where the verification was skipped
// (a graph too large for the float64 reference, an op it cannot run, fused
// dropout): the output is written, the run is not verified.
constexpr int kExitNotVerified = 3;

// --verify's line (stdout), and its failure: said on stderr, then
// CLI::RuntimeError(1) (exit status 1: a finding about the optimizer).
void print_verify(const interp::VerifyResult& v);
// --verify's options: progress on stderr through a region-by-region
// comparison (one line per region, or one line rewritten on a terminal).
interp::VerifyOptions verify_options();
void fail_if_unverified(const std::string& path, const interp::VerifyResult& v);
// Exits kExitNotVerified where the verification was skipped (after the
// output and the report are written).
void exit_if_not_verified(const interp::VerifyResult& v);

}  // namespace sator::cli
