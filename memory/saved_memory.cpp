#include "memory/saved_memory.h"

#include <algorithm>

namespace sator::memory {

namespace {

template <class Fn>
void for_each_ref(const Node& n, Fn&& fn) {
  for (const Value& v : n.args) v.for_each_node(fn);
  for (const auto& kv : n.kwargs) kv.second.for_each_node(fn);
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

// g's saved storages, from its forward (forward_nodes) and storages.
SavedStorages saved_from(const Graph& g, std::vector<bool> forward_of_g, Storages st) {
  SavedStorages s{std::move(forward_of_g), std::move(st), {}, {}};
  if (s.forward.empty()) return s;
  const std::vector<bool>& forward = s.forward;
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

}  // namespace

SavedStorages saved_storages(const Graph& g) {
  std::vector<bool> forward = forward_nodes(g);
  if (forward.empty()) return SavedStorages{};
  return saved_from(g, std::move(forward), storages_of(g));
}

SavedStorages saved_storages(const Graph& g, Storages st) { return saved_from(g, forward_nodes(g), std::move(st)); }

double read_through_views(const Graph& g, const SavedStorages& s, size_t id) {
  double read = 0;
  for (NodeId k : s.readers[id]) {
    const Node& n = g.nodes[k];
    if (k == s.st.owner[id] || n.result != Node::Result::Tensor || s.st.refers[k].size() != 1) return -1;
    read += tensor_bytes(g, n.tensor);
  }
  return read;
}

namespace {

SavedMemory saved_memory_of(const Graph& g, const SavedStorages& s) {
  SavedMemory m;
  if (s.forward.empty()) return m;
  for (size_t id = 0; id < s.readers.size(); ++id) {
    if (s.readers[id].empty()) continue;
    m.bytes += s.st.bytes[id];
    if (const double read = read_through_views(g, s, id); read >= 0 && !s.kept_by_output[id])
      m.pinned_by_views += std::max(0.0, s.st.bytes[id] - read);
  }
  return m;
}

}  // namespace

SavedMemory saved_memory(const Graph& g) { return saved_memory_of(g, saved_storages(g)); }

SavedMemory saved_memory(const Graph& g, Storages& st) {
  SavedStorages s = saved_storages(g, std::move(st));
  const SavedMemory m = saved_memory_of(g, s);
  st = std::move(s.st);
  return m;
}

}  // namespace sator::memory
