#include "schedule/saved_copies.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "chunk/peak_memory.h"

namespace sator::schedule {

namespace {

template <class Fn>
void for_each_ref(const Node& n, Fn&& fn) {
  for (const Value& v : n.args) v.for_each_node(fn);
  for (const auto& kv : n.kwargs) kv.second.for_each_node(fn);
}

void remap(Value& v, const std::vector<NodeId>& to) {
  if (v.kind == Value::Kind::Node) v.node = to[v.node];
  for (Value& x : v.list) remap(x, to);
}

// The forward of a joint graph: the nodes the outputs that read no tangent
// need, tangents excluded (the partitioner's split). Empty without tangents.
std::vector<bool> forward_nodes(const Graph& g) {
  const size_t n = g.nodes.size();
  std::vector<bool> reads_tangent(n, false), forward(n, false);
  bool joint = false;
  for (NodeId i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    if (node.op == "placeholder") {
      reads_tangent[i] = node.role == Role::Tangent;
      joint = joint || reads_tangent[i];
      continue;
    }
    for_each_ref(node, [&](NodeId k) { reads_tangent[i] = reads_tangent[i] || reads_tangent[k]; });
  }
  if (!joint || n == 0 || g.nodes.back().op != "output") return {};
  std::vector<NodeId> todo;
  for_each_ref(g.nodes.back(), [&](NodeId k) {
    if (!reads_tangent[k] && !forward[k]) {
      forward[k] = true;
      todo.push_back(k);
    }
  });
  while (!todo.empty()) {
    const NodeId i = todo.back();
    todo.pop_back();
    for_each_ref(g.nodes[i], [&](NodeId k) {
      if (!forward[k]) {
        forward[k] = true;
        todo.push_back(k);
      }
    });
  }
  return forward;
}

// Each saved storage (a forward storage a backward node reads) with the
// forward nodes through which the backward reads it.
struct Saved {
  chunk::Storages st;
  std::vector<std::vector<NodeId>> readers;  // by storage: forward nodes the backward reads it through
  std::vector<bool> kept_by_output;          // by storage
};

Saved saved_storages(const Graph& g, const std::vector<bool>& forward) {
  Saved s{chunk::storages_of(g), {}, {}};
  s.readers.resize(s.st.bytes.size());
  s.kept_by_output.assign(s.st.bytes.size(), false);
  std::vector<bool> listed(g.nodes.size(), false);
  for (NodeId i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    const bool output = node.op == "output";
    if (forward[i] || node.op == "placeholder") continue;
    for_each_ref(node, [&](NodeId k) {
      for (int64_t id : s.st.refers[k]) {
        if (id < 0 || g.nodes[s.st.owner[static_cast<size_t>(id)]].op == "placeholder") continue;
        if (output) s.kept_by_output[static_cast<size_t>(id)] = true;
        else if (forward[k] && !listed[k]) s.readers[static_cast<size_t>(id)].push_back(k);
      }
      if (!output && forward[k]) listed[k] = true;
    });
  }
  return s;
}

// The bytes of the views through which the backward reads saved storage
// `id`; -1 where it reads the base itself (or a tuple's piece).
double read_through_views(const Graph& g, const Saved& s, size_t id) {
  double read = 0;
  for (NodeId k : s.readers[id]) {
    const Node& n = g.nodes[k];
    if (k == s.st.owner[id] || n.result != Node::Result::Tensor || s.st.refers[k].size() != 1) return -1;
    read += chunk::tensor_bytes(g, n.tensor);
  }
  return read;
}

}  // namespace

SavedMemory saved_memory(const Graph& g) {
  const std::vector<bool> forward = forward_nodes(g);
  SavedMemory m;
  if (forward.empty()) return m;
  const Saved s = saved_storages(g, forward);
  for (size_t id = 0; id < s.readers.size(); ++id) {
    if (s.readers[id].empty()) continue;
    m.bytes += s.st.bytes[id];
    if (const double read = read_through_views(g, s, id); read >= 0 && !s.kept_by_output[id])
      m.pinned_by_views += std::max(0.0, s.st.bytes[id] - read);
  }
  return m;
}

std::vector<NodeId> copy_pinning_saved(Graph& g, std::vector<int64_t>& position) {
  const std::vector<bool> forward = forward_nodes(g);
  if (forward.empty()) return {};
  const Saved s = saved_storages(g, forward);
  std::vector<bool> copy(g.nodes.size(), false);
  size_t copies = 0;
  for (size_t id = 0; id < s.readers.size(); ++id) {
    const std::vector<NodeId>& readers = s.readers[id];
    if (readers.empty() || s.kept_by_output[id]) continue;
    // A copy frees the base at the forward's end only where every read
    // goes through a copy, and pays only where the copies are smaller.
    const double read = read_through_views(g, s, id);
    if (read < 0 || read >= s.st.bytes[id] * (1 - 1e-9)) continue;
    for (NodeId k : readers) copies += !copy[k], copy[k] = true;
  }
  if (copies == 0) return {};
  std::unordered_set<std::string> names;
  for (const Node& n : g.nodes) names.insert(n.name);
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
    for (size_t c = 0;; ++c) {
      clone.name = "sator_saved_copy_" + std::to_string(c);
      if (names.insert(clone.name).second) break;
    }
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
