// The optimization behind `sator optimize`: load a graph into an e-graph,
// saturate with the rules (pipeline/rule_selection.h), extract the cheapest
// form (pipeline/extract_step.h), write it back as a graph in the
// extraction's order, re-validate. pipeline/run.h adds chunking, --verify and
// the output file around it.
#pragma once

#include "rulelang/rule_set.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/runner.h"
#include "ir/graph.h"
#include "pipeline/biased_kernels.h"
#include "pipeline/explain_attention.h"
#include "pipeline/explain_removals.h"

namespace sator::pipeline {

// The e-graph size limit for a graph: 200,000 nodes, or 20 per input node
// for larger graphs. A fixed limit stopped a 100,000-deep view chain (which
// saturates at 17 nodes) after 3 iterations, and would stop 70 stacked
// copies of GPT-2's training graph unsaturated.
size_t default_node_limit(const Graph& input);

struct OptimizeOptions {
  size_t iter_limit = 30;
  size_t node_limit = 0;  // 0: default_node_limit(input)
  // The whole run's time: saturation stops at it, extraction's local search
  // (or the ILP) gets what is left of it; `limited` says which phases it cut.
  double time_limit_s = 10.0;
  bool fuse_dropout = false;  // attention with explicit dropout -> SDPA's own (changes random draws)
  bool training_attention = true;  // joint graphs: attention forward and backward fused together
  // ... also through the efficient kernels where the scores add a mask tensor
  // (passed as attn_bias, its gradient from them where it needs one), each
  // such block weighed by the graph as Inductor fuses it
  // (pipeline/biased_kernels.h: measured slower than the decomposed block
  // in most places, BERT's padding mask 0.95-0.99x). false: a bias goes only
  // to the cuDNN pair (16-bit, no gradient).
  bool training_attention_bias = true;
  // ... and each such block the extraction chose weighed by the fused
  // estimate. false: kept as extracted (their lower peak at more time: what
  // the tests of the fused blocks' other rules need).
  bool weigh_biased_kernels = true;
  // Note which rule made each node of the result (OptimizeResult::made_by).
  bool explain = false;
  // List every softmax over a rank-4 tensor, fused or why not
  // (OptimizeResult::attention, pipeline/explain_attention.h).
  bool explain_attention = false;
  // Inference attention under autocast (16-bit scores, a float32 mask, a
  // float32 softmax cast back) fused in 16 bits (rules/mixed_precision.h).
  bool mixed_precision_attention = true;
  // Never raise the estimated peak memory above the input's
  // (pipeline/peak_guard.h); off (`--objective time`): the fastest form,
  // still written in the order of least peak.
  bool hold_peak = true;
  // With hold_peak (`--objective balanced`): the fastest form is kept where
  // its estimated peak rises by no larger a fraction than its estimated
  // time falls (1% more memory for at least 1% less time).
  bool balanced = false;
  std::string extractor = "dag";   // tree, dag or ilp (extract/extractors.h)
  std::string cost = "roofline";   // roofline (estimated compiled µs) or nodes (each compute node 1)
  std::string device = "h200";     // the roofline model's device
  double ilp_time_limit_s = 60.0;
  // What the output may contain (ir/output_target.h): "any", or
  // "inductor-joint" (only ops Inductor lowers after its decompositions;
  // what sator recomposed and did not fuse goes back to the input's form).
  std::string target = "any";
  // A user's rule files (`--rules`): added to the shipped rules, or with
  // rules_only (`--rules-only`) in their place. Checked before they get here
  // (check/proof_cache.h).
  std::vector<rulelang::RuleFile> user_rules;
  bool rules_only = false;
  // Shipped rules left out by name (`--without-rule`): to see what one rule
  // does, or to run the rule set of an earlier release. An unknown name is an
  // error (std::invalid_argument from rules_for).
  std::vector<std::string> without_rules;
  // Where the input is kept (a time limit, the peak guard), copy it into
  // OptimizeResult::output. false: leave output empty and read the input
  // through kept_or_output() — copying 165,000 nodes took 150 ms of a 0.5 s
  // --time-limit (issue 39); pipeline::run_file does this.
  bool copy_kept_input = true;
};

struct OptimizeResult {
  Graph output;
  size_t nodes_in = 0, nodes_out = 0;
  size_t layout_ops_in = 0, layout_ops_out = 0;
  size_t sdpa_in = 0, sdpa_out = 0;
  // Forward attention calls of the output the input does not have (fused,
  // or a call whose kernel, mask or is_causal changed): ir/graph_stats.h.
  size_t attention_changed = 0;
  std::vector<std::string> attention_calls_in;
  double cost_in = 0, cost_out = 0;  // under options.cost: nodes, or roofline µs (compiled)
  // The input's estimated peak where the peak guard computed it
  // (memory::estimate_peak_memory(input).peak_bytes): the report reads it
  // rather than estimating the whole input again.
  std::optional<double> peak_in;
  // The output's estimated peak where the peak guard priced the order it
  // wrote (the order search's figure for it, equal to
  // memory::estimate_peak_memory(output).peak_bytes): the report reads it.
  // Cleared by whatever changes the output after the guard (chunking).
  std::optional<double> peak_out;
  double extract_dag_cost = 0;        // the extraction's DAG cost (each chosen node once)
  bool extract_proved_optimal = false;  // ilp: the solver proved the extraction optimal
  size_t egraph_nodes = 0, egraph_classes = 0, iterations = 0;
  eg::StopReason stop = eg::StopReason::None;
  uint64_t z3_queries = 0, z3_cache_hits = 0, z3_calls = 0;
  double saturate_ms = 0, extract_ms = 0, write_ms = 0;
  // The output is the input, kept (a time limit, the peak guard): what is
  // estimated of the input holds for it, without a second pass. `output` is
  // then a copy of it, or empty (OptimizeOptions::copy_kept_input).
  bool output_is_input = false;
  // Where extract_ms went (the peak guard extracts and writes more than one
  // form where the first one's peak is over the input's): the extractions'
  // search, writing the chosen forms as graphs, and the order search for
  // each (schedule/memory_schedule.h).
  struct ExtractParts {
    double search_ms = 0, write_ms = 0, order_ms = 0;
    size_t extractions = 0, forms = 0;
  } extract_parts;
  std::vector<eg::Iteration> per_iteration;
  std::vector<std::pair<std::string, eg::RuleRun>> rule_runs;  // by rule, in the order they ran
  // With OptimizeOptions::explain: each node of the output a rule made, as
  // (node name, rule), in the output's order.
  std::vector<std::pair<std::string, std::string>> made_by;
  // With OptimizeOptions::explain: each input node the output no longer
  // computes, and the rules behind it (pipeline/explain_removals.h).
  std::vector<Removal> removed;
  // With OptimizeOptions::explain_attention: each attention softmax.
  std::vector<AttentionBlock> attention;
  // Training blocks given a bias through the efficient kernels, each weighed
  // by the graph's fused estimate (pipeline/biased_kernels.h).
  std::vector<BiasedKernelTrial> biased_kernels;
  // Phases the time limit cut short ("saturation", "extraction"; the CLI
  // adds "chunk planning"): each still finished with a valid result.
  std::vector<std::string> limited;
  // The order the output is written in (schedule/memory_schedule.h): the
  // one of least estimated peak among those tried, each with its peak.
  std::string schedule;
  std::vector<std::pair<std::string, double>> schedules_tried;
  // Orders given up once their peak so far passed one tried (they cannot
  // win), each with that peak: a lower bound on its own.
  std::vector<std::pair<std::string, double>> schedules_given_up;
  // What the optimizer chose not to do, each with the reason.
  std::vector<std::string> declined;
};

// Graph inputs and outputs (placeholder, get_attr, output): plumbing the
// node-count cost does not count and the roofline prices at zero.
bool is_graph_io(std::string_view op);

// A graph's cost under `cost`: "nodes" (compute nodes) or "roofline" (the
// estimated compiled µs on `device`). Throws std::invalid_argument for an
// unknown model or device.
double estimate_cost(const Graph& g, const std::string& cost, const std::string& device);

// Validates r.output's shapes (std::logic_error naming `what` and the node
// if they fail) and fills r's output counts and cost_out.
// The graph a result stands for: its output, or the input it kept.
inline const Graph& kept_or_output(const OptimizeResult& r, const Graph& input) {
  return r.output_is_input ? input : r.output;
}

void finish_result(OptimizeResult& r, const char* what, const std::string& cost, const std::string& device);

// Throws std::logic_error naming the node if `g` holds an op `target`
// refuses that `input` did not have (a writer bug: extraction never picks one).
void check_output_target(const Graph& g, const Graph& input, const std::string& target);

// Throws UnsoundMerge (a rule bug) or std::logic_error if the output graph
// fails shape validation or the output target.
OptimizeResult optimize(const Graph& input, const OptimizeOptions& options);

}  // namespace sator::pipeline
