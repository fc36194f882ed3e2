#include "pipeline/explain_removals.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "egraph/explain.h"

namespace sator::pipeline {

std::vector<Removal> explain_removals(const TensorEGraph& t, const Graph& output, const std::vector<eg::Id>& enode_of) {
  const Graph& input = t.source();
  std::unordered_set<std::string> kept_names;
  for (const Node& n : output.nodes) kept_names.insert(n.name);
  std::unordered_map<eg::Id, NodeId> written_class;  // class -> the output node writing it (the first)
  for (NodeId i = 0; i < output.nodes.size() && i < enode_of.size(); ++i)
    if (enode_of[i] != eg::kNoId) written_class.emplace(t.egraph.find(enode_of[i]), i);
  std::vector<Removal> out;
  size_t explained = 0;
  for (NodeId i = 0; i < input.nodes.size(); ++i) {
    const Node& n = input.nodes[i];
    if (n.op == "placeholder" || n.op == "output" || kept_names.count(n.name)) continue;
    Removal r;
    r.node = n.name;
    const auto w = written_class.find(t.class_of(i));
    if (w == written_class.end()) {
      out.push_back(std::move(r));  // its class is read by nothing the output computes
      continue;
    }
    r.replaced_by = output.nodes[w->second].name;
    const eg::Id from = t.node_of(i), to = enode_of[w->second];
    if (from == to || !t.egraph.explain()) {
      // The same e-node: loading folded two identical input nodes into one.
      r.explained = from == to;
    } else if (explained >= kMaxExplainedRemovals) {
      r.explained = false;
    } else {
      ++explained;
      r.rules = t.egraph.explain()->rules_between(from, to);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace sator::pipeline
