// libFuzzer target: the whole load path (reader + shape check) on arbitrary
// bytes. Anything but a clean GraphError is a bug. Build with
//   CXX=clang++ cmake -S . -B build-fuzz -DSATOR_FUZZ=ON -DSATOR_TESTS=OFF -DSATOR_BENCH=OFF
//   build-fuzz/fuzz_loader tests/fuzz/seeds -max_total_time=600
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/graph_io.h"
#include "ir/shape_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    sator::Graph g = sator::read_graph_text(text, "fuzz.json");
    sator::ShapeProver prover(g.symbols, /*z3_timeout_ms=*/50);
    sator::check_shapes(g, prover);
    // What was read must write and read back to the same graph.
    sator::Graph again = sator::read_graph_text(sator::write_graph_text(g), "fuzz-rewritten.json");
    if (!(again == g)) __builtin_trap();
  } catch (const sator::GraphError&) {
  }
  return 0;
}
