// libFuzzer target: `sator optimize` with small limits on every graph the
// loader accepts. The loader may refuse the bytes (GraphError, exit 2); once
// it accepted a graph, anything optimize, chunk planning or the writer
// throws is an internal error (the CLI's exit 1) and traps here, as does a
// crash or a sanitizer report. Build: see fuzz_loader.cpp; run
//   build-fuzz/fuzz_optimize DIR tests/fuzz/seeds -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chunk/plan.h"
#include "cost/roofline.h"
#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "pipeline/optimize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  sator::Graph g;
  try {
    g = sator::read_graph_text(text, "fuzz.json");
    sator::ShapeProver prover(g.symbols, /*z3_timeout_ms=*/50);
    sator::require_consistent_shapes(g, sator::check_shapes(g, prover), "fuzz.json");
  } catch (const sator::GraphError&) {
    return 0;  // refused with a message: the CLI's exit 2
  }
  try {
    sator::pipeline::OptimizeOptions o;
    o.iter_limit = 4;
    o.node_limit = 20000;
    o.time_limit_s = 2;
    o.target = (size & 1) ? "inductor-joint" : "any";
    sator::pipeline::OptimizeResult r = sator::pipeline::optimize(g, o);
    sator::chunk::ChunkOptions c;
    c.device = sator::cost::find_device("h200");
    c.min_result_bytes = 1;  // the fuzzer's graphs are small: let the planner work on them
    c.chunks = 2;
    (void)sator::chunk::plan_chunking(r.output, c);
  } catch (const sator::GraphError&) {
    // Refusals that name the graph (an impossible plan) are the CLI's exit 2.
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
