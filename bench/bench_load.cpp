// Loading cost of the largest corpus graph: JSON parsing alone (the floor set
// by nlohmann-json), sator's reader, and reader plus shape check. Run with
//   build/bench/bench_load --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/graph_io.h"
#include "ir/shape_check.h"

namespace {

std::string slurp(const std::string& name) {
  std::ifstream in(std::string(SATOR_CORPUS_DIR) + "/graphs/" + name);
  std::ostringstream b;
  b << in.rdbuf();
  return b.str();
}

const std::string& largest() {
  static const std::string text = slurp("gpt2-124m.train.g0.json");
  return text;
}

void BM_JsonParseOnly(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(nlohmann::ordered_json::parse(largest()));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(largest().size()));
}
BENCHMARK(BM_JsonParseOnly)->Unit(benchmark::kMillisecond);

void BM_ReadGraph(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(sator::read_graph_text(largest(), "gpt2-124m.train.g0.json"));
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(largest().size()));
}
BENCHMARK(BM_ReadGraph)->Unit(benchmark::kMillisecond);

void BM_ReadAndShapeCheck(benchmark::State& state) {
  for (auto _ : state) {
    sator::Graph g = sator::read_graph_text(largest(), "gpt2-124m.train.g0.json");
    sator::ShapeProver prover(g.symbols);
    benchmark::DoNotOptimize(sator::check_shapes(g, prover));
  }
}
BENCHMARK(BM_ReadAndShapeCheck)->Unit(benchmark::kMillisecond);

void BM_WriteGraph(benchmark::State& state) {
  sator::Graph g = sator::read_graph_text(largest(), "gpt2-124m.train.g0.json");
  for (auto _ : state) benchmark::DoNotOptimize(sator::write_graph_text(g));
}
BENCHMARK(BM_WriteGraph)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
