// egg's math_ematching_bench workload on sator's engine: the 7 expressions of
// egg/tests/math.rs, its 36 rules and constant folding, the simple scheduler
// (no backoff), 8 iterations (egg's bench_egraph with EGG_ITER_LIMIT=8).
//
// The node limit. egg's bench stops at 1,000,000 hashcons entries, checked
// after each rule's apply; in its 8th iteration egg crossed it after
// assoc-mul (the 4th rule), ending at 632,085 nodes / 255,984 classes. How
// many entries a rule's apply creates depends on the order matches are
// applied in (a node added before a union of its child is added again after
// it): egg applies in hash-set order, sator in class-id order, which leaves
// 1,051,805 entries after assoc-add against egg's < 1,000,000, so with 1M
// sator would stop one rule earlier. With the limit at 1,100,000 sator stops
// after the same rule as egg, does the same work, and reaches the same e-graph
// (shuffling the match order instead gives ~945k after assoc-add and the same
// stop under 1M; see docs/benchmarks.md).
//
//   build/bench/bench_math --report 7      per-iteration sizes, memory, median phase times of 7 runs
//     [--node-limit N] [--order ids|shuffled|reversed]   (the order matches are applied in)
//   build/bench/bench_math --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <cstring>

#include "egraph/runner.h"
#include "math_lang.h"

using namespace sator;

namespace {

constexpr size_t kNodeLimit = 1100000;

const char* kExprs[] = {
    "(i (ln x) x)",
    "(i (+ x (cos x)) x)",
    "(i (* (cos x) x) x)",
    "(d x (+ 1 (* 2 x)))",
    "(d x (- (pow x 3) (* 7 (pow x 2))))",
    "(+ (* y (+ x y)) (- (+ x 2) (+ x x)))",
    "(/ 1 (- (/ (+ 1 (sqrt five)) 2) (/ (- 1 (sqrt five)) 2)))",
};

// The simple scheduler, applying each rule's matches in a chosen order (to
// show how the order changes the hashcons growth that egg's node limit reads).
enum class Order { Ids, Shuffled, Reversed };
class OrderedScheduler : public eg::Scheduler {
 public:
  explicit OrderedScheduler(Order order) : order_(order) {}
  void search(size_t, const eg::EGraph& g, const eg::Rewrite& rw, size_t, eg::Matches& out) override {
    rw.search(g, out);
    if (order_ == Order::Ids) return;
    std::vector<size_t> perm(out.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
    if (order_ == Order::Reversed) std::reverse(perm.begin(), perm.end());
    else std::shuffle(perm.begin(), perm.end(), rng_);
    eg::Matches sorted;
    sorted.num_vars = out.num_vars;
    for (size_t i : perm) {
      sorted.classes.push_back(out.classes[i]);
      for (uint32_t v = 0; v < out.num_vars; ++v) sorted.substs.push_back(out.subst(i)[v]);
    }
    out = std::move(sorted);
  }

 private:
  Order order_;
  std::mt19937 rng_{1};
};

struct Workload {
  math::MathLanguage lang;
  math::ConstantFold fold{lang};
  eg::EGraph g{&fold};
  std::vector<eg::Rewrite> rules = math::rules(lang, fold);
  eg::Runner runner;

  explicit Workload(size_t node_limit = kNodeLimit, Order order = Order::Ids) {
    runner.with_scheduler(std::make_unique<OrderedScheduler>(order))
        .with_iter_limit(8)
        .with_node_limit(node_limit)
        .with_time_limit(1000);
    for (const char* e : kExprs) math::add_expr(g, lang, e);
  }
  void run() { runner.run(g, rules); }
};

void BM_MathSaturate8(benchmark::State& state) {
  size_t nodes = 0, classes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto w = std::make_unique<Workload>();
    state.ResumeTiming();
    w->run();
    nodes = w->g.total_class_nodes();
    classes = w->g.num_classes();
    state.PauseTiming();
    w.reset();  // freeing is not part of the run
    state.ResumeTiming();
  }
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["classes"] = static_cast<double>(classes);
}
BENCHMARK(BM_MathSaturate8)->Unit(benchmark::kMillisecond)->Iterations(1);

// Searching single patterns on the final e-graph.
Workload& saturated() {
  static Workload* w = [] {
    auto* x = new Workload;  // lives for the whole process
    x->run();
    return x;
  }();
  return *w;
}

// fresh: a new result buffer per search (what egg's Pattern::search does);
// reused: one buffer cleared between searches (what sator's Runner does).
void search_pattern(benchmark::State& state, const char* text, bool reuse) {
  Workload& w = saturated();
  std::vector<std::string> vars;
  eg::Pattern p = eg::Pattern::parse(text, w.lang, vars);
  const eg::Program prog = eg::Program::compile({&p}, static_cast<uint32_t>(vars.size()));
  size_t n = 0;
  eg::Matches kept;
  if (reuse) prog.search(w.g, kept);  // warm: the buffer has its capacity
  for (auto _ : state) {
    eg::Matches fresh;
    eg::Matches& m = reuse ? kept : fresh;
    m.clear();
    prog.search(w.g, m);
    n = m.size();
    benchmark::DoNotOptimize(m.classes.data());
  }
  state.counters["matches"] = static_cast<double>(n);
}
BENCHMARK_CAPTURE(search_pattern, assoc_add_fresh, "(+ (+ ?x ?y) ?z)", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(search_pattern, assoc_add_reused, "(+ (+ ?x ?y) ?z)", true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(search_pattern, factor_fresh, "(+ (* ?x ?y) (* ?x ?z))", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(search_pattern, factor_reused, "(+ (* ?x ?y) (* ?x ?z))", true)->Unit(benchmark::kMillisecond);

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs the workload `repeats` times; prints the per-iteration table of the
// last run and the median of each phase's total over all runs.
int report(int repeats, size_t node_limit, Order order) {
  std::vector<double> search, apply, rebuild, total;
  std::vector<size_t> first_sizes;
  for (int rep = 0; rep < repeats; ++rep) {
    Workload w(node_limit, order);
    w.run();
    double s = 0, a = 0, r = 0;
    std::vector<size_t> sizes;
    for (const eg::Iteration& it : w.runner.iterations()) {
      s += it.search_s, a += it.apply_s, r += it.rebuild_s;
      sizes.push_back(it.nodes);
    }
    sizes.push_back(w.g.total_class_nodes());
    if (rep == 0) first_sizes = sizes;
    if (sizes != first_sizes) {
      std::printf("sizes differ between runs\n");
      return 1;
    }
    search.push_back(s), apply.push_back(a), rebuild.push_back(r), total.push_back(s + a + r);
    if (rep + 1 < repeats) continue;
    std::printf("iter  nodes(start)  classes(start)  matches  applied  search_s  apply_s  rebuild_s\n");
    for (size_t i = 0; i < w.runner.iterations().size(); ++i) {
      const eg::Iteration& it = w.runner.iterations()[i];
      std::printf("%4zu  %12zu  %14zu  %7zu  %7zu  %8.4f  %7.4f  %9.4f\n", i + 1, it.nodes, it.classes, it.matches,
                  it.applied, it.search_s, it.apply_s, it.rebuild_s);
    }
    std::printf("after: %zu nodes, %zu classes, egg-memo %zu, hashcons %zu, node ids %zu; stop: %s\n",
                w.g.total_class_nodes(), w.g.num_classes(), w.g.egg_memo_size(), w.g.hashcons_size(), w.g.num_nodes(),
                eg::stop_reason_name(w.runner.stop_reason()));
    const size_t analysis = w.fold.memory_bytes();
    const size_t bytes = w.g.memory_bytes() + analysis;
    std::printf("memory: %zu bytes = %.1f bytes per class node (e-graph and constant-folding data)\n", bytes,
                static_cast<double>(bytes) / static_cast<double>(w.g.total_class_nodes()));
    auto parts = w.g.memory_breakdown();
    parts.emplace_back("analysis data (constant folding)", analysis);
    for (const auto& [name, b] : parts)
      std::printf("  %-34s %10zu bytes  %6.1f per node\n", name.c_str(), b,
                  static_cast<double>(b) / static_cast<double>(w.g.total_class_nodes()));
  }
  std::printf("median of %d runs: total %.3f s (search %.3f, apply %.3f, rebuild %.3f)\n", repeats, median(total),
              median(search), median(apply), median(rebuild));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 0;
  size_t node_limit = kNodeLimit;
  Order order = Order::Ids;
  for (int i = 1; i + 1 < argc + 1; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--report") == 0) repeats = has_value ? std::atoi(argv[i + 1]) : 1;
    if (std::strcmp(argv[i], "--node-limit") == 0 && has_value) node_limit = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--order") == 0 && has_value)
      order = std::strcmp(argv[i + 1], "shuffled") == 0   ? Order::Shuffled
              : std::strcmp(argv[i + 1], "reversed") == 0 ? Order::Reversed
                                                           : Order::Ids;
  }
  if (repeats > 0) return report(repeats, node_limit, order);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
