// The greedy baseline behind `sator greedy`: the same rules as `sator
// optimize`, applied the way PyTorch Inductor's pattern matcher applies its
// patterns (torch/_inductor/pattern_matcher.py, PatternMatcherPass.apply):
//
//  - rules are grouped in ordered passes: layout canonicalization first (as
//    PR #170649's early_patterns), then recomposition, then attention;
//  - each pass is one sweep over the graph's nodes in reverse topological
//    order (last node first); at each node the pass's rules are tried in
//    order and the first that matches rewrites the graph destructively: the
//    node's users now read the replacement, and what only it used is gone;
//  - nodes a rewrite creates are not visited again in that sweep, and there
//    is no fixpoint unless asked for (then the passes repeat until a round
//    changes nothing, up to a round limit);
//  - as Inductor requires of a traced pattern, every intermediate node of a
//    match has exactly as many users as the pattern gives it (the pattern's
//    root may have any number), so a value that is also used elsewhere is
//    never consumed by a rewrite.
//
// The graph stays a term graph throughout (an e-graph that is never merged,
// so its analyses give the rules the same shapes and facts as in
// saturation); each pass starts from the graph the previous one wrote.
#pragma once

#include "rulelang/rule_set.h"

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "pipeline/optimize.h"

namespace sator::pipeline {

struct GreedyOptions {
  bool fixpoint = false;
  size_t max_rounds = 10;     // with fixpoint
  bool fuse_dropout = false;  // as OptimizeOptions::fuse_dropout
  std::string cost = "roofline", device = "h200";  // for the report's cost in and out
  // A user's rule files: a last pass of their own, or with rules_only the
  // only pass (as OptimizeOptions).
  std::vector<rulelang::RuleFile> user_rules;
  bool rules_only = false;
};

struct GreedyPassInfo {
  std::string name;
  std::vector<std::string> rules;  // in the order they are tried
};
// The passes in order, with their rules (training graphs skip the attention
// pass, as `sator optimize` does).
std::vector<GreedyPassInfo> greedy_passes(bool fuse_dropout = false);

struct GreedyResult {
  OptimizeResult result;  // graph, counts, costs, times (egraph fields: the last pass's term graph)
  size_t rounds = 0;
  bool round_limit_hit = false;  // fixpoint: still changing after max_rounds
  size_t rewrites = 0;
  std::map<std::string, size_t> rewrites_by_rule;
};

// Throws std::logic_error if the result fails shape validation.
GreedyResult greedy_optimize(const Graph& input, const GreedyOptions& options = {});

}  // namespace sator::pipeline
