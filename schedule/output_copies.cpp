#include "schedule/output_copies.h"

#include <optional>
#include <unordered_set>

#include "memory/peak_memory.h"

namespace sator::schedule {

namespace {

// Whether the tensor node `k` returns views a storage larger than itself.
bool pins_more(const Graph& g, const memory::Storages& st, NodeId k) {
  if (g.nodes[k].result != Node::Result::Tensor || st.refers[k].size() != 1 || st.refers[k][0] < 0) return false;
  return st.bytes[static_cast<size_t>(st.refers[k][0])] > memory::tensor_bytes(g, g.nodes[k].tensor) * (1 + 1e-9);
}

}  // namespace

std::vector<NodeId> copy_pinning_outputs(Graph& g, const Graph& input, std::vector<int64_t>& position) {
  if (g.nodes.empty() || g.nodes.back().op != "output" || input.nodes.empty() || input.nodes.back().op != "output")
    return {};
  if (g.nodes.back().args.empty() || input.nodes.back().args.empty()) return {};
  const Value& in_outs = input.nodes.back().args[0];
  if (!g.nodes.back().args[0].is_list() || !in_outs.is_list() ||
      g.nodes.back().args[0].list.size() != in_outs.list.size())
    return {};
  const memory::Storages st = memory::storages_of(g);
  // The input's storages and the names taken are found only where an output
  // pins more than itself (rare: a 165,000-node graph's names were a tenth
  // of its write).
  std::optional<memory::Storages> in_st;
  std::unordered_set<std::string> names;
  size_t next_name = 0;
  Node output = std::move(g.nodes.back());
  g.nodes.pop_back();
  position.resize(g.nodes.size() + 1, -1);
  const int64_t output_position = position.back();
  position.pop_back();
  std::vector<NodeId> added;
  for (size_t k = 0; k < in_outs.list.size(); ++k) {
    const Value& v = output.args[0].list[k];
    const Value& w = in_outs.list[k];
    if (!v.is_node() || !w.is_node() || !pins_more(g, st, v.node)) continue;
    if (!in_st) in_st = memory::storages_of(input);
    if (pins_more(input, *in_st, w.node)) continue;
    if (names.empty())
      for (const Node& n : g.nodes) names.insert(n.name);
    Node copy;
    copy.op = "aten.clone.default";
    do copy.name = "sator_copy_" + std::to_string(next_name++);
    while (!names.insert(copy.name).second);
    copy.args = {Value::of_node(v.node)};
    copy.result = Node::Result::Tensor;
    copy.tensor = g.nodes[v.node].tensor;
    copy.tensor.stride = clone_strides(g, g.nodes[v.node].tensor);
    g.nodes.push_back(std::move(copy));
    const NodeId id = static_cast<NodeId>(g.nodes.size() - 1);
    output.args[0].list[k] = Value::of_node(id);
    position.push_back(static_cast<int64_t>(w.node));
    added.push_back(id);
  }
  g.nodes.push_back(std::move(output));
  position.push_back(output_position);
  return added;
}

}  // namespace sator::schedule
