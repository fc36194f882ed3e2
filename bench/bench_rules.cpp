// The rule language's per-process cost: reading the shipped rule files and
// compiling their rules (each process does both once, before its first
// saturation; on graphs that saturate in a millisecond it is most of the
// time), and making the rewrites for one e-graph.
#include <benchmark/benchmark.h>

#include "ir/graph_builder.h"
#include "rulelang/rule_set.h"

using namespace sator;

namespace {

void BM_ParseShippedRules(benchmark::State& state) {
  const std::vector<std::string> names = rulelang::shipped_rule_file_names();
  std::vector<std::string> sources;
  for (const std::string& n : names) sources.push_back(rulelang::shipped_rule_source(n));
  for (auto _ : state)
    for (size_t i = 0; i < names.size(); ++i)
      benchmark::DoNotOptimize(rulelang::parse_rule_text(sources[i], "rules/" + names[i] + ".rules"));
}
BENCHMARK(BM_ParseShippedRules)->Unit(benchmark::kMicrosecond);

void BM_CompileShippedRules(benchmark::State& state) {
  std::vector<rulelang::RuleFile> files;
  for (const std::string& n : rulelang::shipped_rule_file_names()) files.push_back(rulelang::shipped_rule_file(n));
  for (auto _ : state)
    for (const rulelang::RuleFile& f : files)
      for (const rulelang::RuleSpec& spec : f.rules) benchmark::DoNotOptimize(rulelang::compile_rule(spec));
}
BENCHMARK(BM_CompileShippedRules)->Unit(benchmark::kMicrosecond);

void BM_MakeShippedRewrites(benchmark::State& state) {
  GraphBuilder b("one");
  const NodeId x = b.input({SymExpr(4), SymExpr(8)});
  const Graph g = b.finish({b.op("aten.neg.default", {GraphBuilder::ref(x)})});
  std::vector<rulelang::RuleFile> files;
  for (const std::string& n : rulelang::shipped_rule_file_names()) files.push_back(rulelang::shipped_rule_file(n));
  for (auto _ : state) {
    TensorEGraph t(g);
    benchmark::DoNotOptimize(rulelang::make_rewrites(files, t));
  }
}
BENCHMARK(BM_MakeShippedRewrites)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
