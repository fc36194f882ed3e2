#include "rules/optimizer.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <unordered_set>

#include "extract/egraph_problem.h"
#include "extract/extractors.h"
#include "extract/graph_cost.h"
#include "ir/graph_stats.h"
#include "ir/output_target.h"
#include "ir/shape_check.h"
#include "tensor/tensor_egraph.h"
#include "rules/attention_rules.h"
#include "rules/attention_train_rules.h"
#include "rules/dropout_draws.h"
#include "rules/key_gradient_sum.h"
#include "rules/layout_rules.h"
#include "rules/mask_algebra.h"
#include "rules/mixed_precision.h"

namespace sator::rules {

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// Graph plumbing, which the node-count cost does not count.
bool is_plumbing(const std::string& op) { return op == "placeholder" || op == "get_attr" || op == "output"; }

double graph_cost(const Graph& g) {
  double c = 0;
  for (const Node& n : g.nodes) c += is_plumbing(n.op) ? 0 : 1;
  return c;
}

}  // namespace

double estimate_cost(const Graph& g, const std::string& cost, const std::string& device) {
  if (cost == "nodes") return graph_cost(g);
  if (cost != "roofline") throw std::invalid_argument("unknown cost model '" + cost + "' (nodes or roofline)");
  const extract::Device* d = extract::find_device(device);
  if (!d) throw std::invalid_argument("unknown device '" + device + "'");
  return extract::total_seconds(extract::graph_costs(g, *d)) * 1e6;
}

bool is_training_graph(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.op == "placeholder" && n.role == Role::Tangent) return true;
  return false;
}

void finish_result(OptimizeResult& r, const char* what, const std::string& cost, const std::string& device) {
  ShapeProver check_prover(r.output.symbols);
  const ShapeCheckReport check = check_shapes(r.output, check_prover);
  if (!check.issues.empty())
    throw std::logic_error(std::string("the ") + what + " graph fails shape validation at node '" +
                           r.output.nodes[check.issues.front().node].name + "': " + check.issues.front().message);
  const GraphStats out = compute_stats(r.output);
  r.nodes_out = out.nodes;
  r.layout_ops_out = out.layout_ops;
  r.sdpa_out = out.sdpa_ops;
  r.cost_out = estimate_cost(r.output, cost, device);
}

void check_output_target(const Graph& g, const Graph& input, const std::string& target) {
  const OutputTarget& t = output_target(target);
  if (!t.restricts()) return;
  if (std::optional<TargetViolation> v = find_target_violation(g, t, ops_of(input)))
    throw std::logic_error("the output writes " + v->op + " at node '" + v->node + "', which target " + target +
                           " refuses (" + v->why + ")");
}

size_t default_node_limit(const Graph& input) { return std::max<size_t>(200000, 20 * input.nodes.size()); }

static OptimizeResult optimize_once(const Graph& input, const OptimizeOptions& options) {
  // The time limit counts from here: building the e-graph, saturation and
  // extraction's search share it.
  const auto begin = std::chrono::steady_clock::now();
  const auto time_left = [&] {
    return options.time_limit_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  const OutputTarget& target = output_target(options.target);
  OptimizeResult r;
  const GraphStats in = compute_stats(input);
  r.nodes_in = in.nodes;
  r.layout_ops_in = in.layout_ops;
  r.sdpa_in = in.sdpa_ops;
  r.cost_in = estimate_cost(input, options.cost, options.device);

  auto t0 = std::chrono::steady_clock::now();
  TensorEGraph t(input);
  if (options.explain) t.egraph.enable_makers();
  std::vector<eg::Rewrite> rules;
  if (!options.rules_only) {
    rules = layout_rules(t);
    for (eg::Rewrite& r : recompose_rules(t)) rules.push_back(std::move(r));
  }
  // Training graphs fuse attention's forward and backward together: the
  // forward alone would keep the scores alive for the backward and save nothing.
  const bool training = is_training_graph(input);
  if (options.rules_only) {
    // The user's rules alone.
  } else if (!training) {
    for (eg::Rewrite& r : attention_rules(t, options.fuse_dropout)) rules.push_back(std::move(r));
  } else if (options.training_attention) {
    for (eg::Rewrite& r : attention_train_rules(t, options.fuse_dropout, options.training_attention_bias))
      rules.push_back(std::move(r));
    // Once fused, a key bias's gradient (dK summed over the keys) is zero.
    for (eg::Rewrite& r : key_gradient_rules(t)) rules.push_back(std::move(r));
  }
  if (!options.rules_only && (!training || options.training_attention)) {
    // Masks and casts written the ways models write them, seen through.
    for (eg::Rewrite& r : mask_algebra_rules(t)) rules.push_back(std::move(r));
    if (options.mixed_precision_attention)
      for (eg::Rewrite& r : mixed_precision_rules(t)) rules.push_back(std::move(r));
  }
  for (eg::Rewrite& r : rulelang::make_rewrites(options.user_rules, t)) rules.push_back(std::move(r));
  eg::Runner runner;
  runner.with_iter_limit(options.iter_limit)
      .with_node_limit(options.node_limit ? options.node_limit : default_node_limit(input))
      .with_time_limit(std::max(1e-3, time_left()));
  r.stop = runner.run(t.egraph, rules);
  if (r.stop == eg::StopReason::TimeLimit) r.limited.push_back("saturation");
  r.per_iteration = runner.iterations();
  r.iterations = runner.iterations().size();
  r.egraph_nodes = t.egraph.total_class_nodes();
  r.egraph_classes = t.egraph.num_classes();
  r.saturate_ms = ms_since(t0);

  t0 = std::chrono::steady_clock::now();
  const extract::Device* device = extract::find_device(options.device);
  if (options.cost == "roofline" && !device) throw std::invalid_argument("unknown device '" + options.device + "'");
  // Roofline: the op's estimated compiled time in µs, from its children's
  // and its own class types at the symbols' hints.
  const auto roofline_node = [&](eg::Id n) {
    std::vector<extract::Operand> in, out;
    for (eg::Id k : t.egraph.children(n)) {
      const TensorData& d = t.analysis.data(t.egraph.find(k));
      if (d.result == Node::Result::Tensor) in.push_back(extract::operand_of(input, d.type));
    }
    const TensorData& self = t.analysis.data(t.egraph.find(n));
    if (self.result == Node::Result::Tensor) out.push_back(extract::operand_of(input, self.type));
    for (const OutputSlot& s : self.outputs)
      if (s.kind == OutputSlot::Kind::Tensor) out.push_back(extract::operand_of(input, s.tensor));
    const std::string& op = t.lang.op_name(t.egraph.op(n));
    // Views cost no time; a nanosecond per node breaks ties toward the
    // graph with fewer nodes (fewer layout ops) among equally fast ones.
    const double tie_break = is_plumbing(op) ? 0.0 : 1e-3;
    return extract::roofline_cost(*device, op, in, out).seconds * 1e6 + tie_break;
  };
  // The target's refused ops (unless the input has them) are never
  // extracted: their classes keep the input's own form, which is allowed.
  const std::unordered_set<std::string> input_ops = ops_of(input);
  std::vector<int8_t> refused_op;  // per OpId: -1 unknown, 0 allowed, 1 refused
  const auto refused = [&](eg::OpId op) {
    if (op >= refused_op.size()) refused_op.resize(t.lang.num_ops(), -1);
    if (refused_op[op] < 0) {
      const std::string& name = t.lang.op_name(op);
      refused_op[op] = !input_ops.count(name) && target.refuses(name).has_value();
    }
    return refused_op[op] == 1;
  };
  const auto node_cost = [&](eg::Id n) {
    if (target.restricts() && refused(t.egraph.op(n))) return std::numeric_limits<double>::infinity();
    if (options.cost == "roofline") return roofline_node(n);
    return is_plumbing(t.lang.op_name(t.egraph.op(n))) ? 0.0 : 1.0;
  };
  std::vector<eg::Id> roots;
  for (const auto& o : t.outputs())
    if (o) roots.push_back(*o);
  const extract::EGraphProblem ep = extract::problem_from_egraph(t.egraph, roots, node_cost);
  const double left = time_left();
  extract::Solution sol;
  if (options.extractor == "tree") {
    sol = extract::extract_tree(ep.problem);
  } else if (options.extractor == "dag") {
    // The local search takes at most what the time limit leaves; the limit
    // cut it only if it stopped there rather than converging.
    extract::DagOptions dopt;
    const bool shortened = left < dopt.improve_seconds;
    if (shortened) dopt.improve_seconds = left;
    sol = extract::extract_dag(ep.problem, dopt);
    if (shortened && (sol.search_cut || left <= 0)) r.limited.push_back("extraction");
  } else if (options.extractor == "ilp") {
    extract::IlpOptions io;
    io.time_limit_s = options.ilp_time_limit_s;
    const bool shortened = left < io.time_limit_s;
    if (shortened) io.time_limit_s = std::max(left, 0.01);  // CBC needs a positive limit; the tree start is kept
    sol = extract::extract_ilp(ep.problem, io);
    if (shortened && !sol.proved_optimal) r.limited.push_back("extraction");
  } else {
    throw std::invalid_argument("unknown extractor '" + options.extractor + "' (tree, dag or ilp)");
  }
  if (options.extractor != "tree") {
    // Classes the outputs do not reach (unused inputs, which the writer
    // keeps) take the tree extraction's choice.
    const extract::Solution tree = extract::extract_tree(ep.problem);
    for (size_t c = 0; c < sol.choice.size(); ++c)
      if (sol.choice[c] == extract::kNoNode) sol.choice[c] = tree.choice[c];
  }
  r.extract_dag_cost = sol.dag_cost;
  r.extract_proved_optimal = sol.proved_optimal;
  const auto x = extract::to_extraction(t.egraph, ep, sol);
  r.extract_ms = ms_since(t0);

  t0 = std::chrono::steady_clock::now();
  std::vector<eg::Id> enode_of;
  r.output = t.write(x, &enode_of);
  if (options.explain)
    for (size_t i = 0; i < r.output.nodes.size(); ++i)
      if (enode_of[i] != eg::kNoId)
        if (const std::string_view rule = t.egraph.made_by(enode_of[i]); !rule.empty())
          r.made_by.emplace_back(r.output.nodes[i].name, std::string(rule));
  finish_result(r, "optimized", options.cost, options.device);
  check_output_target(r.output, input, options.target);
  r.write_ms = ms_since(t0);
  r.z3_queries = t.prover.stats().queries;
  r.z3_cache_hits = t.prover.stats().cache_hits;
  r.z3_calls = t.prover.stats().z3_calls;
  return r;
}

OptimizeResult optimize(const Graph& input, const OptimizeOptions& options) {
  const auto begin = std::chrono::steady_clock::now();
  OptimizeResult r = optimize_once(input, options);
  if (!options.fuse_dropout || !mixes_dropout_draws(input, r.output)) return r;
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

}  // namespace sator::rules
