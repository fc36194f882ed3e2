// Choosing what to chunk and how many ways: amplifiers (matmuls whose result
// is much larger than their inputs), the region each one's chunk dims reach
// (region.h), and the chunk count from the peak-memory estimate and the cost
// model: the fewest chunks that meet a memory budget, or with "auto" the
// last doubling whose memory saving (a fraction of the unchunked peak) is
// larger than its time cost (a fraction of the unchunked time).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cost/roofline.h"
#include "ir/graph.h"

namespace sator::chunk {

struct ChunkOptions {
  std::optional<int64_t> chunks;        // nullopt: auto
  std::optional<double> memory_budget;  // bytes; the fewest chunks that meet it
  double min_amplification = 2.0;       // result bytes / input bytes
  double min_result_bytes = 64.0 * 1024 * 1024;
  // The largest amplifiers (by result bytes) the planner tries a region
  // around. Each try writes the chunked graph and estimates its peak, both
  // linear in the graph, so trying every amplifier of a graph with N layers
  // or N stacked models grew as N² (4 copies of GPT-2's training graph: 16 s);
  // the peak is set by the largest results, which come first.
  size_t max_amplifiers = 8;
  const cost::Device* device = nullptr;  // the cost model's device (required)
  // Planning stops trying regions and chunk counts here and keeps the best
  // found so far (none: the graph stays as it is); plan.time_limited says so.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

struct ChunkTrial {
  int64_t chunks;
  double peak_bytes;
  double seconds;  // eager, the whole graph
};

struct ChunkPlan {
  bool chunked = false;
  std::string why_not;  // when not chunked
  std::string amplifier, amplifier_op;
  double amplification = 0;  // result bytes / input bytes
  int64_t dim = 0;           // of the amplifier's result
  std::string rows;          // the row range, e.g. "16" or "s0"
  int64_t chunks = 1;
  bool remainder_chunk = false;  // the rows do not split evenly (Z3 could not prove it)
  size_t region_nodes = 0, inputs = 0, outputs = 0;
  std::string tangent;           // a scalar tangent taken out of the chunked node (scale_by)
  size_t tangent_scaled = 0;     // results multiplied by it afterwards
  std::string tangent_why_not;   // why a tangent the node reads stays in it
  double peak_before = 0, peak_after = 0;
  std::string peak_node_before, peak_node_after;  // where each peak is reached
  double seconds_before = 0, seconds_after = 0;
  bool time_limited = false;  // the deadline cut the planning short
  std::vector<ChunkTrial> trials;  // chunk counts tried for the chosen region
  Graph graph;                     // the chunked graph (the input when not chunked); run_file moves it into its result
};

// Throws std::invalid_argument for a budget no chunking can meet (the
// message gives the least peak reached).
ChunkPlan plan_chunking(const Graph& g, const ChunkOptions& options);

}  // namespace sator::chunk
