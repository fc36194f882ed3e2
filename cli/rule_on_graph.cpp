// `sator check-rules [--rules FILE] [--rule NAME] --graph G.json`: where in a
// graph each rule could match and why it does not fire there, after the
// graph is saturated as `sator optimize --rules FILE` saturates it (the
// shipped rules and the file's). A rule author's question "why did my rule
// not fire?" answered with the part of the pattern or the condition that
// failed, and where the file writes it.
#include "cli/rule_on_graph.h"

#include <cstdio>
#include <map>

#include "egraph/runner.h"
#include "ir/graph_io.h"
#include "ir/printable.h"
#include "ir/shape_check.h"
#include "pipeline/optimize.h"
#include "pipeline/rule_selection.h"
#include "rulelang/rule_diagnose.h"
#include "rulelang/rule_set.h"
#include "tensor/tensor_egraph.h"

namespace sator::cli {

namespace {

// Places listed per rule; the rest are counted by reason.
constexpr size_t kListedPlaces = 12;
constexpr size_t kDiagnosedPlaces = 2000;

// A node's name in the graph where it is the input's own, else its op.
std::string place_name(const TensorEGraph& t, eg::Id node) {
  const int64_t orig = t.original_node(node);
  const std::string& op = t.lang.op_name(t.egraph.op(node));
  return orig >= 0 ? "'" + t.source().nodes[static_cast<size_t>(orig)].name + "' (" + op + ")"
                   : "a node a rule made (" + op + ")";
}

}  // namespace

int explain_rules_on_graph(const std::vector<rulelang::RuleFile>& files, const std::vector<std::string>& names,
                           const std::string& graph_path) {
  const std::vector<rulelang::RuleFile> source =
      files.empty() ? [] {
        std::vector<rulelang::RuleFile> shipped;
        for (const std::string& f : rulelang::shipped_rule_file_names()) shipped.push_back(rulelang::shipped_rule_file(f));
        return shipped;
      }()
                    : files;
  // A name that is no rule is said before the graph is loaded and saturated.
  for (const std::string& name : names) {
    bool known = false;
    for (const rulelang::RuleFile& f : source)
      for (const rulelang::RuleSpec& r : f.rules) known |= r.name == name;
    std::string where;  // the files looked in
    for (const rulelang::RuleFile& f : source) where += (where.empty() ? "" : ", ") + f.path;
    if (!known) throw GraphError(where, "", "--rule: no rule named '" + printable(name) + "' here");
  }
  const Graph input = load_graph(graph_path);
  TensorEGraph t(input);
  pipeline::OptimizeOptions options;
  options.user_rules = files;
  {
    const std::vector<eg::Rewrite> rules = pipeline::rules_for(input, t, options);
    eg::Runner runner;
    runner.with_iter_limit(options.iter_limit).with_node_limit(pipeline::default_node_limit(input)).with_time_limit(10.0);
    runner.run(t.egraph, rules);
  }
  const auto compiled = rulelang::compile_rules(source, t.lang);
  std::printf("%s: %zu nodes, saturated to %zu e-nodes with the shipped rules%s\n", input.name.c_str(),
              input.nodes.size(), t.egraph.total_class_nodes(), files.empty() ? "" : " and the file's");
  for (const auto& rule : compiled) {
    if (!names.empty() && std::find(names.begin(), names.end(), rule->name) == names.end()) continue;
    size_t total = 0;
    const std::vector<rulelang::RulePlace> places = rulelang::rule_places(rule, t, kDiagnosedPlaces, &total);
    size_t fires = 0;
    std::map<std::string, size_t> reasons;
    for (const auto& p : places) {
      if (p.fires) ++fires;
      else ++reasons[p.why];
    }
    std::printf("\nrule %s (%s): %zu place(s) of its root op, fires at %zu\n", rule->name.c_str(), rule->at.text().c_str(),
                total, fires);
    size_t listed = 0;
    for (const auto& p : places) {
      if (listed++ == kListedPlaces) {
        std::printf("  ... (%zu more)\n", places.size() - kListedPlaces);
        break;
      }
      std::printf("  %s: %s\n", place_name(t, p.node).c_str(), p.fires ? "fires" : printable(p.why).c_str());
    }
    if (places.size() > kListedPlaces) {
      std::printf("  why not, over the %zu places looked at:\n", places.size());
      for (const auto& [why, n] : reasons) std::printf("    %zu: %s\n", n, printable(why).c_str());
    }
  }
  return 0;
}

}  // namespace sator::cli
