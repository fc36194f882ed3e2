#include <catch2/catch.hpp>

#include <filesystem>

#include "interp/graph_eval.h"
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

TEST_CASE("constants are packed, written back as read, and evaluated", "[io][interp]") {
  // One constant per leaf kind torch's tolist() writes, and one mixing kinds
  // (kept as a general list); each added to x, which the interpreter runs.
  auto graph = [](const std::string& value, const char* dtype) {
    return test::document(
        std::string(R"({"name":"x","op":"placeholder","role":"input","shape":[2,3],"stride":[3,1],"dtype":"float32"},)") +
        R"({"name":"c","op":"get_attr","target":"_c","value":)" + value +
        R"(,"args":[],"shape":[2,3],"stride":[3,1],"dtype":")" + dtype + R"("},)" +
        R"({"name":"y","op":"aten.add.Tensor","args":[{"node":"x"},{"node":"c"}],"shape":[2,3],"stride":[3,1],"dtype":"float32"},)" +
        R"({"name":"output","op":"output","args":[[{"node":"y"}]]})");
  };
  struct Case {
    std::string value;
    const char* dtype;
    bool packed;
    std::vector<double> elements;
  };
  const std::vector<Case> cases = {
      {"[[1.5,-2.0,0.25],[3.0,1e-05,-0.0]]", "float32", true, {1.5, -2.0, 0.25, 3.0, 1e-05, -0.0}},
      {"[[1,-2,3],[9007199254740993,0,5]]", "int64", true, {1, -2, 3, 9007199254740993.0, 0, 5}},
      {"[[true,false,true],[false,false,true]]", "bool", true, {1, 0, 1, 0, 0, 1}},
      {"[[1,2.5,3],[4,5,6]]", "float32", false, {1, 2.5, 3, 4, 5, 6}},
  };
  for (const Case& c : cases) {
    INFO(c.value);
    const std::string text = graph(c.value, c.dtype);
    const Graph g = read_graph_text(text, "constant.json");
    const Value& v = *g.nodes[1].value;
    CHECK((v.kind == Value::Kind::Numbers) == c.packed);
    if (c.packed) {
      REQUIRE(v.numbers->size() == 6);
      CHECK(v.numbers->dims == std::vector<int64_t>{2, 3});
    }
    const std::string written = write_graph_text(g);
    CHECK(written.find(c.value) != std::string::npos);  // the same text back
    CHECK(read_graph_text(written, "again.json") == g);
    interp::Tensor64 x = interp::Tensor64::filled({2, 3}, 10.0, DType::Float32);
    const auto out = interp::evaluate_graph(g, {x});
    REQUIRE(out.size() == 1);
    for (size_t k = 0; k < 6; ++k) CHECK(out[0].tensor.data[k] == 10.0 + c.elements[k]);
  }
}
