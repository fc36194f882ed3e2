// `sator batch` and `sator batch-merge`: many graphs compared on a thread
// pool, one result file per graph, and summaries (docs/batch.md).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/comparison.h"

namespace sator::cli {

struct BatchInput {
  std::string name;  // the file's stem: names its result file
  std::string path;
};

// The graphs a DIR (its *.json files) or a MANIFEST lists, sorted by name.
// A manifest is the corpus's manifest.json (entries with "graph": NAME, read
// from graphs/NAME.json beside it), a JSON array of paths, or a text file of
// paths, one per line (# comments); paths are relative to the manifest.
// Throws GraphError for a missing source or two graphs of one name.
std::vector<BatchInput> list_batch_inputs(const std::string& source);

// Shard i of n (1 <= i <= n): the graphs whose name hashes to it, so a
// graph's shard does not change as others are added.
std::vector<BatchInput> shard_of(const std::vector<BatchInput>& all, size_t index, size_t count);

struct BatchOptions {
  std::string source, out;
  size_t jobs = 0;  // 0: every core
  size_t shard_index = 1, shard_count = 1;
  bool resume = false;
  bool list_only = false;  // print the graphs the run would take, run none
  CompareOptions compare;
  double graph_seconds = 600;     // per-graph time limit (its worker is killed)
  double graph_memory_bytes = 0;  // per-graph memory limit; 0: none
};

// Runs the batch, each graph in a worker process (batch_isolate.h); returns
// the exit status: 0 every graph ok, 1 some failed, 130 interrupted (Ctrl-C:
// finished results kept, summaries written, --resume continues).
int run_batch(const BatchOptions& o);

// Merges the results of several batch output folders into `out` (results
// copied, summaries rewritten). With `expect` (the batch's source: a folder
// or manifest), the graphs it lists that no folder holds a result of (a
// shard that never finished) are listed in the summaries as not run.
// Returns the exit status as run_batch: 1 if any graph failed or was not run.
int merge_batches(const std::vector<std::string>& dirs, const std::string& out, const std::string& expect = "");

// Writes summary.csv, summary.json, summary.md and timings.csv in `out` from
// the result objects (sorted by graph name) and the names of the graphs that
// have none (`not_run`); returns how many failed or were not run.
size_t write_summaries(const std::string& out, std::vector<nlohmann::ordered_json> results,
                       const std::vector<std::string>& not_run = {});

}  // namespace sator::cli
