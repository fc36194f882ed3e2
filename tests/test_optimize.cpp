// `optimize` on the real corpus: the output is shape-valid (checked inside),
// keeps the inputs and outputs, has fewer layout ops than the input and than
// Inductor's result, fuses every attention block of the inference graphs and
// leaves training graphs' attention alone.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "interp/verify.h"
#include "ir/graph_builder.h"
#include "ir/graph_io.h"
#include "ir/graph_stats.h"
#include "ir/shape_check.h"
#include "pipeline/optimize.h"
#include "memory/peak_memory.h"
#include "test_util.h"

using namespace sator;

TEST_CASE("optimize on every corpus graph", "[optimize][corpus]") {
  std::ifstream in(test::corpus_path("manifest.json"));
  const auto manifest = nlohmann::json::parse(in);
  size_t beaten = 0, contested = 0, graphs = 0;
  std::set<std::string> unfused;  // inference graphs with an attention block left unfused
  // Training graphs whose attention adds a bias (a mask tensor): the
  // efficient kernels take it, and the graph as Inductor fuses it is
  // estimated cheaper without them (pipeline/biased_kernels.h).
  const std::set<std::string> attention_bias = {"opt.train.g2", "opt.train.g3"};
  // Training graphs whose attention applies dropout to the probabilities.
  const std::set<std::string> attention_dropout = {"bert.train.g0",       "bert.train.dyn.g0", "distilbert.train.g0",
                                                   "gpt2.train.g0",       "gpt2.train.dyn.g0", "zoo_hf.train.g0",
                                                   "zoo_hf.train.dyn.g0"};
  size_t training_fused = 0, peak_lowered = 0;
  for (const auto& entry : manifest) {
    const std::string name = entry["graph"].get<std::string>();
    INFO(name);
    Graph g = load_graph(test::corpus_path("graphs/" + name + ".json"));
    // What saturation finds, by time: the peak guard (which keeps the input
    // where the estimated peak would rise) has its own test below.
    pipeline::OptimizeOptions by_time;
    by_time.hold_peak = false;
    pipeline::OptimizeResult r = pipeline::optimize(g, by_time);
    ++graphs;
    CHECK(r.stop == eg::StopReason::Saturated);
    // The written graph reads back and validates.
    Graph back = read_graph_text(write_graph_text(r.output), name + " (optimized)");
    ShapeProver prover(back.symbols);
    CHECK(check_shapes(back, prover).issues.empty());
    // Same inputs, same outputs (count, order, shapes, dtypes).
    const auto& oin = g.nodes.back().args[0].list;
    const auto& oout = back.nodes.back().args[0].list;
    REQUIRE(oin.size() == oout.size());
    for (size_t i = 0; i < oin.size(); ++i) {
      REQUIRE(oin[i].is_none() == oout[i].is_none());
      if (oin[i].is_none()) continue;
      CHECK(g.nodes[oin[i].node].tensor.shape == back.nodes[oout[i].node].tensor.shape);
      CHECK(g.nodes[oin[i].node].tensor.dtype == back.nodes[oout[i].node].tensor.dtype);
    }
    size_t placeholders_in = 0, placeholders_out = 0;
    for (const Node& n : g.nodes) placeholders_in += n.op == "placeholder";
    for (const Node& n : back.nodes) placeholders_out += n.op == "placeholder";
    CHECK(placeholders_in == placeholders_out);
    // Layout ops: never more than before or than Inductor; strictly fewer than
    // Inductor where there is attention or more than 20 of them.
    CHECK(r.layout_ops_out <= r.layout_ops_in);
    const size_t inductor = entry["inductor"]["layout_ops"].get<size_t>();
    CHECK(r.layout_ops_out <= inductor);
    if (r.layout_ops_in > 20 || entry["attention_blocks"].get<size_t>() > 0) {
      CHECK(r.layout_ops_out < inductor);
      beaten += r.layout_ops_out < inductor;
      ++contested;
    }
    const size_t blocks = entry["attention_blocks"].get<size_t>();
    if (entry["phase"] == "infer") {
      if (r.sdpa_out - r.sdpa_in != blocks) unfused.insert(name);
      CHECK(r.sdpa_out - r.sdpa_in <= blocks);
    } else if (entry["input"]["sdpa"].get<size_t>() > 0 || name.rfind("gpt2-124m", 0) == 0) {
      CHECK(r.sdpa_out == r.sdpa_in);  // attention already fused (or, g1, the AutoChunker's chunk body)
    } else if (attention_dropout.count(name)) {
      CHECK(r.sdpa_out == r.sdpa_in);  // dropout inside attention: left decomposed (docs/rules.md)
      pipeline::OptimizeOptions dropout = by_time;  // ... and fused, every block, with --fuse-dropout
      dropout.fuse_dropout = true;
      CHECK(pipeline::optimize(g, dropout).sdpa_out - r.sdpa_in == 2 * blocks);
    } else if (blocks > 0) {
      if (attention_bias.count(name)) {
        CHECK(r.sdpa_out == r.sdpa_in);  // left decomposed by the weighing
        REQUIRE_FALSE(r.biased_kernels.empty());
        for (const auto& w : r.biased_kernels) CHECK(w.without_us < w.with_kernels_us);
        pipeline::OptimizeOptions biased = by_time;  // the kernels as extracted
        biased.weigh_biased_kernels = false;
        r = pipeline::optimize(g, biased);
      }
      // Forward and backward fused together: two kernels per block, the
      // scores gone, so the estimated peak and time both drop.
      CHECK(r.sdpa_out - r.sdpa_in == 2 * blocks);
      // Against the same optimization with training attention left decomposed.
      pipeline::OptimizeOptions decomposed = by_time;
      decomposed.training_attention = false;
      const pipeline::OptimizeResult u = pipeline::optimize(g, decomposed);
      const double peak = memory::estimate_peak_memory(r.output).peak_bytes;
      const double peak_unfused = memory::estimate_peak_memory(u.output).peak_bytes;
      CHECK(peak <= peak_unfused);
      // A masked block fused with its mask as a bias, kept as extracted: a
      // lower peak for up to 1% of estimated time by the per-node prices
      // (opt's blocks, once their scores' `* 1.0` is gone).
      if (attention_bias.count(name)) {
        CHECK(peak < peak_unfused);
        CHECK(r.cost_out < u.cost_out * 1.01);
      } else {
        CHECK(r.cost_out < u.cost_out);
      }
      if (peak < peak_unfused) ++peak_lowered;
      ++training_fused;
    }
  }
  CHECK(graphs == 46);
  CHECK(training_fused == 12);  // 10 without a mask (or one adding 0) or causal, 2 with a bias
  CHECK(peak_lowered >= 7);  // where the peak is not the loss's (gptneox, llama: the LM head; chunking's part)
  CHECK(contested >= 40);
  CHECK(beaten == contested);
  CHECK(unfused.empty());
}

TEST_CASE("the estimated peak never rises: every graph of corpus/ and corpus/zoo/", "[optimize][corpus][memory]") {
  size_t graphs = 0, kept = 0, held = 0;
  for (const char* dir : {"graphs", "zoo/graphs"}) {
    for (const auto& f : std::filesystem::directory_iterator(test::corpus_path(dir))) {
      if (f.path().extension() != ".json") continue;
      INFO(f.path().filename().string());
      const Graph g = load_graph(f.path().string());
      const pipeline::OptimizeResult r = pipeline::optimize(g, {});
      const double in = memory::estimate_peak_memory(g).peak_bytes;
      const double out = memory::estimate_peak_memory(r.output).peak_bytes;
      // The guard's slack: a MiB, below what the caching allocator resolves.
      CHECK(out <= in + 1024.0 * 1024.0);
      bool declined = false;
      for (const std::string& why : r.declined) declined |= why.find("the input is kept") != std::string::npos;
      if (declined) {
        CHECK(r.output.nodes.size() == g.nodes.size());  // the input, as it was
        ++kept;
      }
      // Where time alone would raise it, the guard held it.
      pipeline::OptimizeOptions by_time;
      by_time.hold_peak = false;
      if (memory::estimate_peak_memory(pipeline::optimize(g, by_time).output).peak_bytes > in + 1024.0 * 1024.0) ++held;
      ++graphs;
    }
  }
  CHECK(graphs == 179);
  CHECK(kept <= held);  // the input is kept only where time alone raises the peak (recomputation and
                        // the schedule hold the rest)
  CHECK(held > kept);
  CHECK(kept <= 2);     // zoo_hf.train, static and dynamic (docs/memory.md)
}

TEST_CASE("the largest graph optimizes in well under a second", "[optimize][corpus]") {
  Graph g = load_graph(test::corpus_path("graphs/gpt2-124m.train.g0.json"));
  const pipeline::OptimizeResult r = pipeline::optimize(g, {});
  CHECK(r.saturate_ms + r.extract_ms + r.write_ms < 1000.0);
  CHECK(r.layout_ops_out < 569);  // Inductor: 569
}

TEST_CASE("models outside the corpus: attention fused, fewer layout ops than Inductor", "[optimize]") {
  for (const char* name : {"qwen2.infer.g0", "mistral.infer.g0", "qwen2.train.g0", "mistral.train.g0"}) {
    INFO(name);
    const bool training = std::string(name).find(".train.") != std::string::npos;
    Graph g = load_graph(std::string(SATOR_TESTS_DIR) + "/data/unseen/" + name + ".json");
    const pipeline::OptimizeResult r = pipeline::optimize(g, {});
    // Both layers; in training the forward and the backward of each.
    CHECK(r.sdpa_out - r.sdpa_in == (training ? 4u : 2u));
    CHECK(r.layout_ops_out * (training ? 2 : 3) < r.layout_ops_in);
    CHECK(r.stop == eg::StopReason::Saturated);
    // Inductor's joint-graph passes on the same capture fused none and left
    // more layout ops than sator.
    const Graph inductor =
        load_graph(std::string(SATOR_TESTS_DIR) + "/data/unseen/inductor/" + name + ".json");
    ShapeProver prover(inductor.symbols);
    const ShapeCheckReport check = check_shapes(inductor, prover);
    CHECK(check.opaque_ops.empty());  // every op it uses has a shape function
    CHECK(check.issues.empty());
    const GraphStats greedy = compute_stats(inductor);
    CHECK(greedy.sdpa_ops < r.sdpa_out);
    CHECK(r.layout_ops_out < greedy.layout_ops);
  }
}

namespace {

// n independent copies of a chain of views and permutes that the layout
// rules collapse: x [4, 6] -> view [24] -> view [6, 4] -> permute -> permute
// -> view [2, 12].
sator::Graph layout_chains(size_t n) {
  sator::GraphBuilder b("chains");
  std::vector<sator::NodeId> outs;
  using B = sator::GraphBuilder;
  for (size_t i = 0; i < n; ++i) {
    const auto x = b.input({4, 6});
    const auto v1 = b.op("aten.view.default", {B::ref(x), B::ints({24})});
    const auto v2 = b.op("aten.view.default", {B::ref(v1), B::ints({6, 4})});
    const auto p1 = b.op("aten.permute.default", {B::ref(v2), B::ints({1, 0})});
    const auto p2 = b.op("aten.permute.default", {B::ref(p1), B::ints({1, 0})});
    outs.push_back(b.op("aten.view.default", {B::ref(p2), B::ints({2, 12})}));
  }
  return b.finish(outs);
}

}  // namespace

TEST_CASE("saturation needs as many iterations for 3,000 copies of a graph as for one", "[optimize][runner]") {
  // The backoff scheduler's limit grows with the e-graph: with egg's fixed
  // 1,000 matches the copies' ordinary rules were banned as explosive and
  // the run needed more iterations the larger the graph (GPT-2's training
  // graph: 5 iterations alone, 30 and unsaturated for 60 copies).
  const pipeline::OptimizeResult one = pipeline::optimize(layout_chains(1), {});
  const pipeline::OptimizeResult many = pipeline::optimize(layout_chains(3000), {});
  CHECK(one.stop == eg::StopReason::Saturated);
  CHECK(many.stop == eg::StopReason::Saturated);
  CHECK(many.iterations == one.iterations);
  CHECK(many.layout_ops_out == 3000 * one.layout_ops_out);
}

TEST_CASE("per-rule counts: each rule's matches and applications add up to the iterations'", "[optimize][runner]") {
  // egg's Runner report has them; a rule author reads which rules fired
  // (the report's "rules", the summary's "rules:" line).
  const Graph g = load_graph(test::corpus_path("graphs/llama.train.g0.json"));
  const pipeline::OptimizeResult r = pipeline::optimize(g, {});
  size_t matches = 0, applied = 0, rule_matches = 0, rule_applied = 0;
  for (const eg::Iteration& it : r.per_iteration) matches += it.matches, applied += it.applied;
  bool view_of_view = false;
  for (const auto& [name, run] : r.rule_runs) {
    rule_matches += run.matches;
    rule_applied += run.applied;
    CHECK(run.applied <= run.matches);
    CHECK(run.search_s >= 0);
    view_of_view = view_of_view || (name == "view-of-view" && run.applied > 0);
  }
  CHECK(rule_matches == matches);
  CHECK(rule_applied == applied);
  CHECK(applied > 0);
  CHECK(view_of_view);  // llama's training graph stacks views
}

TEST_CASE("integer positions scaled by integers keep their dtype through scale-of-scale and scale-by-one",
          "[optimize][rules]") {
  // Key positions as a model computes them for a linear position bias:
  // iota (int64) * 1 + 0, cast to float32 (captured from a module written
  // for issue 41). scale-by-one puts iota and iota * 1 in one class, so
  // scale-of-scale reads (iota * 1) * 1; `times` made the product 1.0 and
  // iota * 1.0 is float32: "a rule merged two classes whose dtypes differ".
  using B = GraphBuilder;
  B b("positions");
  const NodeId iota = b.op("prims.iota.default", {Value::of_int(512)},
                           {{"start", Value::of_int(0)}, {"step", Value::of_int(1)},
                            {"dtype", Value::of_dtype(DType::Int64)},
                            {"device", Value::of_text(Value::Kind::Device, "cuda:0")},
                            {"requires_grad", Value::of_bool(false)}});
  const NodeId one = b.op("aten.mul.Tensor", {B::ref(iota), Value::of_int(1)});
  const NodeId three = b.op("aten.mul.Tensor", {B::ref(b.op("aten.mul.Tensor", {B::ref(one), Value::of_int(3)})), Value::of_int(5)});
  const NodeId shifted = b.op("aten.add.Tensor", {B::ref(three), Value::of_int(0)});
  const NodeId cast = b.op("prims.convert_element_type.default", {B::ref(shifted), Value::of_dtype(DType::Float32)});
  const Graph g = b.finish({cast});
  const pipeline::OptimizeResult r = pipeline::optimize(g, {});
  // (iota * 3) * 5 is iota * 15, an int64 product.
  bool times_fifteen = false;
  for (const Node& n : r.output.nodes)
    if (n.op == "aten.mul.Tensor") {
      CHECK(n.tensor.dtype == DType::Int64);
      times_fifteen = times_fifteen || (n.args[1].kind == Value::Kind::Int && n.args[1].i == 15);
    }
  CHECK(times_fifteen);
  CHECK(interp::verify_optimized(g, r.output).status == interp::VerifyResult::Status::Passed);
}
