// The inductor-joint output target (issue 21): what sator writes for
// sator_torch.InductorPass holds only ops Inductor lowers in a joint graph,
// checked here on every graph of corpus/graphs and corpus/zoo/graphs against
// the op list generated from Inductor's tables (ir/targets/), independently
// of the optimizer's own check. The zoo's autocast inference graphs get
// their attention fused (rules/mixed_precision.h).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "chunk/apply.h"
#include "chunk/plan.h"
#include "cost/roofline.h"
#include "ir/graph_io.h"
#include "ir/output_target.h"
#include "ir/shape_check.h"
#include "pipeline/optimize.h"
#include "test_util.h"

using namespace sator;

namespace {

std::vector<std::string> graphs_in(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(test::corpus_path(dir)))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Nodes of `g` (chunk bodies too) whose op the target refuses and `input` lacks.
size_t refused_nodes(const Graph& g, const Graph& input, const OutputTarget& t) {
  const auto allowed = ops_of(input);
  size_t n = 0;
  for (const Node& node : g.nodes) {
    if (!allowed.count(node.op) && t.refuses(node.op)) ++n;
    for (const Graph& body : node.body) n += refused_nodes(body, input, t);
  }
  return n;
}

}  // namespace

TEST_CASE("the op list knows what Inductor cannot lower", "[target]") {
  const OutputTarget& joint = output_target("inductor-joint");
  CHECK(joint.restricts());
  CHECK(joint.refuses("aten._softmax.default"));      // only decomposed by Inductor
  CHECK(joint.refuses("aten.transpose.int"));
  CHECK_FALSE(joint.refuses("aten.amax.default"));    // lowered
  CHECK_FALSE(joint.refuses("aten.linear.default"));  // decomposed by the bridge
  CHECK_FALSE(joint.refuses("sator.chunked"));        // written as invoke_subgraph
  CHECK(joint.refuses("aten.not_an_op.default"));     // unlisted: refused
  CHECK_FALSE(output_target("any").refuses("aten._softmax.default"));
  CHECK_THROWS_AS(output_target("tvm"), std::invalid_argument);
}

TEST_CASE("inductor-joint: every corpus and zoo graph holds only ops Inductor lowers", "[target][corpus]") {
  const OutputTarget& joint = output_target("inductor-joint");
  size_t graphs = 0, refused_under_any = 0;
  std::vector<std::string> paths = graphs_in("graphs");
  const std::vector<std::string> zoo = graphs_in("zoo/graphs");
  paths.insert(paths.end(), zoo.begin(), zoo.end());
  REQUIRE(zoo.size() >= 19);
  for (const std::string& path : paths) {
    INFO(path);
    const Graph g = load_graph(path);
    pipeline::OptimizeOptions o;
    o.target = "inductor-joint";
    const pipeline::OptimizeResult r = pipeline::optimize(g, o);
    CHECK(refused_nodes(r.output, g, joint) == 0);
    ++graphs;
    // The same graph for the `any` target: the check above can fail.
    if (path.find("/zoo/") == std::string::npos) {
      const pipeline::OptimizeResult any = pipeline::optimize(g, {});
      refused_under_any += refused_nodes(any.output, g, joint) > 0;
    }
  }
  CHECK(graphs == paths.size());
  // Unfused softmaxes recomposed into aten._softmax (bert.train, ...).
  CHECK(refused_under_any >= 1);
}

TEST_CASE("autocast attention of the zoo's models is fused", "[target][corpus]") {
  // 4 layers each. GPT-Neo (no scale; masked by where() with its causal
  // buffer) is read through the mask-algebra identities (rules/mask_algebra.h),
  // its mask passed as SDPA's attn_mask. MPT's ALiBi bias is real-valued:
  // cast to bf16 it would be rounded (ulp 8 at ~1400; 28% off on the GPU),
  // so its blocks stay as they are.
  size_t fused_models = 0;
  for (const std::string& path : graphs_in("zoo/graphs")) {
    if (path.find(".amp-eager.infer.g0.json") == std::string::npos) continue;
    INFO(path);
    const Graph g = load_graph(path);
    pipeline::OptimizeOptions o;
    o.target = "inductor-joint";
    const pipeline::OptimizeResult r = pipeline::optimize(g, o);
    const bool real_bias = path.find("/mpt.") != std::string::npos;
    CHECK(r.sdpa_out - r.sdpa_in == (real_bias ? 0u : 4u));
    fused_models += r.sdpa_out - r.sdpa_in == 4;
    o.mixed_precision_attention = false;
    CHECK(pipeline::optimize(g, o).sdpa_out == r.sdpa_in);  // the rule is what fuses them
  }
  CHECK(fused_models == 18);
}

TEST_CASE("chunking never makes a forward output depend on a tangent", "[target][chunk][corpus]") {
  // The zoo's autocast training graphs: the LM-head region read the loss's
  // tangent and yielded the loss, which AOTAutograd's partitioner rejected
  // (docs/results/zoo.md). Optimized and chunked as InductorPass with
  // chunk="auto" does it.
  chunk::ChunkOptions co;
  co.device = cost::find_device("h200");
  size_t refused = 0, chunked = 0, graphs = 0;
  for (const std::string& path : graphs_in("zoo/graphs")) {
    if (path.find(".amp-eager.train.g0.json") == std::string::npos) continue;
    INFO(path);
    const Graph g = load_graph(path);
    pipeline::OptimizeOptions o;
    o.target = "inductor-joint";
    const std::vector<bool> before = chunk::tangent_dependent_outputs(g);
    // As the pass chunks (after optimizing), and the graph as captured.
    for (const Graph& from : {pipeline::optimize(g, o).output, g}) {
      const chunk::ChunkPlan plan = chunk::plan_chunking(from, co);
      const std::vector<bool> after = chunk::tangent_dependent_outputs(plan.graph);
      REQUIRE(before.size() == after.size());
      for (size_t i = 0; i < before.size(); ++i) CHECK((before[i] || !after[i]));
      refused += plan.why_not.find("would then depend on the tangent") != std::string::npos;
      chunked += plan.chunked;
    }
    ++graphs;
  }
  CHECK(graphs >= 19);
  CHECK(refused >= 1);  // the check has something to refuse
  CHECK(chunked >= 1);  // and does not refuse everything
}
