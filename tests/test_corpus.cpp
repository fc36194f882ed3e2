// The real graphs: every inferred shape and dtype equals the recorded one,
// and the counts agree with corpus/manifest.json.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ir/graph_io.h"
#include "ir/graph_stats.h"
#include "ir/shape_check.h"
#include "test_util.h"

using namespace sator;

TEST_CASE("zero shape mismatches and manifest counts on every corpus graph", "[corpus]") {
  std::ifstream in(test::corpus_path("manifest.json"));
  const auto manifest = nlohmann::json::parse(in);
  REQUIRE(manifest.size() == 46);
  size_t inferred_total = 0;
  for (const auto& entry : manifest) {
    for (const char* variant : {"graphs", "inductor"}) {
      const std::string name = entry["graph"].get<std::string>();
      const std::string path = test::corpus_path(std::string(variant) + "/" + name + ".json");
      INFO(path);
      Graph g = read_graph_file(path);
      ShapeProver prover(g.symbols);
      ShapeCheckReport report = check_shapes(g, prover);
      for (const auto& issue : report.issues) FAIL_CHECK(g.nodes[issue.node].name << ": " << issue.message);
      CHECK(report.issues.empty());
      CHECK(report.checked > g.nodes.size() / 2);
      inferred_total += report.checked;

      const auto& expected = entry[std::string(variant) == "graphs" ? "input" : "inductor"];
      const GraphStats stats = compute_stats(g);
      CHECK(stats.nodes == expected["nodes"].get<size_t>());
      CHECK(stats.layout_ops == expected["layout_ops"].get<size_t>());
      CHECK(stats.sdpa_ops == expected["sdpa"].get<size_t>());
    }
  }
  CHECK(inferred_total > 20000);
}

TEST_CASE("only the higher-order subgraph call is opaque in the corpus", "[corpus]") {
  Graph g = read_graph_file(test::corpus_path("inductor/gpt2-124m.train.g0.json"));
  ShapeProver prover(g.symbols);
  ShapeCheckReport report = check_shapes(g, prover);
  REQUIRE(report.opaque_ops.size() == 2);
  CHECK(report.opaque_ops[0] == "hop.invoke_subgraph");
  CHECK(report.opaque_ops[1] == "getitem");  // elements of its unrecorded tuple
  CHECK(report.issues.empty());
}

TEST_CASE("symbolic graphs use the prover, static ones never reach Z3", "[corpus]") {
  Graph stat = read_graph_file(test::corpus_path("graphs/gpt2-124m.train.g0.json"));
  ShapeProver p1(stat.symbols);
  check_shapes(stat, p1);
  CHECK(p1.stats().queries > 1000);
  CHECK(p1.stats().z3_calls == 0);

  Graph dyn = read_graph_file(test::corpus_path("graphs/llama.train.dyn.g0.json"));
  REQUIRE_FALSE(dyn.symbols.empty());
  ShapeProver p2(dyn.symbols);
  CHECK(check_shapes(dyn, p2).issues.empty());
  CHECK(p2.stats().canonical > p2.stats().z3_calls);
}
