// The model of ATen's reduction staging buffer against what the H100
// measured (python/gpu/reduction_workspace.py; tests/data/reduction_workspace_h100.json):
// every case, its bytes within 4 KiB (the allocator rounds each of the
// buffer and the semaphores up to 512 bytes), and how it enters the
// peak estimate.
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "memory/peak_memory.h"
#include "memory/reduction_staging.h"
#include "ir/graph_builder.h"

using namespace sator;

TEST_CASE("reduction staging: the model gives what the H100 measured, case by case", "[peak][reduction]") {
  std::ifstream in(std::string(SATOR_TESTS_DIR) + "/data/reduction_workspace_h100.json");
  REQUIRE(in.good());
  const nlohmann::json data = nlohmann::json::parse(in);
  REQUIRE(data["cases"].size() >= 40);
  int staged = 0;
  for (const auto& c : data["cases"]) {
    memory::CudaReduction r;
    r.shape = c["shape"].get<std::vector<int64_t>>();
    r.stride = c["strides"].get<std::vector<int64_t>>();
    r.reduced.assign(r.shape.size(), false);
    for (int64_t d : c["dims"].get<std::vector<int64_t>>())
      r.reduced[static_cast<size_t>(d < 0 ? d + static_cast<int64_t>(r.shape.size()) : d)] = true;
    r.element_bytes = c["dtype"] == "float32" ? 4 : 2;
    r.accumulator_bytes = c["op"] == "var_mean" ? 16 : 4;
    const double model = memory::cuda_reduction_staging_bytes(r, data["sms"], data["max_threads_per_sm"]);
    const double measured = c["transient_bytes"].get<double>();
    INFO(c.dump());
    CHECK(std::abs(model - measured) <= 4096);
    staged += measured > (1 << 20);
  }
  CHECK(staged >= 20);  // the cases hold both kinds: staged and not
}

TEST_CASE("reduction staging enters the peak estimate while the reduction runs", "[peak][reduction]") {
  // A bias gradient: sum over the tokens of a [8192, 1024] float32 tensor
  // stages 64 MiB; the same sum over the hidden dim stages nothing.
  for (const int64_t dim : {0, 1}) {
    GraphBuilder b("bias_grad");
    const NodeId x = b.input({8192, 1024});  // 32 MiB
    const NodeId s = b.op("aten.sum.dim_IntList", {GraphBuilder::ref(x), GraphBuilder::ints({dim}), Value::of_bool(true)});
    const Graph g = b.finish({s});
    const double result = dim == 0 ? 1024 * 4 : 8192 * 4;
    const double staging = memory::reduction_staging_bytes(g, g.nodes[s]);
    const auto m = memory::estimate_peak_memory(g);
    INFO("dim " << dim);
    if (dim == 0) CHECK(staging == Approx(64.0 * (1 << 20)).epsilon(0.001));
    else CHECK(staging == 0);
    CHECK(m.peak_bytes == Approx(8192.0 * 1024 * 4 + result + staging));
  }
}
