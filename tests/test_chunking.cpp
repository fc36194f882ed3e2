// Chunking (chunk/): regions grown from an amplifier, the rewrite into a
// sator.chunked node, the chunk count from the estimator and the cost model.
// Every chunked graph here is also run against its input in the float64
// interpreter, at symbol values that leave a short last chunk.
#include <catch2/catch.hpp>

#include <algorithm>

#include "chunk/apply.h"
#include "memory/peak_memory.h"
#include "chunk/plan.h"
#include "chunk/region.h"
#include "interp/compare.h"
#include "ir/chunked_node.h"
#include "ir/graph_builder.h"
#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "pipeline/optimize.h"
#include "test_util.h"

using namespace sator;

namespace {

Value ref(NodeId n) { return GraphBuilder::ref(n); }
Value ints(std::vector<int64_t> v) { return GraphBuilder::ints(v); }
constexpr double kMiB = 1024.0 * 1024.0;

// An LM head and its cross-entropy, forward and backward, as a joint graph
// has them: logits = h @ wᵀ, log-softmax over the vocabulary, the labels'
// log-probabilities gathered; the logits' gradient (softmax - one-hot) scaled
// by the incoming tangent, then dh = grad @ w and dW = gradᵀ @ h.
// `transposed` computes the logits as w @ hᵀ ([V, N]): the tokens are dim 1.
// `tangent_op`: how the tangent enters the gradient ("mul": linearly, "exp":
// not); the tangent placeholder is marked as one.
Graph lm_head(bool transposed, std::optional<int64_t> static_tokens = std::nullopt, int64_t hint = 2048,
              const char* tangent_op = "mul") {
  GraphBuilder b(transposed ? "lm_head_t" : "lm_head");
  const SymExpr n = static_tokens ? SymExpr(*static_tokens) : b.symbol(2, hint);
  const int64_t v = 1000, d = 32;
  const int64_t vocab = transposed ? 0 : 1;
  const NodeId h = b.input({n, d});
  const NodeId w = b.input({v, d});
  const NodeId labels = b.input(transposed ? std::vector<SymExpr>{1, n} : std::vector<SymExpr>{n, 1}, DType::Int64);
  const NodeId tangent_in = b.input({});
  const NodeId tangent = std::string(tangent_op) == "exp" ? b.op("aten.exp.default", {ref(tangent_in)}) : tangent_in;
  const NodeId logits = transposed ? b.op("aten.mm.default", {ref(w), ref(b.op("aten.permute.default", {ref(h), ints({1, 0})}))})
                                   : b.op("aten.mm.default", {ref(h), ref(b.op("aten.permute.default", {ref(w), ints({1, 0})}))});
  const NodeId amax = b.op("aten.amax.default", {ref(logits), ints({vocab}), Value::of_bool(true)});
  const NodeId shifted = b.op("aten.sub.Tensor", {ref(logits), ref(amax)});
  const NodeId e = b.op("aten.exp.default", {ref(shifted)});
  const NodeId s = b.op("aten.sum.dim_IntList", {ref(e), ints({vocab}), Value::of_bool(true)});
  const NodeId logp = b.op("aten.sub.Tensor", {ref(shifted), ref(b.op("aten.log.default", {ref(s)}))});
  const NodeId picked = b.op("aten.gather.default", {ref(logp), Value::of_int(vocab), ref(labels)});
  const NodeId loss = b.op("aten.neg.default", {ref(b.op("aten.sum.default", {ref(picked)}))});
  const NodeId zeros = b.op("aten.full.default", {GraphBuilder::sizes(b.type(logits).shape), Value::of_int(0)},
                            {{"dtype", Value::of_dtype(DType::Float32)}});
  const NodeId onehot = b.op("aten.scatter.value", {ref(zeros), Value::of_int(vocab), ref(labels), Value::of_float(1.0)});
  const NodeId grad = b.op("aten.mul.Tensor",
                           {ref(b.op("aten.sub.Tensor", {ref(b.op("aten.exp.default", {ref(logp)})), ref(onehot)})), ref(tangent)});
  // grad is [N, V] (or [V, N]); dh contracts the vocabulary, dW the tokens.
  const NodeId grad_nv = transposed ? b.op("aten.permute.default", {ref(grad), ints({1, 0})}) : grad;
  const NodeId dh = b.op("aten.mm.default", {ref(grad_nv), ref(w)});
  const NodeId dw = b.op("aten.mm.default", {ref(b.op("aten.permute.default", {ref(grad_nv), ints({1, 0})})), ref(h)});
  Graph g = b.finish({loss, dh, dw});
  g.nodes[tangent_in].role = Role::Tangent;
  return g;
}

// Whether node `id` depends on node `on`.
bool depends_on(const Graph& g, NodeId id, NodeId on) {
  std::vector<bool> dep(g.nodes.size(), false);
  dep[on] = true;
  for (NodeId i = on + 1; i <= id; ++i) {
    for (const Value& v : g.nodes[i].args) v.for_each_node([&](NodeId a) { dep[i] = dep[i] || dep[a]; });
    for (const auto& kv : g.nodes[i].kwargs) kv.second.for_each_node([&](NodeId a) { dep[i] = dep[i] || dep[a]; });
  }
  return dep[id];
}

chunk::ChunkOptions small_options(std::optional<int64_t> chunks) {
  chunk::ChunkOptions o;
  o.device = cost::find_device("h200");
  o.chunks = chunks;
  o.min_result_bytes = 1 * kMiB;
  return o;
}

const Node& chunked_node(const Graph& g) {
  const auto it = std::find_if(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.op == kChunkedOp; });
  REQUIRE(it != g.nodes.end());
  return *it;
}

size_t count_combines(const ChunkedSpec& s, ChunkCombine::Kind k) {
  return static_cast<size_t>(std::count_if(s.combines.begin(), s.combines.end(), [&](const ChunkCombine& c) { return c.kind == k; }));
}

// The chunked graph against its input on the same random inputs.
double error_at(const Graph& input, const Graph& chunked, interp::SymbolValues symbols) {
  return interp::compare_graphs(input, chunked, symbols, 7).max_error;
}

}  // namespace

TEST_CASE("chunking: an LM head with its cross-entropy backward chunks along the tokens", "[chunk]") {
  const Graph g = lm_head(false);
  const chunk::ChunkPlan plan = chunk::plan_chunking(g, small_options(4));
  REQUIRE(plan.chunked);
  CHECK(plan.amplifier_op == "aten.mm.default");
  CHECK(plan.dim == 0);
  CHECK(plan.rows == "s0");
  CHECK(plan.chunks == 4);
  CHECK(plan.remainder_chunk);  // 4 does not divide every s0
  CHECK(plan.peak_after < plan.peak_before);
  CHECK(plan.seconds_after > plan.seconds_before);  // chunks cost time
  ShapeProver prover(plan.graph.symbols);
  CHECK(check_shapes(plan.graph, prover).issues.empty());
  const ChunkedSpec spec = read_chunked_spec(chunked_node(plan.graph));
  // The forward's picked log-probabilities and dh are concatenated; dW, a
  // contraction over the tokens, is summed.
  CHECK(count_combines(spec, ChunkCombine::Kind::Sum) == 1);
  CHECK(count_combines(spec, ChunkCombine::Kind::Cat) == 2);
  // No tensor of the vocabulary's size is left outside the chunked node.
  for (const Node& n : plan.graph.nodes)
    if (n.op != kChunkedOp && n.result == Node::Result::Tensor) CHECK(memory::tensor_bytes(plan.graph, n.tensor) < kMiB);
  // Equal values, with an even split and with a short last chunk.
  CHECK(error_at(g, plan.graph, {{"s0", 8}}) < 1e-12);
  CHECK(error_at(g, plan.graph, {{"s0", 7}}) < 1e-12);
  CHECK(error_at(g, plan.graph, {{"s0", 3}}) < 1e-12);  // fewer rows than chunks
}

// The LM head under bf16 autocast: 16-bit matmuls, the loss in float32, and
// the weight gradient's 16-bit product widened to float32 after its matmul.
// `batch`: the tokens are a static batch x sequence, and the hidden state's
// gradient is returned as [batch, sequence, d], as a model's is.
Graph lm_head_autocast(std::optional<int64_t> batch = std::nullopt) {
  GraphBuilder b("lm_head_autocast");
  const SymExpr n = batch ? SymExpr(1024) : b.symbol(2, 2048);
  const int64_t v = 1000, d = 32;
  auto convert = [&](NodeId x, DType t) {
    return b.op("prims.convert_element_type.default", {ref(x), Value::of_dtype(t)});
  };
  const NodeId h = b.input({n, d}, DType::BFloat16);
  const NodeId w = b.input({v, d}, DType::BFloat16);
  const NodeId labels = b.input({n, 1}, DType::Int64);
  const NodeId logits = convert(b.op("aten.mm.default", {ref(h), ref(b.op("aten.permute.default", {ref(w), ints({1, 0})}))}),
                                DType::Float32);
  const NodeId amax = b.op("aten.amax.default", {ref(logits), ints({1}), Value::of_bool(true)});
  const NodeId shifted = b.op("aten.sub.Tensor", {ref(logits), ref(amax)});
  const NodeId s = b.op("aten.sum.dim_IntList", {ref(b.op("aten.exp.default", {ref(shifted)})), ints({1}), Value::of_bool(true)});
  const NodeId logp = b.op("aten.sub.Tensor", {ref(shifted), ref(b.op("aten.log.default", {ref(s)}))});
  const NodeId picked = b.op("aten.gather.default", {ref(logp), Value::of_int(1), ref(labels)});
  const NodeId zeros = b.op("aten.full.default", {GraphBuilder::sizes(b.type(logits).shape), Value::of_int(0)},
                            {{"dtype", Value::of_dtype(DType::Float32)}});
  const NodeId onehot = b.op("aten.scatter.value", {ref(zeros), Value::of_int(1), ref(labels), Value::of_float(1.0)});
  const NodeId grad = convert(b.op("aten.sub.Tensor", {ref(b.op("aten.exp.default", {ref(logp)})), ref(onehot)}), DType::BFloat16);
  const NodeId dh = b.op("aten.mm.default", {ref(grad), ref(w)});
  const NodeId dw = convert(b.op("aten.mm.default", {ref(b.op("aten.permute.default", {ref(grad), ints({1, 0})})), ref(h)}),
                            DType::Float32);
  if (batch) return b.finish({picked, b.op("aten.view.default", {ref(dh), ints({*batch, 1024 / *batch, d})}), dw});
  return b.finish({picked, dh, dw});
}

TEST_CASE("chunking: a 16-bit partial sum is widened as it is summed, not converted in every chunk", "[chunk]") {
  const Graph g = lm_head_autocast();
  const chunk::ChunkPlan plan = chunk::plan_chunking(g, small_options(4));
  REQUIRE(plan.chunked);
  const Node& node = chunked_node(plan.graph);
  CHECK(check_chunked_node(plan.graph, static_cast<NodeId>(&node - plan.graph.nodes.data())).empty());
  const ChunkedSpec spec = read_chunked_spec(node);
  REQUIRE(count_combines(spec, ChunkCombine::Kind::Sum) == 1);
  const size_t sum = static_cast<size_t>(std::find_if(spec.combines.begin(), spec.combines.end(), [](const ChunkCombine& c) {
                                           return c.kind == ChunkCombine::Kind::Sum;
                                         }) - spec.combines.begin());
  // The body returns dW's bf16 product; the node's result is float32; the
  // body converts nothing to float32 after its last matmul.
  const Graph& body = node.body.at(0);
  const Value& part = body.nodes.back().args.at(0).list.at(sum);
  CHECK(body.nodes[part.node].op == "aten.mm.default");
  CHECK(body.nodes[part.node].tensor.dtype == DType::BFloat16);
  CHECK(node.outputs.at(sum).tensor.dtype == DType::Float32);
  // Equal to the unchunked graph up to bf16 rounding of each chunk's part
  // (the unchunked product is rounded once), at an even and an uneven split.
  CHECK(error_at(g, plan.graph, {{"s0", 8}}) < 2e-2);
  CHECK(error_at(g, plan.graph, {{"s0", 7}}) < 2e-2);
  // Written and read back, the node still checks.
  const Graph back = read_graph_text(write_graph_text(plan.graph), "widened.json");
  const auto it = std::find_if(back.nodes.begin(), back.nodes.end(), [](const Node& n) { return n.op == kChunkedOp; });
  REQUIRE(it != back.nodes.end());
  CHECK(check_chunked_node(back, static_cast<NodeId>(it - back.nodes.begin())).empty());
  // Only a float sum to a wider float widens: a float16 result of a bf16
  // part (same width) is refused, and so is an integer one.
  Graph bad = plan.graph;
  Node& bad_node = *std::find_if(bad.nodes.begin(), bad.nodes.end(), [](const Node& n) { return n.op == kChunkedOp; });
  bad_node.outputs.at(sum).tensor.dtype = DType::Float16;
  const std::string why = check_chunked_node(bad, static_cast<NodeId>(&bad_node - bad.nodes.data()));
  CHECK(why.find("summing the body's bfloat16") != std::string::npos);
  CHECK(why.find("output #" + std::to_string(sum) + " float16") != std::string::npos);
  bad_node.outputs.at(sum).tensor.dtype = DType::Int64;
  CHECK_FALSE(check_chunked_node(bad, static_cast<NodeId>(&bad_node - bad.nodes.data())).empty());
}

TEST_CASE("chunking: the rows stay the flattened tokens where only a dropped node saw the batch", "[chunk]") {
  // Growing forward meets dh's view as [2, 512, d], a small result trim()
  // drops; it must not leave the rows the batch (2 chunks at most) when
  // everything chunked is [1024, ...].
  const Graph g = lm_head_autocast(2);
  const chunk::ChunkPlan plan = chunk::plan_chunking(g, small_options(8));
  REQUIRE(plan.chunked);
  CHECK(plan.rows == "1024");
  CHECK(plan.chunks == 8);
  CHECK(plan.peak_after < plan.peak_before);
  CHECK(error_at(g, plan.graph, {}) < 2e-2);
}

TEST_CASE("chunking: static sizes report a remainder chunk only when the count does not divide the rows", "[chunk]") {
  const Graph g = lm_head(false, 2048);
  CHECK_FALSE(chunk::plan_chunking(g, small_options(4)).remainder_chunk);
  const chunk::ChunkPlan three = chunk::plan_chunking(g, small_options(3));
  REQUIRE(three.chunked);
  CHECK(three.remainder_chunk);
  const ChunkedSpec spec = read_chunked_spec(chunked_node(three.graph));
  CHECK(chunk_bounds(2048, spec.chunks) == std::vector<int64_t>{0, 683, 1366, 2048});
}

TEST_CASE("chunking: logits computed as w @ hᵀ chunk along dim 1", "[chunk]") {
  const Graph g = lm_head(true);
  const chunk::ChunkPlan plan = chunk::plan_chunking(g, small_options(4));
  REQUIRE(plan.chunked);
  CHECK(plan.dim == 1);
  const ChunkedSpec spec = read_chunked_spec(chunked_node(plan.graph));
  CHECK(count_combines(spec, ChunkCombine::Kind::Sum) == 1);
  CHECK(error_at(g, plan.graph, {{"s0", 7}}) < 1e-12);
  // Along the vocabulary (dim 0) the log-softmax's amax reduces the chunked
  // dim, which only a sum may do: nothing past the matmul joins the region.
  ShapeProver prover(g.symbols);
  const auto mm = static_cast<NodeId>(std::find_if(g.nodes.begin(), g.nodes.end(),
                                                   [](const Node& n) { return n.op == "aten.mm.default"; }) - g.nodes.begin());
  std::string why;
  CHECK_FALSE(chunk::grow_region(g, prover, mm, 0, 1 * kMiB, &why));
  CHECK_FALSE(why.empty());
}

TEST_CASE("chunking: a non-linear op of a partial sum stays outside the chunked node", "[chunk]") {
  GraphBuilder b("partial");
  const SymExpr n = b.symbol(2, 2048);
  const NodeId x = b.input({n, 64});
  const NodeId w = b.input({64, 1000});
  const NodeId big = b.op("aten.mm.default", {ref(x), ref(w)});
  // A contraction over the chunked rows: a large partial sum ([1000, 1000]).
  const NodeId gram = b.op("aten.mm.default", {ref(b.op("aten.permute.default", {ref(big), ints({1, 0})})), ref(big)});
  const NodeId scaled = b.op("aten.mul.Tensor", {ref(gram), Value::of_float(0.001)});  // linear: stays partial
  const NodeId after = b.op("aten.exp.default", {ref(scaled)});                        // not linear
  const Graph g = b.finish({after});
  const chunk::ChunkPlan plan = chunk::plan_chunking(g, small_options(3));
  REQUIRE(plan.chunked);
  const ChunkedSpec spec = read_chunked_spec(chunked_node(plan.graph));
  REQUIRE(spec.combines.size() == 1);
  CHECK(spec.combines[0].kind == ChunkCombine::Kind::Sum);
  // The exp runs once, on the summed result, outside the chunked node.
  CHECK(std::any_of(plan.graph.nodes.begin(), plan.graph.nodes.end(), [](const Node& m) { return m.op == "aten.exp.default"; }));
  CHECK(error_at(g, plan.graph, {{"s0", 7}}) < 1e-12);
}

TEST_CASE("chunking: a mean over the chunked dim is not a partial sum; over another dim it chunks", "[chunk]") {
  GraphBuilder b("mean");
  const NodeId x = b.input({512, 16});
  const NodeId w = b.input({16, 1000});
  const NodeId big = b.op("aten.mm.default", {ref(x), ref(w)});
  const NodeId m = b.op("aten.mean.dim", {ref(big), ints({0})});
  const Graph g = b.finish({m});
  ShapeProver prover(g.symbols);
  std::string why;
  CHECK_FALSE(chunk::grow_region(g, prover, 2, 0, 1 * kMiB, &why));
  // Along the columns (dim 1) the mean over the rows keeps them apart.
  const chunk::ChunkPlan plan = chunk::plan_chunking(g, small_options(4));
  REQUIRE(plan.chunked);
  CHECK(plan.dim == 1);
  CHECK(error_at(g, plan.graph, {}) < 1e-12);
}

TEST_CASE("chunking: a chunked graph writes, reads back and checks", "[chunk]") {
  const chunk::ChunkPlan plan = chunk::plan_chunking(lm_head(false), small_options(4));
  REQUIRE(plan.chunked);
  const std::string text = write_graph_text(plan.graph);
  const Graph back = read_graph_text(text, "chunked.json");
  CHECK(write_graph_text(back) == text);
  const auto id = static_cast<NodeId>(&chunked_node(back) - back.nodes.data());
  CHECK(check_chunked_node(back, id).empty());
  // A body that no longer matches the node's inputs is reported.
  Graph broken = back;
  Node& c = broken.nodes[id];
  c.body.at(0).nodes.at(0).tensor.shape.back() = SymExpr(5);
  CHECK_FALSE(check_chunked_node(broken, id).empty());
  Graph wrong_count = back;
  auto& kw = wrong_count.nodes[id].kwargs;
  kw.erase(std::remove_if(kw.begin(), kw.end(), [](const auto& kv) { return kv.first == "rows"; }), kw.end());
  CHECK_THROWS_AS(read_chunked_spec(wrong_count.nodes[id]), std::invalid_argument);
}

TEST_CASE("chunking: auto stops doubling where the memory saved no longer pays for the time", "[chunk]") {
  const Graph g = lm_head(false, std::nullopt, 1 << 16);  // 256 MiB of logits
  const chunk::ChunkPlan plan = chunk::plan_chunking(g, small_options(std::nullopt));
  REQUIRE(plan.chunked);
  REQUIRE(plan.trials.size() >= 2);
  // Trials double from 2; the chosen count is the last one whose step saved
  // a larger share of the peak than it added to the time.
  double prev_peak = plan.peak_before, prev_s = plan.seconds_before;
  int64_t chosen = 1;
  for (size_t i = 0; i < plan.trials.size(); ++i) {
    const auto& t = plan.trials[i];
    CHECK(t.chunks == (int64_t{2} << i));
    const double saved = (prev_peak - t.peak_bytes) / plan.peak_before;
    const double cost = (t.seconds - prev_s) / plan.seconds_before;
    if (saved <= std::max(cost, 0.0) || saved <= 1e-3) {
      CHECK(i + 1 == plan.trials.size());  // the first failing step ends the search
      break;
    }
    chosen = t.chunks;
    prev_peak = t.peak_bytes;
    prev_s = t.seconds;
  }
  CHECK(plan.chunks == chosen);
}

TEST_CASE("chunking: a memory budget takes the fewest chunks that fit, an impossible one is refused", "[chunk]") {
  const Graph g = lm_head(false);
  chunk::ChunkOptions o = small_options(std::nullopt);
  const chunk::ChunkPlan four = chunk::plan_chunking(g, small_options(4));
  const chunk::ChunkPlan two = chunk::plan_chunking(g, small_options(2));
  REQUIRE(two.peak_after > four.peak_after);
  o.memory_budget = four.peak_after;
  const chunk::ChunkPlan fit = chunk::plan_chunking(g, o);
  CHECK(fit.chunks == 4);
  CHECK(fit.peak_after <= *o.memory_budget);
  o.memory_budget = memory::estimate_peak_memory(g).input_bytes;  // below what the inputs alone hold
  CHECK_THROWS_AS(chunk::plan_chunking(g, o), std::invalid_argument);
}

TEST_CASE("chunking on GPT-2 small training (corpus): more saved than the AutoChunker at 8 chunks, within 5% time",
          "[chunk][corpus]") {
  const Graph g = load_graph(test::corpus_path("graphs/gpt2-124m.train.g0.json"));
  chunk::ChunkOptions o;
  o.device = cost::find_device("h200");
  const chunk::ChunkPlan plan = chunk::plan_chunking(g, o);
  REQUIRE(plan.chunked);
  CHECK(plan.amplifier == "mm");  // the LM head
  CHECK(plan.amplification > 10);
  CHECK(plan.peak_before - plan.peak_after > 2603 * kMiB);  // AutoChunker's measured saving at 8 chunks
  CHECK(plan.seconds_after <= 1.05 * plan.seconds_before);
  const ChunkedSpec spec = read_chunked_spec(chunked_node(plan.graph));
  CHECK(count_combines(spec, ChunkCombine::Kind::Sum) == 1);  // the LM head's weight gradient
  // The peak moved off the logits: no [16384, 50257] tensor outside the node.
  for (const Node& n : plan.graph.nodes)
    if (n.op != kChunkedOp && n.result == Node::Result::Tensor)
      CHECK(memory::tensor_bytes(plan.graph, n.tensor) < 16384.0 * 50257 * 2);
}

TEST_CASE("chunking GPT-2 small training after saturation: 16 chunks at under +3% estimated time (issue 25)",
          "[chunk][corpus]") {
  // What `sator optimize --chunk auto` does: plan on the extracted graph.
  const Graph g = pipeline::optimize(load_graph(test::corpus_path("graphs/gpt2-124m.train.g0.json")), {}).output;
  chunk::ChunkOptions o;
  o.device = cost::find_device("h200");
  const chunk::ChunkPlan plan = chunk::plan_chunking(g, o);
  REQUIRE(plan.chunked);
  CHECK(plan.chunks == 16);
  CHECK(plan.peak_after < 0.65 * plan.peak_before);  // 22,644 -> 14,001 MiB
  CHECK(plan.seconds_after < 1.03 * plan.seconds_before);
}

TEST_CASE("chunking: a scalar tangent is taken out of the chunked node and scales its gradients after it", "[chunk]") {
  const Graph g = lm_head(false);
  const chunk::ChunkPlan plan = chunk::plan_chunking(g, small_options(4));
  REQUIRE(plan.chunked);
  CHECK(plan.tangent == g.nodes[3].name);
  CHECK(plan.tangent_scaled == 2);  // dh and dW; the forward's log-probabilities do not depend on it
  const Node& c = chunked_node(plan.graph);
  const auto cid = static_cast<NodeId>(&c - plan.graph.nodes.data());
  CHECK_FALSE(depends_on(plan.graph, cid, 3));
  CHECK(error_at(g, plan.graph, {{"s0", 7}}) < 1e-12);
  // A tangent that enters non-linearly (through exp) would stay in the node,
  // which also yields the loss: the loss would depend on the tangent, which
  // AOTAutograd's partitioner cannot split, so the region is refused.
  const Graph nonlinear = lm_head(false, std::nullopt, 2048, "exp");
  const chunk::ChunkPlan kept = chunk::plan_chunking(nonlinear, small_options(4));
  CHECK_FALSE(kept.chunked);
  INFO(kept.why_not);
  CHECK(kept.why_not.find("would then depend on the tangent") != std::string::npos);
}

TEST_CASE("chunking: tangent degrees follow linearity", "[chunk]") {
  GraphBuilder b("degrees");
  const NodeId t = b.input({});
  const NodeId x = b.input({8, 4});
  const NodeId zero = b.op("aten.scalar_tensor.default", {Value::of_float(0.0)});
  const NodeId mask = b.op("aten.gt.Scalar", {ref(x), Value::of_float(0.0)});
  const NodeId scaled = b.op("aten.mul.Tensor", {ref(x), ref(t)});                    // 1
  const NodeId chosen = b.op("aten.where.self", {ref(mask), ref(scaled), ref(zero)});  // 1: the other branch is 0
  const NodeId squared = b.op("aten.mul.Tensor", {ref(scaled), ref(chosen)});         // 2: not homogeneous of degree 1
  const NodeId shifted = b.op("aten.add.Tensor", {ref(scaled), ref(x)});              // 1 + 0: neither
  const NodeId summed = b.op("aten.sum.dim_IntList", {ref(chosen), ints({0})});       // 1
  const NodeId e = b.op("aten.exp.default", {ref(x)});                               // 0
  const Graph g = b.finish({squared, shifted, summed, e});
  std::vector<int8_t> seed(g.nodes.size(), 0);
  seed[t] = 1;
  const auto deg = chunk::tangent_degrees(g, seed);
  CHECK(deg[scaled] == 1);
  CHECK(deg[chosen] == 1);
  CHECK(deg[squared] == chunk::kNotHomogeneous);
  CHECK(deg[shifted] == chunk::kNotHomogeneous);
  CHECK(deg[summed] == 1);
  CHECK(deg[e] == 0);
}
