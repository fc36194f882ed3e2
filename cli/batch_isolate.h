// One batch graph in a child process (`sator batch-one`, this same binary),
// so that a crash, a hang past the per-graph limit or an allocation past the
// per-graph memory limit in one graph is that graph's failure, not the
// batch's; and Ctrl-C, which only the parent handles, stops the pool.
#pragma once

#include <atomic>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/batch.h"

namespace sator::cli {

struct IsolationLimits {
  double seconds = 600;  // per graph; then the child is killed
  double memory_bytes = 0;  // per graph address space; 0: none
};

struct IsolatedRun {
  enum class Kind { Finished, Failed, Interrupted } kind = Kind::Failed;
  nlohmann::ordered_json result;  // Finished: the child's result; Failed: a failure record
};

// Runs graph `b` in a child that writes its result to `result_path`; waits
// for it, killing it at the time limit or when `stop` becomes true.
IsolatedRun run_isolated(const BatchInput& b, const std::string& result_path, const CompareOptions& c,
                         const IsolationLimits& limits, const std::atomic<bool>& stop);

// The child's side: compares one graph and writes its result file (status
// ok, or failed with the error); returns the exit status.
int run_batch_one(const std::string& graph, const std::string& name, const std::string& result_path,
                  const CompareOptions& c, double memory_bytes);

// SIGINT and SIGTERM set the returned flag instead of ending the process
// (installed once, by the parent of a batch).
const std::atomic<bool>& interrupt_flag();

}  // namespace sator::cli
