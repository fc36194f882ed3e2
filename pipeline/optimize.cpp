#include "pipeline/optimize.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <limits>
#include <optional>
#include <unordered_set>

#include "cost/graph_cost.h"
#include "ir/graph_stats.h"
#include "ir/output_target.h"
#include "ir/shape_check.h"
#include "pipeline/extract_step.h"
#include "pipeline/peak_guard.h"
#include "pipeline/rule_selection.h"
#include "pipeline/side_work.h"
#include "rules/dropout_draws.h"
#include "tensor/tensor_egraph.h"

namespace sator::pipeline {

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

double graph_cost(const Graph& g) {
  double c = 0;
  for (const Node& n : g.nodes) c += is_graph_io(n.op) ? 0 : 1;
  return c;
}

}  // namespace

bool is_graph_io(std::string_view op) { return op == "placeholder" || op == "get_attr" || op == "output"; }

namespace {
// The roofline device `cost` and `device` name (nullptr for the node count);
// throws for an unknown model or device.
const cost::Device* cost_device(const std::string& cost, const std::string& device) {
  if (cost == "nodes") return nullptr;
  if (cost != "roofline") throw std::invalid_argument("unknown cost model '" + cost + "' (nodes or roofline)");
  const cost::Device* d = cost::find_device(device);
  if (!d) throw std::invalid_argument("unknown device '" + device + "'");
  return d;
}
}  // namespace

double estimate_cost(const Graph& g, const std::string& cost, const std::string& device) {
  const cost::Device* d = cost_device(cost, device);
  return d ? cost::total_seconds(cost::graph_costs(g, *d)) * 1e6 : graph_cost(g);
}

void finish_result(OptimizeResult& r, const char* what, const std::string& cost, const std::string& device) {
  if (r.output_is_input) {  // checked when loaded, estimated as the input
    r.nodes_out = r.nodes_in;
    r.layout_ops_out = r.layout_ops_in;
    r.sdpa_out = r.sdpa_in;
    r.cost_out = r.cost_in;
    r.attention_changed = 0;
    return;
  }
  // The shape check beside the estimates (each only reads the output).
  std::future<ShapeCheckReport> checked = beside(r.output.nodes.size(), [&r] {
    ShapeProver check_prover(r.output.symbols);
    return check_shapes(r.output, check_prover);
  });
  const GraphStats out = compute_stats(r.output);
  const double cost_out = estimate_cost(r.output, cost, device);
  const ShapeCheckReport check = checked.get();
  if (!check.issues.empty())
    throw std::logic_error(std::string("the ") + what + " graph fails shape validation at node '" +
                           r.output.nodes[check.issues.front().node].name + "': " + check.issues.front().message);
  r.nodes_out = out.nodes;
  r.layout_ops_out = out.layout_ops;
  r.sdpa_out = out.sdpa_ops;
  r.attention_changed = attention_calls_changed(r.attention_calls_in, out.attention_calls);
  r.cost_out = cost_out;
}

void check_output_target(const Graph& g, const Graph& input, const std::string& target) {
  const OutputTarget& t = output_target(target);
  if (!t.restricts()) return;
  if (std::optional<TargetViolation> v = find_target_violation(g, t, ops_of(input)))
    throw std::logic_error("the output writes " + v->op + " at node '" + v->node + "', which target " + target +
                           " refuses (" + v->why + ")");
}

size_t default_node_limit(const Graph& input) { return std::max<size_t>(200000, 20 * input.nodes.size()); }

// Saturation's share of the time it finds left: the rest is extraction's
// and the peak guard's, so that a time-limited saturation still leaves
// them room to finish within the limit (issue 39).
constexpr double kSaturationShare = 0.5;

// The input as the result, with why: the time limit left no room for the
// next phase (the input was validated when loaded).
void keep_input(OptimizeResult& r, const Graph& input, const OptimizeOptions& options, const std::string& phase,
                const std::string& why = "") {
  if (options.copy_kept_input) r.output = input;
  r.output_is_input = true;
  r.nodes_out = r.nodes_in;
  r.layout_ops_out = r.layout_ops_in;
  r.sdpa_out = r.sdpa_in;
  r.cost_out = r.cost_in;
  r.attention_changed = 0;
  r.limited.push_back(phase);
  r.declined.push_back(why.empty() ? "time limit: reached before " + phase + "; the input is kept" : why);
}

// What an extraction with the peak guard's one write takes per e-node, at
// the least: 3.3-10 us measured (bert.infer 3.3, llama.train 5.1, gemma's
// training graph 7.6, a 100,000-relu chain 7.9, gpt2-124m.train at 1 and 60
// copies 10); 6 us, so that an extraction that would end well past the
// limit is not begun (at 4 us, 17 copies under --time-limit 0.8 began one
// with 0.3 s left and ended 0.7 s past the limit).
constexpr double kLeastExtractSecondsPerENode = 6e-6;

static OptimizeResult optimize_once(const Graph& input, const OptimizeOptions& options) {
  // The time limit counts from here: building the e-graph, saturation and
  // extraction's search share it.
  const auto begin = std::chrono::steady_clock::now();
  const auto time_left = [&] {
    return options.time_limit_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  output_target(options.target);  // an unknown target throws before any work
  cost_device(options.cost, options.device);  // and so do an unknown cost model and device
  OptimizeResult r;
  // The input's figures read only the input: on a large graph they are
  // estimated on a second thread while the e-graph is built and saturated
  // (saturation runs on one).
  std::future<std::pair<GraphStats, double>> input_figures = beside(input.nodes.size(), [&input, &options] {
    return std::pair{compute_stats(input), estimate_cost(input, options.cost, options.device)};
  });
  const auto take_input_figures = [&] {
    if (!input_figures.valid()) return;
    auto [in, cost] = input_figures.get();
    r.nodes_in = in.nodes;
    r.layout_ops_in = in.layout_ops;
    r.sdpa_in = in.sdpa_ops;
    r.attention_calls_in = std::move(in.attention_calls);
    r.cost_in = cost;
  };

  auto t0 = std::chrono::steady_clock::now();
  if (time_left() <= 0) {  // loading took the whole limit
    take_input_figures();
    keep_input(r, input, options, "saturation");
    return r;
  }
  TensorEGraph t(input, options.explain);
  if (options.explain) t.egraph.enable_makers();
  {
    // The rules and the runner end with saturation: their match buffers and
    // the rules' memo of applied matches are not held through extraction,
    // where the run's memory peaks.
    const std::vector<eg::Rewrite> rules = rules_for(input, t, options);
    eg::Runner runner;
    runner.with_iter_limit(options.iter_limit)
        .with_node_limit(options.node_limit ? options.node_limit : default_node_limit(input))
        .with_time_limit(std::max(1e-3, time_left() * kSaturationShare));
    r.stop = runner.run(t.egraph, rules);
    if (r.stop == eg::StopReason::TimeLimit) r.limited.push_back("saturation");
    r.per_iteration = runner.iterations();
    for (size_t i = 0; i < rules.size() && i < runner.rule_runs().size(); ++i)
      r.rule_runs.emplace_back(rules[i].name(), runner.rule_runs()[i]);
    r.iterations = runner.iterations().size();
  }
  take_input_figures();
  r.egraph_nodes = t.egraph.total_class_nodes();
  r.egraph_classes = t.egraph.num_classes();
  r.saturate_ms = ms_since(t0);

  t0 = std::chrono::steady_clock::now();
  const double least_extract_s = kLeastExtractSecondsPerENode * static_cast<double>(r.egraph_nodes);
  if (time_left() <= 0 || time_left() < least_extract_s) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "time limit: %.2f s left, too little for an extraction of %zu e-nodes (%.2f s at least); the input "
                  "is kept",
                  std::max(0.0, time_left()), r.egraph_nodes, least_extract_s);
    keep_input(r, input, options, "extraction", time_left() <= 0 ? "" : why);
    r.z3_queries = t.prover.stats().queries;
    return r;
  }
  std::vector<eg::Id> enode_of;
  const PeakGuard guard = hold_peak(t, input, options, time_left, r, enode_of);
  r.extract_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  r.schedule = guard.schedule;
  r.schedules_tried = guard.schedules_tried;
  r.schedules_given_up = guard.schedules_given_up;
  if (options.explain)
    for (size_t i = 0; i < r.output.nodes.size(); ++i)
      if (enode_of[i] != eg::kNoId)
        if (const std::string_view rule = t.egraph.made_by(enode_of[i]); !rule.empty())
          r.made_by.emplace_back(r.output.nodes[i].name, std::string(rule));
  if (options.explain && !guard.declined) r.removed = explain_removals(t, r.output, enode_of);
  if (options.explain_attention) {
    AttentionFusionOptions explain;
    explain.training = options.training_attention;
    explain.training_bias = options.training_attention_bias;
    explain.fuse_dropout = options.fuse_dropout;
    // The estimates a block kept decomposed is explained with: extractions
    // with its decomposed forms priced out (diagnosis only; no time limit).
    std::optional<double> as_extracted;
    explain.cost_without = [&](const std::unordered_set<eg::Id>& forms) {
      if (forms.empty() && as_extracted) return *as_extracted;
      OptimizeResult scratch;
      extract_cheapest(t, input, options, std::numeric_limits<double>::infinity(), scratch, forms);
      if (forms.empty()) as_extracted = scratch.extract_dag_cost;
      return scratch.extract_dag_cost;
    };
    explain.cost_unit = options.cost == "roofline" ? "us" : "nodes";
    explain.biased_kernels = &r.biased_kernels;
    r.attention = explain_attention(input, t, kept_or_output(r, input), enode_of, explain);
  }
  if (options.explain_attention && guard.declined)
    for (AttentionBlock& b : r.attention)
      if (b.fused || b.why.rfind("fused in the e-graph", 0) == 0) b = {b.softmax, false, r.declined.back()};
  finish_result(r, "optimized", options.cost, options.device);
  check_output_target(kept_or_output(r, input), input, options.target);
  r.write_ms = ms_since(t0);
  r.z3_queries = t.prover.stats().queries;
  r.z3_cache_hits = t.prover.stats().cache_hits;
  r.z3_calls = t.prover.stats().z3_calls;
  return r;
}

OptimizeResult optimize(const Graph& input, const OptimizeOptions& options) {
  const auto begin = std::chrono::steady_clock::now();
  OptimizeResult r = optimize_once(input, options);
  if (!options.fuse_dropout || !rules::mixes_dropout_draws(input, kept_or_output(r, input))) return r;
  // Part of a block fused with its dropout, part left drawing aten.rand:
  // the halves would drop different entries. Done again without dropout
  // fusion (blocks without dropout still fuse), in what the time limit leaves.
  OptimizeOptions again = options;
  again.fuse_dropout = false;
  again.time_limit_s = std::max(1e-3, options.time_limit_s -
                                          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  OptimizeResult safe = optimize_once(input, again);
  safe.declined.push_back(
      "fuse_dropout: the extraction kept part of an attention block drawing its own dropout mask beside a fused "
      "kernel drawing another; optimized without dropout fusion");
  return safe;
}

}  // namespace sator::pipeline
