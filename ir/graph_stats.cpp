#include "ir/graph_stats.h"

#include "ir/op_table.h"

namespace sator {

namespace {

// "op causal|full masked|unmasked" for a forward attention call.
std::string attention_call(const Node& n) {
  const OpInfo* info = find_op(n.op);
  bool causal = false, masked = false;
  if (info)
    for (size_t i = 0; i < info->params.size(); ++i) {
      const std::string& p = info->params[i].name;
      const Value* v = i < n.args.size() ? &n.args[i] : nullptr;
      for (const auto& [k, kv] : n.kwargs)
        if (k == p) v = &kv;
      if (!v) continue;
      if (p == "is_causal") causal = v->kind == Value::Kind::Bool && v->b;
      if (p == "attn_mask" || p == "attn_bias") masked = v->kind == Value::Kind::Node;
    }
  return n.op + (causal ? " causal" : " full") + (masked ? " masked" : " unmasked");
}

}  // namespace

size_t attention_calls_changed(const std::vector<std::string>& in, const std::vector<std::string>& out) {
  std::map<std::string, int64_t> left;
  for (const std::string& c : in) ++left[c];
  size_t changed = 0;
  for (const std::string& c : out)
    if (--left[c] < 0) ++changed;
  return changed;
}

GraphStats compute_stats(const Graph& g) {
  GraphStats s;
  s.nodes = g.nodes.size();
  for (NodeId id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    ++s.op_histogram[n.op];
    if (is_counted_layout_op(n.op)) ++s.layout_ops;
    if (n.op.find("scaled_dot_product") != std::string::npos) {
      ++s.sdpa_ops;
      if (n.op.find("backward") == std::string::npos) s.attention_calls.push_back(attention_call(n));
    }
    if (n.op == "placeholder") s.inputs.push_back(id);
    if (n.op == "output" && !n.args.empty()) s.outputs = n.args[0].list;
  }
  return s;
}

}  // namespace sator
