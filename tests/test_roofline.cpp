// The roofline model: what each kind of op costs and why.
#include <catch2/catch.hpp>

#include "cost/graph_cost.h"
#include "cost/attention_table.h"
#include "cost/roofline.h"
#include "ir/shape_check.h"
#include "test_util.h"

using namespace sator;
using namespace sator::cost;

TEST_CASE("roofline: matmuls by flops, pointwise by bytes, views free, attention without scores", "[cost]") {
  const Device& d = *find_device("h200");
  CHECK(find_device("a100") == nullptr);
  const Operand a{{4096, 4096}, DType::BFloat16}, b{{4096, 4096}, DType::BFloat16};
  const OpCost mm = roofline_cost(d, "aten.mm.default", {a, b}, {a});
  CHECK(mm.kind == CostKind::Matmul);
  CHECK(mm.flops == Approx(2.0 * 4096.0 * 4096.0 * 4096.0));
  CHECK(mm.gpu_seconds == Approx(d.kernel_min_matmul_s + mm.flops / d.matmul_flops_16bit));  // compute-bound
  CHECK(mm.seconds == Approx(mm.gpu_seconds + d.launch_s));
  // fp32 runs at the (slower) TF32 rate.
  const Operand af{{4096, 4096}, DType::Float32};
  CHECK(roofline_cost(d, "aten.mm.default", {af, af}, {af}).seconds > mm.seconds);
  // A last dim that is not a multiple of 16 bytes (GPT-2's vocabulary) takes cuBLAS's slow path.
  const Operand w{{50257, 768}, DType::BFloat16}, x{{16384, 768}, DType::BFloat16}, y{{16384, 50257}, DType::BFloat16};
  const Operand w8{{50264, 768}, DType::BFloat16}, y8{{16384, 50264}, DType::BFloat16};
  const OpCost head = roofline_cost(d, "aten.linear.default", {x, w}, {y});
  const OpCost padded = roofline_cost(d, "aten.linear.default", {x, w8}, {y8});
  CHECK(head.flops == Approx(2.0 * 16384 * 50257 * 768));
  CHECK(head.gpu_seconds == Approx(d.kernel_min_matmul_s + head.flops / d.matmul_unaligned_flops_16bit));
  CHECK(padded.gpu_seconds < head.gpu_seconds / 3);
  // A pointwise add moves 3 tensors and is memory-bound.
  const OpCost add = roofline_cost(d, "aten.add.Tensor", {a, b}, {a});
  CHECK(add.kind == CostKind::Memory);
  CHECK(add.bytes == Approx(3.0 * 4096 * 4096 * 2));
  CHECK(add.gpu_seconds == Approx(d.kernel_min_memory_s + add.bytes / d.bandwidth));
  // Views cost nothing compiled, their dispatch in eager; plumbing Python's time alone.
  const OpCost view = roofline_cost(d, "aten.view.default", {a}, {a});
  CHECK(view.seconds == 0.0);
  CHECK(view.gpu_seconds == 0.0);
  CHECK(view.host_seconds == h200_eager_host_s("aten.view.default"));  // measured
  CHECK(view.eager_seconds == view.host_seconds);
  CHECK(view.dispatched);
  CHECK(roofline_cost(d, "aten.unheard_of_view.default", {a}, {a}).kind == CostKind::Memory);
  const OpCost item = roofline_cost(d, "getitem", {a}, {a});
  CHECK(item.host_seconds == d.eager_host_plumbing_s);
  CHECK_FALSE(item.dispatched);
  CHECK(roofline_cost(d, "placeholder", {}, {a}).host_seconds == 0.0);
  CHECK(roofline_cost(d, "aten.clone.default", {a}, {a}).kind == CostKind::Copy);
  // Tiny ops cost their measured dispatch; an op the table lacks its kind's.
  const Operand tiny{{4}, DType::Float32};
  CHECK(roofline_cost(d, "aten.mul.Tensor", {tiny}, {tiny}).eager_seconds == h200_eager_host_s("aten.mul.Tensor"));
  CHECK(h200_eager_host_s("aten.unheard_of.default") < 0);
  CHECK(roofline_cost(d, "aten.unheard_of.default", {tiny}, {tiny}).eager_seconds == d.eager_host_kernel_s);
  // Big ones exceed it: the kernel decides.
  CHECK(add.eager_seconds == Approx(add.gpu_seconds));
  // Fused attention moves q, k, v and the output, never the L x S scores.
  const Operand q{{8, 16, 2048, 64}, DType::BFloat16};
  const OpCost sdpa = roofline_cost(d, "aten.scaled_dot_product_attention.default", {q, q, q}, {q});
  CHECK(sdpa.kind == CostKind::Attention);
  CHECK(sdpa.bytes == Approx(4.0 * q.bytes()));
  CHECK(sdpa.flops == Approx(2.0 * 8 * 16 * 2048.0 * 2048.0 * 128));
  // At SDPA's rate: the kernel its dispatch picks there (cuDNN, the fastest
  // measured at [8, 16, 2048, 64] bf16) is the one the rate stands for.
  CHECK(sdpa.gpu_seconds == Approx(d.kernel_min_attention_s + sdpa.flops / d.sdpa_flops_16bit));
  // A kernel called by name is as much slower as the measured table says.
  const Operand lse{{8, 16, 2048}, DType::Float32};
  const OpCost efficient = roofline_cost(d, "aten._scaled_dot_product_efficient_attention.default", {q, q, q}, {q, lse});
  const AttentionTable& table = *attention_table("h200");
  AttentionQuery aq;
  aq.batch_heads = 128, aq.l = aq.s = 2048, aq.e = 64;
  aq.kernel = AttentionKernel::Efficient;
  const double slower = *attention_seconds(table, aq);
  aq.kernel = AttentionKernel::Fastest;
  CHECK(efficient.gpu_seconds - d.kernel_min_attention_s ==
        Approx((sdpa.gpu_seconds - d.kernel_min_attention_s) * slower / *attention_seconds(table, aq)));
  CHECK(efficient.gpu_seconds > 2 * sdpa.gpu_seconds);
  // A bias makes it slower; a causal kernel skips the blocks above the
  // diagonal (its flops: (16 + 1) / 32 of them at L = 2048).
  const Operand bias{{2048, 2048}, DType::BFloat16};
  const OpCost biased = roofline_cost(d, "aten.scaled_dot_product_attention.default", {q, q, q, bias}, {q});
  CHECK(biased.gpu_seconds > sdpa.gpu_seconds);
  const OpCost causal = roofline_cost(d, "aten.scaled_dot_product_attention.default", {q, q, q}, {q}, {.causal = true});
  CHECK(causal.flops == Approx(sdpa.flops * 17.0 / 32.0));
  CHECK(causal.gpu_seconds < sdpa.gpu_seconds);
  // is_causal, dropout and the bias's gradient read from the arguments as the schema binds them.
  const std::vector<Value> args = {Value::of_node(0), Value::of_node(1), Value::of_node(2), Value::none(),
                                   Value::of_float(0.0), Value::of_bool(true)};
  CHECK(op_flags("aten.scaled_dot_product_attention.default", args, {}).causal);
  CHECK_FALSE(op_flags("aten.scaled_dot_product_attention.default", {args.begin(), args.begin() + 5},
                       {{"is_causal", Value::of_bool(false)}}).causal);
  CHECK(op_flags("aten.scaled_dot_product_attention.default", {args.begin(), args.begin() + 3},
                 {{"is_causal", Value::of_bool(true)}, {"dropout_p", Value::of_float(0.1)}}).dropout);
  CHECK_FALSE(op_flags("aten.mm.default", args, {}).causal);
}

TEST_CASE("eager pipeline: the host's dispatch overlaps the GPU's kernels", "[cost]") {
  const Device& d = *find_device("h200");
  auto node = [](double host, double gpu) {
    OpCost c;
    c.dispatched = true;
    c.host_seconds = host;
    c.gpu_seconds = gpu;
    return NodeCost{0, c};
  };
  const double s = d.eager_in_sequence_s;
  // Host-bound: small kernels finish before the next dispatch ends.
  CHECK(total_eager_seconds({node(10e-6, 1e-6), node(10e-6, 1e-6)}, d) == Approx(20e-6 + 2 * s + 1e-6));
  // GPU-bound: a long kernel hides the dispatches queued behind it.
  CHECK(total_eager_seconds({node(10e-6, 1e-3), node(10e-6, 1e-6)}, d) == Approx(10e-6 + s + 1e-3 + 1e-6));
  // Plumbing adds its own time only.
  OpCost item;
  item.host_seconds = 1e-6;
  CHECK(total_eager_seconds({NodeCost{0, item}}, d) == Approx(1e-6));
}

TEST_CASE("roofline over a corpus graph: fusing attention lowers the estimate", "[cost][corpus]") {
  const Device& d = *find_device("h200");
  const Graph g = load_graph(test::corpus_path("graphs/gpt2.infer.g0.json"));
  const auto costs = graph_costs(g, d);
  REQUIRE(costs.size() == g.nodes.size());
  const double total = total_seconds(costs), eager = total_eager_seconds(costs, d);
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
