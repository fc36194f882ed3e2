#include "pipeline/extract_step.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "extract/egraph_problem.h"
#include "extract/extractors.h"
#include "cost/graph_cost.h"
#include "ir/op_table.h"
#include "ir/output_target.h"

namespace sator::pipeline {

namespace {

// The time limit cut an extraction short (said once: the peak guard may
// extract several times).
void note_limited(OptimizeResult& r) {
  if (std::find(r.limited.begin(), r.limited.end(), "extraction") == r.limited.end()) r.limited.push_back("extraction");
}

// The input graph's own form as a solution of `ep`: each class the e-node
// of the input's earliest node in it (its children are earlier nodes, whose
// classes choose earlier nodes still: no cycle); kNoNode where the input has
// none there or it is priced out (not in the problem).
std::vector<extract::NodeIdx> input_form(const TensorEGraph& t, const extract::EGraphProblem& ep) {
  std::vector<extract::NodeIdx> choice(ep.problem.num_classes(), extract::kNoNode);
  std::vector<int64_t> earliest(ep.problem.num_classes(), -1);
  for (size_t k = 0; k < ep.node_id.size(); ++k) {
    const int64_t n = t.original_node(ep.node_id[k]);
    const extract::ClassIdx c = ep.problem.nodes[k].cls;
    if (n < 0 || (earliest[c] >= 0 && earliest[c] <= n)) continue;
    earliest[c] = n;
    choice[c] = static_cast<extract::NodeIdx>(k);
  }
  return choice;
}

}  // namespace

eg::Extraction extract_cheapest(const TensorEGraph& t, const Graph& input, const OptimizeOptions& options,
                                double seconds_left, OptimizeResult& r,
                                const std::unordered_set<eg::Id>& priced_out) {
  const OutputTarget& target = output_target(options.target);
  const cost::Device* device = cost::find_device(options.device);
  if (options.cost == "roofline" && !device) throw std::invalid_argument("unknown device '" + options.device + "'");
  // Roofline: the op's estimated compiled time in µs, from its children's
  // and its own class types at the symbols' hints.
  const auto roofline_node = [&](eg::Id n) {
    std::vector<cost::Operand> in, out;
    for (eg::Id k : t.egraph.children(n)) {
      const TensorData& d = t.analysis.data(t.egraph.find(k));
      if (d.result == Node::Result::Tensor) in.push_back(cost::operand_of(input, d.type));
    }
    const TensorData& self = t.analysis.data(t.egraph.find(n));
    if (self.result == Node::Result::Tensor) out.push_back(cost::operand_of(input, self.type));
    for (const OutputSlot& s : self.outputs)
      if (s.kind == OutputSlot::Kind::Tensor) out.push_back(cost::operand_of(input, s.tensor));
    const std::string& op = t.lang.op_name(t.egraph.op(n));
    // Views cost no time; a nanosecond per node breaks ties toward the
    // graph with fewer nodes (fewer layout ops) among equally fast ones.
    // Among forms as fast and as small, the input's own arithmetic: an
    // identity that only restates it (x / 768 as x * (1/768), one rounding
    // apart) leaves it as written. (Layout ops are exact either way and
    // compete on their count alone.)
    const bool restated = !t.is_original(n) && !op_has(op, OpFact::CountedLayout);
    const double tie_break = is_graph_io(op) ? 0.0 : restated ? 1.001e-3 : 1e-3;
    const NodeAttrs& attrs = t.lang.attrs(t.egraph.attr(n));
    return cost::roofline_cost(*device, op, in, out, cost::op_flags(op, attrs.args, attrs.kwargs)).seconds * 1e6 +
           tie_break;
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
    if (priced_out.count(n)) return std::numeric_limits<double>::infinity();
    if (options.cost == "roofline") return roofline_node(n);
    return is_graph_io(t.lang.op_name(t.egraph.op(n))) ? 0.0 : 1.0;
  };
  std::vector<eg::Id> roots;
  for (const auto& o : t.outputs())
    if (o) roots.push_back(*o);
  const extract::EGraphProblem ep = extract::problem_from_egraph(t.egraph, roots, node_cost);
  extract::Solution sol;
  if (options.extractor == "tree") {
    sol = extract::extract_tree(ep.problem);
  } else if (options.extractor == "dag") {
    // The local search takes at most what the time limit leaves; the limit
    // cut it only if it stopped there rather than converging.
    extract::DagOptions dopt;
    dopt.known = input_form(t, ep);
    const bool shortened = seconds_left < dopt.improve_seconds;
    if (shortened) dopt.improve_seconds = seconds_left;
    sol = extract::extract_dag(ep.problem, dopt);
    if (shortened && (sol.search_cut || seconds_left <= 0)) note_limited(r);
  } else if (options.extractor == "ilp") {
    extract::IlpOptions io;
    io.time_limit_s = options.ilp_time_limit_s;
    const bool shortened = seconds_left < io.time_limit_s;
    if (shortened) io.time_limit_s = std::max(seconds_left, 0.01);  // CBC needs a positive limit; the tree start is kept
    sol = extract::extract_ilp(ep.problem, io);
    if (shortened && !sol.proved_optimal) note_limited(r);
  } else {
    throw std::invalid_argument("unknown extractor '" + options.extractor + "' (tree, dag or ilp)");
  }
  if (options.extractor == "ilp") {
    // Classes the outputs do not reach (unused inputs, which the writer
    // keeps) take the tree extraction's choice (the DAG search gave them
    // that choice already).
    const extract::Solution tree = extract::extract_tree(ep.problem);
    for (size_t c = 0; c < sol.choice.size(); ++c)
      if (sol.choice[c] == extract::kNoNode) sol.choice[c] = tree.choice[c];
  }
  r.extract_dag_cost = sol.dag_cost;
  r.extract_proved_optimal = sol.proved_optimal;
  return extract::to_extraction(t.egraph, ep, sol);
}

}  // namespace sator::pipeline
