// Whole graphs in the reference interpreter: corpus inference graphs and
// sator's optimization of each, run on the same random inputs, agree to 1e-9.
#include <catch2/catch.hpp>

#include <chrono>
#include <random>

#include "interp/compare.h"
#include "interp/verify.h"
#include "ir/graph_io.h"
#include "ir/shape_check.h"
#include "pipeline/optimize.h"
#include "test_util.h"

using namespace sator;
using namespace sator::interp;

namespace {
double worst_error(const std::vector<EvalValue>& a, const std::vector<EvalValue>& b) {
  REQUIRE(a.size() == b.size());
  return max_output_error(a, b);
}
}  // namespace

// Runs `name` and its optimization on the same random inputs; returns the
// worst relative error over the outputs.
double optimized_vs_original(const char* name, bool also_check_discrimination) {
  const auto start = std::chrono::steady_clock::now();
  const Graph g = load_graph(test::corpus_path("graphs/") + name + ".json");
  const pipeline::OptimizeResult r = pipeline::optimize(g, {});
  const Graph opt = read_graph_text(write_graph_text(r.output), std::string(name) + " (optimized)");
  const SymbolValues symbols = small_symbols(g);
  const auto inputs = random_inputs(g, symbols, 7);
  const auto before = evaluate_graph(g, inputs, symbols);
  const auto after = evaluate_graph(opt, inputs, symbols);
  if (also_check_discrimination)  // other inputs give other outputs: the comparison can fail
    CHECK(worst_error(evaluate_graph(opt, random_inputs(g, symbols, 8), symbols), before) > 1e-3);
  WARN(name << ": " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s");
  return worst_error(after, before);
}

TEST_CASE("interpreter: optimized zoo graphs equal their inputs in float64", "[interp][corpus]") {
  for (const char* name : {"zoo_hf.infer.dyn.g0", "zoo_views.infer.dyn.g0"}) {
    INFO(name);
    CHECK(optimized_vs_original(name, true) < 1e-9);
  }
}

// Full models take several seconds each (weights of up to 50257 x 768 in
// float64) and ctest's verify_* tests run them through `sator optimize
// --verify` already: hidden here; `build/tests/sator_tests "[models]"`.
TEST_CASE("interpreter: optimized dynamic models equal their inputs in float64", "[.][models][interp]") {
  for (const char* name : {"bert.infer.dyn.g0", "llama.infer.dyn.g0", "gpt2.infer.dyn.g0"}) {
    INFO(name);
    CHECK(optimized_vs_original(name, false) < 1e-9);
  }
}

TEST_CASE("interpreter: random ops are refused, naming the graph and node", "[interp][corpus]") {
  const Graph g = load_graph(test::corpus_path("graphs/zoo_hf.train.dyn.g0.json"));
  const SymbolValues symbols = small_symbols(g);
  try {
    evaluate_graph(g, random_inputs(g, symbols, 1), symbols);
    FAIL("a graph with random ops evaluated");
  } catch (const InterpError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find("zoo_hf.train.dyn") != std::string::npos);
    CHECK((message.find("aten.rand") != std::string::npos || message.find("inductor_random") != std::string::npos));
    CHECK(message.find("node '") != std::string::npos);
  }
  CHECK_THROWS_AS(evaluate_graph(g, {}, symbols), InterpError);  // too few inputs
}

TEST_CASE("verify: passes an optimization, fails a wrong one, skips what it cannot run", "[interp][verify]") {
  const Graph g = load_graph(test::corpus_path("graphs/zoo_hf.infer.dyn.g0.json"));
  const Graph opt = pipeline::optimize(g, {}).output;
  const VerifyResult ok = verify_optimized(g, opt);
  CHECK(ok.status == VerifyResult::Status::Passed);
  CHECK(ok.max_error < 1e-9);
  CHECK_FALSE(ok.symbols.empty());
  // The same graph with one multiplier changed is caught.
  Graph wrong = opt;
  bool changed = false;
  for (Node& n : wrong.nodes)
    if (!changed && n.op == "aten.mul.Tensor" && n.args.size() == 2 && n.args[1].kind == Value::Kind::Float) {
      n.args[1].f *= 1.01;
      changed = true;
    }
  if (!changed)  // SDPA's scale, when every multiplier was fused into it
    for (Node& n : wrong.nodes)
      for (auto& [key, v] : n.kwargs)
        if (!changed && key == "scale" && v.kind == Value::Kind::Float) v.f *= 1.01, changed = true;
  REQUIRE(changed);
  const VerifyResult bad = verify_optimized(g, wrong);
  CHECK(bad.status == VerifyResult::Status::Failed);
  CHECK(bad.max_error > 1e-4);
  // A limit below the graph's size skips it, saying why.
  VerifyOptions tiny;
  tiny.max_elements = 10;
  const VerifyResult skipped = verify_optimized(g, opt, tiny);
  CHECK(skipped.status == VerifyResult::Status::Skipped);
  CHECK(skipped.detail.find("too large") != std::string::npos);
  // Inductor's own random prims cannot be replayed: the graphs are compared
  // region by region, and the optimization left those prims' computations
  // as they were (passed); where a changed region holds one, it is skipped,
  // saying which op, rather than failed.
  const Graph ind = load_graph(test::corpus_path("inductor/zoo_hf.train.dyn.g0.json"));
  Graph ind_opt = pipeline::optimize(ind, {}).output;
  const VerifyResult inductor = verify_optimized(ind, ind_opt);
  INFO(inductor.detail);
  CHECK(inductor.status == VerifyResult::Status::Passed);
  CHECK(inductor.regions_compared == inductor.regions);
  bool renamed = false;  // a random prim the output computes under a new name: a changed region
  for (Node& n : ind_opt.nodes)
    if (!renamed && n.op.rfind("prims.inductor_random", 0) == 0) n.name += "_moved", renamed = true;
  REQUIRE(renamed);
  const VerifyResult random_region = verify_optimized(ind, ind_opt);
  INFO(random_region.detail);
  CHECK(random_region.status == VerifyResult::Status::Skipped);
  CHECK(random_region.detail.find("prims.inductor") != std::string::npos);
  CHECK(random_region.regions > inductor.regions);
  CHECK(random_region.regions_compared < random_region.regions);
}

TEST_CASE("interpreter: random ops draw streams named after their nodes", "[interp][verify]") {
  const Graph g = load_graph(test::corpus_path("graphs/zoo_hf.train.dyn.g0.json"));
  const SymbolValues symbols = small_symbols(g);
  const auto inputs = random_inputs(g, symbols, 3);
  EvalOptions by_name;
  by_name.random = EvalOptions::Random::ByNodeName;
  by_name.seed = 5;
  const auto a = evaluate_graph(g, inputs, symbols, by_name);
  const auto b = evaluate_graph(g, inputs, symbols, by_name);
  CHECK(max_output_error(a, b) == 0.0);  // same names, same seed: same draws
  by_name.seed = 6;
  CHECK(max_output_error(evaluate_graph(g, inputs, symbols, by_name), a) > 1e-3);  // other draws: other outputs
}

TEST_CASE("output comparison: noise far below the graph's scale is not a difference", "[interp][verify]") {
  using interp::EvalValue;
  auto tensor = [](std::vector<double> xs) {
    interp::Tensor64 t = interp::Tensor64::filled({static_cast<int64_t>(xs.size())}, 0.0, DType::Float64);
    t.data = std::move(xs);
    return EvalValue::of_tensor(std::move(t));
  };
  // A loss of magnitude 1 and a gradient that is zero in exact arithmetic,
  // computed as different rounding noise by two graphs.
  const std::vector<EvalValue> ref{tensor({1.0, -0.5}), tensor({1e-13, -2e-13})};
  const std::vector<EvalValue> noisy{tensor({1.0, -0.5}), tensor({3e-13, 1e-13})};
  CHECK(interp::max_output_error(noisy, ref) < 1e-6);
  // The same output wrong at a visible scale is still a difference, and named.
  const std::vector<EvalValue> wrong{tensor({1.0, -0.5}), tensor({1e-3, -2e-13})};
  size_t worst = 99;
  CHECK(interp::max_output_error(wrong, ref, &worst) > 100.0);
  CHECK(worst == 1);
  // Alone (no large output beside it) the tiny tensor is its own scale.
  CHECK(interp::max_output_error({noisy[1]}, {ref[1]}) > 0.1);
}

TEST_CASE("verify: a graph too large as a whole is compared a changed region at a time", "[interp][verify]") {
  const Graph g = load_graph(test::corpus_path("graphs/zoo_hf.infer.g0.json"));
  const Graph opt = pipeline::optimize(g, {}).output;
  const VerifyResult whole = verify_whole_graph(g, opt);
  REQUIRE(whole.status == VerifyResult::Status::Passed);
  CHECK(whole.regions == 0);
  // Just too large as a whole: every changed region compared, and agreeing.
  VerifyOptions limited;
  limited.max_elements = whole.elements - 1;
  std::vector<size_t> progress;  // each region announced, in turn, before it runs
  limited.on_region = [&](size_t k, size_t n, const std::string& node) {
    CHECK(k == progress.size() + 1);
    CHECK(k <= n);
    CHECK(opt.find_node(node).has_value());
    progress.push_back(n);
  };
  const VerifyResult ok = verify_optimized(g, opt, limited);
  INFO(ok.detail);
  CHECK(ok.status == VerifyResult::Status::Passed);
  CHECK(ok.regions > 0);
  CHECK(ok.regions_compared == ok.regions);
  CHECK(progress == std::vector<size_t>(ok.regions, ok.regions));
  limited.on_region = nullptr;
  CHECK(ok.elements < whole.elements);
  CHECK(ok.dtype_error_out >= 0);
  // A wrong multiplier in the output is caught in its region, named.
  Graph wrong = opt;
  std::string changed;
  for (Node& n : wrong.nodes)
    for (auto& [key, v] : n.kwargs)
      if (changed.empty() && key == "scale" && v.kind == Value::Kind::Float) v.f *= 1.01, changed = n.name;
  for (Node& n : wrong.nodes)
    if (changed.empty() && n.op == "aten.mul.Tensor" && n.args.size() == 2 && n.args[1].kind == Value::Kind::Float)
      n.args[1].f *= 1.01, changed = n.name;
  REQUIRE_FALSE(changed.empty());
  const VerifyResult bad = verify_optimized(g, wrong, limited);
  INFO(bad.detail);
  CHECK(bad.status == VerifyResult::Status::Failed);
  CHECK(bad.detail.find("the region computing") != std::string::npos);
  CHECK(bad.max_error > 1e-4);
  // A region still too large is not compared: skipped, saying how many were.
  VerifyOptions small = limited;
  small.max_elements = ok.elements - 1;
  const VerifyResult partly = verify_optimized(g, opt, small);
  INFO(partly.detail);
  CHECK(partly.status == VerifyResult::Status::Skipped);
  CHECK(partly.regions == ok.regions);
  CHECK(partly.regions_compared < partly.regions);
  CHECK(partly.detail.find("region by region") != std::string::npos);
  // Out of time: the regions not started are not compared.
  VerifyOptions hurried = limited;
  hurried.max_region_seconds = -1;
  const VerifyResult late = verify_optimized(g, opt, hurried);
  INFO(late.detail);
  CHECK(late.status == VerifyResult::Status::Skipped);
  CHECK(late.regions_compared == 0);
  CHECK(late.detail.find("ran out") != std::string::npos);
}
