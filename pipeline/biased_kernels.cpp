#include "pipeline/biased_kernels.h"

#include <cmath>
#include <limits>
#include <optional>

#include "cost/fused_estimate.h"

namespace sator::pipeline {

namespace {

// The efficient forward kernel given a bias (its fourth argument a tensor).
bool biased_efficient_forward(const Node& n) {
  return n.op == "aten._scaled_dot_product_efficient_attention.default" && n.args.size() > 3 && n.args[3].is_node();
}

// A backward kernel: the efficient one (asked for the bias's gradient, or
// not) or cuDNN's.
bool efficient_backward(const Node& n) { return n.op == "aten._scaled_dot_product_efficient_attention_backward.default"; }
bool cudnn_backward(const Node& n) { return n.op == "aten._scaled_dot_product_cudnn_attention_backward.default"; }

// Whether an efficient backward is asked for grad_bias (its output mask's
// fourth entry).
bool asks_grad_bias(const Node& n) {
  for (const Value& v : n.args)
    if (v.is_list() && v.list.size() == 4 && v.list[3].kind == Value::Kind::Bool) return v.list[3].b;
  return false;
}

// An extraction written (in the extraction's order: the estimate does not
// depend on it) and estimated as Inductor fuses it.
struct Form {
  Graph graph;
  std::vector<eg::Id> enode_of;
  double us = 0;
};

Form form_of(const TensorEGraph& t, const cost::Device& d, const eg::Extraction& x) {
  Form f;
  f.graph = t.write(x, &f.enode_of, nullptr, /*recompute=*/false);
  f.us = cost::fused_estimate(f.graph, d).seconds * 1e6;
  return f;
}

std::unordered_set<eg::Id> classes_of(const TensorEGraph& t, const std::vector<eg::Id>& enode_of) {
  std::unordered_set<eg::Id> out;
  for (eg::Id e : enode_of)
    if (e != eg::kNoId) out.insert(t.egraph.find(e));
  return out;
}

}  // namespace

std::vector<BiasedKernelTrial> weigh_biased_kernels(const TensorEGraph& t, const cost::Device& d, Extracted& chosen,
                                                    std::unordered_set<eg::Id>& priced_out,
                                                    const ExtractWithout& extract,
                                                    const std::function<bool()>& out_of_time) {
  std::vector<BiasedKernelTrial> trials;
  Form current = form_of(t, d, chosen.x);
  // Tries the graph without `kernels` (named `name` in the report): kept
  // where estimated cheaper.
  const auto weigh = [&](const std::vector<eg::Id>& kernels, const std::string& name) {
    BiasedKernelTrial trial;
    trial.kernel = name;
    trial.with_kernels_us = current.us;
    std::unordered_set<eg::Id> without_kernels = priced_out;
    without_kernels.insert(kernels.begin(), kernels.end());
    Extracted e = extract(without_kernels);
    if (!std::isfinite(e.dag_cost)) {  // nothing computes the blocks without them
      trial.without_us = std::numeric_limits<double>::infinity();
      trials.push_back(std::move(trial));
      return;
    }
    Form without = form_of(t, d, e.x);
    trial.without_us = without.us;
    trial.kept_kernels = !(without.us < current.us);
    if (!trial.kept_kernels) {
      const std::unordered_set<eg::Id> had = classes_of(t, current.enode_of);
      for (eg::Id c : classes_of(t, without.enode_of))
        if (!had.count(c)) trial.decomposed.insert(c);
      chosen = std::move(e);
      priced_out = std::move(without_kernels);
      current = std::move(without);
    }
    trials.push_back(std::move(trial));
  };
  const auto kernels_in = [&](const Form& f) {
    std::vector<std::pair<eg::Id, std::string>> out;
    for (size_t i = 0; i < f.graph.nodes.size(); ++i)
      if (biased_efficient_forward(f.graph.nodes[i]) && f.enode_of[i] != eg::kNoId)
        out.emplace_back(f.enode_of[i], f.graph.nodes[i].name);
    return out;
  };
  // One block, one backward kernel: the per-node prices can take dq, dk
  // and dv from a backward not asked for the bias's gradient (cuDNN's, or
  // the efficient one without it) and dS from the efficient backward asked
  // for it, both run, where the latter alone gives all four (a shared node
  // is freed only by switching every class that reads it, which the
  // extraction's local search does not try). Those other backwards of the
  // same q are priced out, round by round (pricing out cuDNN's brings in
  // the efficient one without the gradient), and the form kept where it
  // is estimated cheaper.
  {
    std::unordered_set<eg::Id> one_pair = priced_out;
    std::optional<Form> form;  // the last round's
    for (int round = 0; round < 3 && !out_of_time(); ++round) {
      const Form& f = form ? *form : current;
      std::unordered_set<eg::Id> queries;  // q's class of each backward asked for grad_bias
      for (size_t i = 0; i < f.graph.nodes.size(); ++i)
        if (const eg::Id n = f.enode_of[i];
            n != eg::kNoId && efficient_backward(f.graph.nodes[i]) && asks_grad_bias(f.graph.nodes[i]))
          queries.insert(t.egraph.find(t.egraph.children(n)[1]));
      bool other = false;
      for (size_t i = 0; i < f.graph.nodes.size(); ++i) {
        const Node& n = f.graph.nodes[i];
        const eg::Id id = f.enode_of[i];
        if (id == eg::kNoId || !(cudnn_backward(n) || (efficient_backward(n) && !asks_grad_bias(n)))) continue;
        if (queries.count(t.egraph.find(t.egraph.children(id)[1]))) other = one_pair.insert(id).second || other;
      }
      if (!other) break;
      Extracted e = extract(one_pair);
      if (!std::isfinite(e.dag_cost)) break;
      form = form_of(t, d, e.x);
      if (form->us < current.us) {  // each round's form kept where it is the cheapest so far
        chosen = std::move(e);
        priced_out = one_pair;
        current = *form;
      }
    }
  }
  // All of them first: a model's blocks are alike, and one extraction then
  // decides them all (a 24-layer model would otherwise take 24).
  const auto all = kernels_in(current);
  if (all.empty() || out_of_time()) return trials;
  if (all.size() > 1) {
    std::vector<eg::Id> ids;
    std::string names;
    for (const auto& [id, name] : all) {
      ids.push_back(id);
      names += (names.empty() ? "" : ", ") + name;
    }
    weigh(ids, names);
    if (!trials.back().kept_kernels) return trials;
  }
  // Else one block at a time, in the order written.
  std::unordered_set<eg::Id> tried;
  while (!out_of_time()) {
    std::optional<std::pair<eg::Id, std::string>> next;
    for (const auto& k : kernels_in(current))
      if (!tried.count(k.first)) {
        next = k;
        break;
      }
    if (!next) break;
    tried.insert(next->first);
    weigh({next->first}, next->second);
  }
  return trials;
}

}  // namespace sator::pipeline
