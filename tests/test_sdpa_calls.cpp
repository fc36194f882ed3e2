// Attention already written as SDPA kernel calls (rules/sdpa_calls.h), on
// the zoo's graphs of transformers' SDPA path: the materialised causal mask
// becomes is_causal, training pairs change kernels together, a broadcast
// padding mask reaches cuDNN unexpanded; each fails without its rule.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "pipeline/optimize.h"
#include "test_util.h"

using namespace sator;

namespace {

struct Call {
  std::string op;
  bool causal = false;
  std::vector<SymExpr> mask_shape;  // empty: no mask
};

// The graph's forward attention calls.
std::vector<Call> forward_calls(const Graph& g) {
  std::vector<Call> out;
  for (const Node& n : g.nodes) {
    if (n.op.find("scaled_dot_product") == std::string::npos || n.op.find("backward") != std::string::npos) continue;
    Call c;
    c.op = n.op;
    const bool sdpa = n.op == "aten.scaled_dot_product_attention.default";
    // SDPA: mask 3, is_causal 5; the cuDNN and efficient kernels: bias 3, is_causal 6.
    if (n.args.size() > 3 && n.args[3].is_node()) c.mask_shape = g.nodes[n.args[3].node].tensor.shape;
    const size_t causal_at = sdpa ? 5 : 6;
    c.causal = n.args.size() > causal_at && n.args[causal_at].kind == Value::Kind::Bool && n.args[causal_at].b;
    out.push_back(c);
  }
  return out;
}

size_t count_op(const Graph& g, const std::string& op) {
  size_t k = 0;
  for (const Node& n : g.nodes) k += n.op == op;
  return k;
}

pipeline::OptimizeOptions inductor() {
  pipeline::OptimizeOptions o;
  o.target = "inductor-joint";
  o.fuse_dropout = true;
  return o;
}

const char* kCudnn = "aten._scaled_dot_product_cudnn_attention.default";
const char* kCudnnBackward = "aten._scaled_dot_product_cudnn_attention_backward.default";

}  // namespace

TEST_CASE("SDPA path: cuDNN calls with the materialised causal mask become is_causal", "[attention][sdpa]") {
  const Graph g = load_graph(test::corpus_path("zoo/graphs/llama.amp-sdpa.infer.g0.json"));
  for (const Call& c : forward_calls(g)) {
    CHECK(c.op == kCudnn);
    CHECK_FALSE(c.causal);
    CHECK(c.mask_shape.size() == 4);
  }
  const pipeline::OptimizeResult r = pipeline::optimize(g, inductor());
  const auto calls = forward_calls(r.output);
  CHECK(calls.size() == 4);
  for (const Call& c : calls) {
    CHECK(c.causal);
    CHECK(c.mask_shape.empty());
  }
  CHECK(r.attention_changed == 4);
  CHECK(count_op(r.output, "aten.where.self") == 0);  // the masks are gone
  pipeline::OptimizeOptions without = inductor();
  without.without_rules = {"sdpa-call-mask"};
  const pipeline::OptimizeResult u = pipeline::optimize(g, without);
  CHECK(u.attention_changed == 0);
  for (const Call& c : forward_calls(u.output)) CHECK_FALSE(c.causal);
}

TEST_CASE("SDPA path: a training pair's forward and backward change together", "[attention][sdpa]") {
  const Graph g = load_graph(test::corpus_path("zoo/graphs/gpt2.amp-sdpa.train.g0.json"));
  const pipeline::OptimizeResult r = pipeline::optimize(g, inductor());
  CHECK(count_op(r.output, kCudnn) == 4);
  CHECK(count_op(r.output, kCudnnBackward) == 4);
  for (const Call& c : forward_calls(r.output)) {
    CHECK(c.causal);
    CHECK(c.mask_shape.empty());
  }
  // Each backward is causal and maskless too (its bias argument, 8, None).
  for (const Node& n : r.output.nodes)
    if (n.op == kCudnnBackward) {
      CHECK(n.args[8].is_none());
      CHECK((n.args[14].kind == Value::Kind::Bool && n.args[14].b));
    }
  pipeline::OptimizeOptions without = inductor();
  without.without_rules = {"sdpa-call-training"};
  const pipeline::OptimizeResult u = pipeline::optimize(g, without);
  for (const Call& c : forward_calls(u.output)) CHECK_FALSE(c.causal);
}

TEST_CASE("eager attention in training: the cuDNN pair, a padding mask passed unexpanded", "[attention][sdpa]") {
  // Decoder: causal, no mask. Encoder: BERT's padding mask, [8, 1, 1024, 1024]
  // as SDPA's dispatch passes it, not expanded over the heads.
  const Graph llama = load_graph(test::corpus_path("zoo/graphs/llama.amp-eager.train.g0.json"));
  const pipeline::OptimizeResult rl = pipeline::optimize(llama, inductor());
  CHECK(count_op(rl.output, kCudnn) == 4);
  CHECK(count_op(rl.output, kCudnnBackward) == 4);
  const Graph bert = load_graph(test::corpus_path("zoo/graphs/bert.amp-eager.train.g0.json"));
  const pipeline::OptimizeResult rb = pipeline::optimize(bert, inductor());
  const auto calls = forward_calls(rb.output);
  REQUIRE(calls.size() == 4);
  for (const Call& c : calls) {
    CHECK(c.op == kCudnn);
    CHECK(c.mask_shape == std::vector<SymExpr>{8, 1, 1024, 1024});
  }
  CHECK(count_op(rb.output, kCudnnBackward) == 4);
  // Without the rule the biased block has no cuDNN form: the efficient
  // kernels are not offered by default (measured slower than decomposed).
  pipeline::OptimizeOptions without = inductor();
  without.without_rules = {"sdpa-call-training"};
  CHECK(count_op(pipeline::optimize(bert, without).output, kCudnn) == 0);
}

TEST_CASE("eager attention in inference: a broadcast mask goes to cuDNN unexpanded", "[attention][sdpa]") {
  const Graph bert = load_graph(test::corpus_path("zoo/graphs/bert.amp-eager.infer.g0.json"));
  const pipeline::OptimizeResult r = pipeline::optimize(bert, inductor());
  const auto calls = forward_calls(r.output);
  REQUIRE(calls.size() == 4);
  for (const Call& c : calls) CHECK((c.op == kCudnn && c.mask_shape.size() == 4 && c.mask_shape[1] == SymExpr(1)));
  pipeline::OptimizeOptions without = inductor();
  without.without_rules = {"sdpa-call-kernel"};
  for (const Call& c : forward_calls(pipeline::optimize(bert, without).output))
    CHECK(c.op == "aten.scaled_dot_product_attention.default");
}

TEST_CASE("SDPA's math path on a bf16 model in training: the 16-bit cuDNN pair, not float32 kernels",
          "[attention][sdpa]") {
  // ViT, bf16 weights without autocast, transformers' SDPA path: the capture
  // decomposed SDPA into its math path, which computes in float32 on upcasts
  // of the bf16 q, k, v (H100, PyTorch 2.11; issue 38's zoo row measured
  // 0.92x plain torch.compile while the block ran as float32 efficient kernels).
  const Graph g = load_graph(std::string(SATOR_TESTS_DIR) + "/data/zoo/vit.bf16-sdpa.train.g0.json");
  const pipeline::OptimizeResult r = pipeline::optimize(g, inductor());
  CHECK(count_op(r.output, kCudnn) == 4);
  CHECK(count_op(r.output, kCudnnBackward) == 4);
  for (const Node& n : r.output.nodes)
    if (n.op == kCudnn) {
      for (size_t i = 0; i < 3; ++i) CHECK(r.output.nodes[n.args[i].node].tensor.dtype == DType::BFloat16);
    }
  CHECK(count_op(r.output, "aten._scaled_dot_product_efficient_attention.default") == 0);
  pipeline::OptimizeOptions without = inductor();
  without.without_rules = {"sdpa-call-training-16-bit"};
  CHECK(count_op(pipeline::optimize(g, without).output, kCudnn) == 0);
}
