// `sator check-rules --graph G.json`: where each rule could match in a graph
// and why it does not fire there (cli/rule_on_graph.cpp).
#pragma once

#include <string>
#include <vector>

#include "rulelang/rule_set.h"

namespace sator::cli {

// Prints, per rule of `files` (the shipped rule files where empty) named in
// `names` (every rule where empty), the places of its root op in the graph
// saturated as `optimize` saturates it and why it does not fire at each.
// Throws GraphError for a graph that does not load or a name that is not a rule.
int explain_rules_on_graph(const std::vector<rulelang::RuleFile>& files, const std::vector<std::string>& names,
                           const std::string& graph_path);

}  // namespace sator::cli
