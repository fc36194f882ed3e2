#include "schedule/saved_copies.h"

#include <string>
#include <unordered_set>

#include "memory/saved_memory.h"

namespace sator::schedule {

namespace {

void remap(Value& v, const std::vector<NodeId>& to) {
  if (v.kind == Value::Kind::Node) v.node = to[v.node];
  for (Value& x : v.list) remap(x, to);
}

}  // namespace

std::vector<NodeId> copy_pinning_saved(Graph& g, std::vector<int64_t>& position) {
  const memory::SavedStorages s = memory::saved_storages(g);
  if (s.forward.empty()) return {};
  std::vector<bool> copy(g.nodes.size(), false);
  size_t copies = 0;
  for (size_t id = 0; id < s.readers.size(); ++id) {
    const std::vector<NodeId>& readers = s.readers[id];
    if (readers.empty() || s.kept_by_output[id]) continue;
    // A copy frees the base at the forward's end only where every read
    // goes through a copy, and pays only where the copies are smaller.
    const double read = memory::read_through_views(g, s, id);
    if (read < 0 || read >= s.st.bytes[id] * (1 - 1e-9)) continue;
    for (NodeId k : readers) copies += !copy[k], copy[k] = true;
  }
  if (copies == 0) return {};
  std::unordered_set<std::string> names;
  for (const Node& n : g.nodes) names.insert(n.name);
  size_t next_name = 0;  // names only grow: each search starts past the last
  const size_t n = g.nodes.size();
  std::vector<NodeId> to(n);
  std::vector<Node> nodes;
  std::vector<int64_t> positions;
  std::vector<NodeId> added;
  std::vector<std::vector<SymExpr>> strides(n);
  for (NodeId i = 0; i < n; ++i)
    if (copy[i]) strides[i] = clone_strides(g, g.nodes[i].tensor);
  nodes.reserve(n + copies);
  positions.reserve(n + copies);
  position.resize(n, -1);
  for (NodeId i = 0; i < n; ++i) {
    Node node = std::move(g.nodes[i]);
    // Every reader takes the copy, the forward's too: a copy only the
    // backward read would be the backward's, and the view saved after all.
    for (Value& v : node.args) remap(v, to);
    for (auto& kv : node.kwargs) remap(kv.second, to);
    to[i] = static_cast<NodeId>(nodes.size());
    nodes.push_back(std::move(node));
    positions.push_back(position[i]);
    if (!copy[i]) continue;
    Node clone;
    clone.op = "aten.clone.default";
    do clone.name = "sator_saved_copy_" + std::to_string(next_name++);
    while (!names.insert(clone.name).second);
    clone.args = {Value::of_node(to[i])};
    clone.result = Node::Result::Tensor;
    clone.tensor = nodes.back().tensor;
    clone.tensor.stride = std::move(strides[i]);
    to[i] = static_cast<NodeId>(nodes.size());
    added.push_back(to[i]);
    nodes.push_back(std::move(clone));
    positions.push_back(position[i]);
  }
  g.nodes = std::move(nodes);
  position = std::move(positions);
  return added;
}

}  // namespace sator::schedule
