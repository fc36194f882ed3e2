#include <catch2/catch.hpp>

#include <filesystem>

#include "ir/graph_io.h"
#include "test_util.h"

using namespace sator;
namespace fs = std::filesystem;

namespace {
std::vector<std::string> corpus_files() {
  std::vector<std::string> files;
  for (const char* dir : {"graphs", "inductor"})
    for (const auto& entry : fs::directory_iterator(test::corpus_path(dir)))
      if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}
}  // namespace

TEST_CASE("every corpus graph round-trips exactly: load, write, load", "[io][corpus]") {
  const auto files = corpus_files();
  REQUIRE(files.size() >= 92);
  for (const auto& f : files) {
    INFO(f);
    Graph g = read_graph_file(f);
    const std::string text = write_graph_text(g);
    Graph again = read_graph_text(text, f + " (rewritten)");
    CHECK(again == g);
    CHECK(write_graph_text(again) == text);  // the writer is deterministic
  }
}

TEST_CASE("round trip keeps values the format spells specially", "[io]") {
  const std::string doc = test::document(
      R"({"name":"x","op":"placeholder","role":"input","shape":["s0",3],"stride":[3,1],"dtype":"float32"},)"
      R"({"name":"c","op":"get_attr","target":"_c","value":[[1.5,-2.0]],"args":[],"shape":[1,2],"stride":[2,1],"dtype":"float32"},)"
      R"({"name":"y","op":"my.op","args":[{"node":"x"},{"float":"-inf"},{"float":"nan"},{"sym":"2*s0"},{"dtype":"bfloat16"},)"
      R"({"device":"cuda:0"},{"enum":"torch.contiguous_format"},"sum",{"dict":{"a":[1,2]}},{"repr":"<obj>"},null,true,)"
      R"(-3.4028234663852886e+38,9223372036854775807],"kwargs":{"z":1,"a":2},"outputs":[null,{"scalar":4},)"
      R"({"shape":[],"stride":[],"dtype":"int64"}]},)"
      R"({"name":"output","op":"output","args":[[{"node":"x"},null]]})",
      R"([{"name":"s0","hint":4,"min":2,"max":128}])");
  Graph g = read_graph_text(doc, "t.json");
  Graph again = read_graph_text(write_graph_text(g), "t2.json");
  CHECK(again == g);
  const Node& y = again.nodes[2];
  REQUIRE(y.args.size() == 14);
  CHECK(std::isinf(y.args[1].f));
  CHECK(y.args[1].f < 0);
  CHECK(std::isnan(y.args[2].f));
  CHECK(y.args[3].sym == parse_sym_expr("2*s0"));
  CHECK(y.args[12].f == -3.4028234663852886e+38);
  CHECK(y.args[13].i == INT64_MAX);
  CHECK(y.kwargs[0].first == "z");  // file order kept
  CHECK(again.symbols[0].max == 128);
}

TEST_CASE("the writer is atomic: a failed write leaves nothing behind", "[io]") {
  Graph g = read_graph_file(test::corpus_path("graphs/zoo_sdpa.infer.g0.json"));
  const fs::path dir = fs::temp_directory_path() / "sator_atomic_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = (dir / "out.json").string();
  write_graph_file(g, out);
  CHECK(read_graph_file(out) == g);
  CHECK_THROWS_AS(write_graph_file(g, (dir / "missing" / "out.json").string()), GraphError);
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  CHECK(entries == 1);  // no temporary files left
  fs::remove_all(dir);
}
