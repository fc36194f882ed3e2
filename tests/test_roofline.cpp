// The roofline model: what each kind of op costs and why.
#include <catch2/catch.hpp>

#include "extract/graph_cost.h"
#include "extract/roofline.h"
#include "ir/shape_check.h"
#include "test_util.h"

using namespace sator;
using namespace sator::extract;

TEST_CASE("roofline: matmuls by flops, pointwise by bytes, views free, attention without scores", "[cost]") {
  const Device& d = *find_device("h200");
  CHECK(find_device("a100") == nullptr);
  const Operand a{{4096, 4096}, DType::BFloat16}, b{{4096, 4096}, DType::BFloat16};
  const OpCost mm = roofline_cost(d, "aten.mm.default", {a, b}, {a});
  CHECK(mm.kind == CostKind::Matmul);
  CHECK(mm.flops == Approx(2.0 * 4096.0 * 4096.0 * 4096.0));
  CHECK(mm.seconds == Approx(mm.flops / d.matmul_flops_16bit + d.launch_s));  // compute-bound
  // fp32 runs at the (slower) TF32 rate.
  const Operand af{{4096, 4096}, DType::Float32};
  CHECK(roofline_cost(d, "aten.mm.default", {af, af}, {af}).seconds > mm.seconds);
  // A pointwise add moves 3 tensors and is memory-bound.
  const OpCost add = roofline_cost(d, "aten.add.Tensor", {a, b}, {a});
  CHECK(add.kind == CostKind::Memory);
  CHECK(add.bytes == Approx(3.0 * 4096 * 4096 * 2));
  CHECK(add.seconds == Approx(add.bytes / d.bandwidth + d.launch_s));
  // Views cost nothing compiled, their dispatch in eager; plumbing nothing at all.
  const OpCost view = roofline_cost(d, "aten.view.default", {a}, {a});
  CHECK(view.seconds == 0.0);
  CHECK(view.eager_seconds == h200_eager_floor_s("aten.view.default"));  // measured
  CHECK(roofline_cost(d, "aten.unheard_of_view.default", {a}, {a}).kind == CostKind::Memory);
  CHECK(roofline_cost(d, "getitem", {a}, {a}).eager_seconds == 0.0);
  CHECK(roofline_cost(d, "aten.clone.default", {a}, {a}).kind == CostKind::Copy);
  // Tiny ops sit on their measured eager floor; an op the table lacks on its kind's.
  const Operand tiny{{4}, DType::Float32};
  CHECK(roofline_cost(d, "aten.mul.Tensor", {tiny}, {tiny}).eager_seconds == h200_eager_floor_s("aten.mul.Tensor"));
  CHECK(roofline_cost(d, "aten.unheard_of.default", {tiny}, {tiny}).eager_seconds == d.eager_kernel_dispatch_s);
  // Big ones exceed it: the kernel decides.
  CHECK(add.eager_seconds == Approx(add.bytes / d.bandwidth));
  // Fused attention moves q, k, v and the output, never the L x S scores.
  const Operand q{{8, 16, 2048, 64}, DType::BFloat16};
  const OpCost sdpa = roofline_cost(d, "aten.scaled_dot_product_attention.default", {q, q, q}, {q});
  CHECK(sdpa.kind == CostKind::Attention);
  CHECK(sdpa.bytes == Approx(4.0 * q.bytes()));
  CHECK(sdpa.flops == Approx(2.0 * 8 * 16 * 2048.0 * 2048.0 * 128));
}

TEST_CASE("roofline over a corpus graph: fusing attention lowers the estimate", "[cost][corpus]") {
  const Device& d = *find_device("h200");
  const Graph g = load_graph(test::corpus_path("graphs/gpt2.infer.g0.json"));
  const auto costs = graph_costs(g, d);
  REQUIRE(costs.size() == g.nodes.size());
  const double total = total_seconds(costs), eager = total_eager_seconds(costs);
  CHECK(total > 100e-6);
  CHECK(eager > total);  // eager pays dispatch for every op, views included
  // Every matmul-family node is costed as a matmul, and nothing else is.
  size_t matmuls = 0, matmul_nodes = 0;
  for (const auto& c : costs) matmuls += c.cost.kind == CostKind::Matmul;
  for (const Node& n : g.nodes)
    matmul_nodes += n.op == "aten.mm.default" || n.op == "aten.bmm.default" || n.op == "aten.addmm.default" ||
                    n.op == "aten.matmul.default" || n.op == "aten.linear.default" || n.op == "aten.baddbmm.default";
  CHECK(matmul_nodes > 0);
  CHECK(matmuls == matmul_nodes);
}
