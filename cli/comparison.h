// Greedy rewriting against equality saturation on one graph, with
// Inductor's own result beside them where the corpus holds it: what
// `sator compare` prints and what `sator batch` records per graph.
#pragma once

#include "rulelang/rule_set.h"

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace sator::cli {

struct CompareOptions {
  std::string cost = "roofline", device = "h200";
  std::string extractor = "dag";  // saturation's extractor
  bool greedy_fixpoint = false;
  std::string objective = "memory";  // saturation's: memory (never raise the estimated peak), balanced or time
  size_t repeat = 3;     // each method's time is the median of this many runs (after a process-wide warm-up)
  std::string inductor;  // Inductor's graph; empty: found by inductor_path_for, if there
  std::vector<rulelang::RuleFile> user_rules;  // a user's rules, for both methods (checked already)
  bool rules_only = false;
  std::vector<std::string> user_rule_args;  // the same as arguments, for batch's worker processes
};

// The comparison as JSON (schema in docs/batch.md): the input's numbers and
// one object per method (greedy, sator, inductor or null), each with nodes,
// layout_ops, attention_fused, cost, peak_bytes and time_ms. Throws
// GraphError for bad input.
nlohmann::ordered_json compare_graph(const std::string& path, const CompareOptions& o);

// The side-by-side text table of one comparison.
std::string comparison_table(const nlohmann::ordered_json& c);

// Where Inductor's graph for DIR/NAME.json would be: DIR/inductor/NAME.json
// if that exists, else DIR/../inductor/NAME.json (the corpus layout).
std::string inductor_path_for(const std::string& path);

}  // namespace sator::cli
