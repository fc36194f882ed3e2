// Attention with dropout fused into SDPA (--fuse-dropout) draws its own
// mask: its outputs equal the decomposed block's in distribution, not in
// value. Over many seeds, the fused graph's outputs (the forward's and the
// gradients of its fixed tangents) have the decomposed graph's mean within
// their standard errors, and its variance within sampling error: the
// statistical check behind fusing dropout by default in InductorPass.
#include <cmath>

#include <catch2/catch.hpp>

#include "interp/compare.h"
#include "interp/graph_eval.h"
#include "ir/shape_check.h"
#include "pipeline/optimize.h"
#include "test_util.h"

using namespace sator;

namespace {

struct Moments {
  std::vector<std::vector<double>> sum, sum_sq;  // by output, by element
  size_t runs = 0;
  void add(const std::vector<interp::EvalValue>& out) {
    sum.resize(out.size());
    sum_sq.resize(out.size());
    for (size_t o = 0; o < out.size(); ++o) {
      if (out[o].kind != interp::EvalValue::Kind::Tensor) continue;
      const std::vector<double>& d = out[o].tensor.data;
      sum[o].resize(d.size(), 0.0);
      sum_sq[o].resize(d.size(), 0.0);
      for (size_t i = 0; i < d.size(); ++i) {
        sum[o][i] += d[i];
        sum_sq[o][i] += d[i] * d[i];
      }
    }
    ++runs;
  }
  double mean(size_t o, size_t i) const { return sum[o][i] / static_cast<double>(runs); }
  double variance(size_t o, size_t i) const {
    const double m = mean(o, i);
    return std::max(0.0, (sum_sq[o][i] / static_cast<double>(runs) - m * m) * runs / (runs - 1.0));
  }
};

}  // namespace

TEST_CASE("attention with dropout fused: equal in distribution over seeds (mean and variance)", "[attention][dropout][statistics]") {
  const Graph g = load_graph(test::corpus_path("graphs/zoo_hf.train.dyn.g0.json"));
  pipeline::OptimizeOptions o;
  o.fuse_dropout = true;
  o.hold_peak = false;  // the fused form itself, whatever the guard would keep
  const pipeline::OptimizeResult r = pipeline::optimize(g, o);
  REQUIRE(r.sdpa_out == 2);  // forward and backward, dropout inside
  const interp::SymbolValues symbols = interp::small_symbols(g);
  const std::vector<interp::Tensor64> inputs = interp::random_inputs(g, symbols, 7);
  Moments decomposed, fused;
  const size_t runs = 300;
  for (size_t s = 1; s <= runs; ++s) {
    interp::EvalOptions e;
    e.random = interp::EvalOptions::Random::ByNodeName;
    e.seed = s;
    decomposed.add(interp::evaluate_graph(g, inputs, symbols, e));
    e.seed = s + 1000003;  // independent draws for the fused graph
    fused.add(interp::evaluate_graph(r.output, inputs, symbols, e));
  }
  size_t compared = 0, random_elements = 0;
  double var_decomposed = 0, var_fused = 0;
  for (size_t out = 0; out < decomposed.sum.size(); ++out) {
    REQUIRE(fused.sum[out].size() == decomposed.sum[out].size());
    for (size_t i = 0; i < decomposed.sum[out].size(); ++i) {
      const double va = decomposed.variance(out, i), vb = fused.variance(out, i);
      const double se = std::sqrt(va / runs + vb / runs);
      INFO("output " << out << " element " << i);
      // 5 standard errors: thousands of elements compared, each a chance
      // of 6e-7 to exceed it by luck.
      CHECK(std::fabs(decomposed.mean(out, i) - fused.mean(out, i)) <= 5 * se + 1e-12);
      ++compared;
      if (va > 0) {
        ++random_elements;
        var_decomposed += va;
        var_fused += vb;
      }
    }
  }
  CHECK(compared > 1000);
  CHECK(random_elements > 1000);  // the dropout reaches the outputs: a test that could fail
  // The spread over seeds matches too (summed over elements, so the
  // sampling error of the sum is a few percent at 300 runs).
  CHECK(var_fused == Approx(var_decomposed).epsilon(0.1));
}
