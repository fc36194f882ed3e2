#include "schedule/memory_schedule.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <stdexcept>

#include "chunk/peak_memory.h"
#include "ir/op_table.h"

namespace sator::schedule {

namespace {

bool draws_random(const Node& n) {
  const OpInfo* op = find_op(n.op);
  return op && op->cls == OpClass::Random;
}

// Each node's operands (node references in its args and kwargs), each once.
std::vector<std::vector<NodeId>> operands_of(const Graph& g) {
  std::vector<std::vector<NodeId>> ops(g.nodes.size());
  for (NodeId i = 0; i < g.nodes.size(); ++i) {
    auto add = [&](NodeId r) {
      if (std::find(ops[i].begin(), ops[i].end(), r) == ops[i].end()) ops[i].push_back(r);
    };
    for (const Value& v : g.nodes[i].args) v.for_each_node(add);
    for (const auto& kv : g.nodes[i].kwargs) kv.second.for_each_node(add);
  }
  return ops;
}

// What must run before each node: its operands and, for a random draw, the
// draw before it (draws consume one generator's stream: reordered, each
// would draw other numbers than the input's).
// would draw other numbers than the input's). Draws go in the order of
// their keys (the input's order), ties in g's.
std::vector<std::vector<NodeId>> dependences_of(const Graph& g, const std::vector<double>& key) {
  std::vector<std::vector<NodeId>> deps = operands_of(g);
  std::vector<NodeId> draws;
  for (NodeId i = 0; i < g.nodes.size(); ++i)
    if (draws_random(g.nodes[i])) draws.push_back(i);
  std::stable_sort(draws.begin(), draws.end(), [&](NodeId a, NodeId b) { return key[a] < key[b]; });
  for (size_t k = 1; k < draws.size(); ++k) deps[draws[k]].push_back(draws[k - 1]);
  return deps;
}

Value renumbered(const Value& v, const std::vector<NodeId>& new_id) {
  if (v.kind == Value::Kind::Node) return Value::of_node(new_id[v.node]);
  if (v.list.empty()) return v;
  Value out = v;
  for (Value& x : out.list) x = renumbered(x, new_id);
  return out;
}

// A list scheduler over g's dependence graph: `pick` chooses among the
// ready nodes (by index into `ready`); `ran` is told each node scheduled.
template <class Pick, class Ran>
Order list_schedule(const Graph& g, const std::vector<double>& key, Pick pick, Ran ran) {
  const size_t n = g.nodes.size();
  const std::vector<std::vector<NodeId>> ops = dependences_of(g, key);
  std::vector<std::vector<NodeId>> users(n);
  std::vector<size_t> waiting(n, 0);
  for (NodeId i = 0; i < n; ++i) {
    waiting[i] = ops[i].size();
    for (NodeId o : ops[i]) users[o].push_back(i);
  }
  Order order;
  order.reserve(n);
  std::vector<NodeId> ready;
  NodeId output = static_cast<NodeId>(n);
  for (NodeId i = 0; i < n; ++i) {
    if (g.nodes[i].op == "placeholder") {
      // Inputs keep their places at the front (they are held throughout).
      order.push_back(i);
      continue;
    }
    if (g.nodes[i].op == "output") output = i;
  }
  const auto release = [&](NodeId i) {
    for (NodeId u : users[i])
      if (--waiting[u] == 0 && u != output && g.nodes[u].op != "placeholder") ready.push_back(u);
  };
  for (NodeId i = 0; i < n; ++i)
    if (waiting[i] == 0 && i != output && g.nodes[i].op != "placeholder") ready.push_back(i);
  for (NodeId i : Order(order)) {
    ran(i);
    release(i);
  }
  while (!ready.empty()) {
    const size_t k = pick(ready);
    const NodeId i = ready[k];
    ready[k] = ready.back();
    ready.pop_back();
    order.push_back(i);
    ran(i);
    release(i);
  }
  if (output < n) order.push_back(output);
  if (order.size() != n) throw std::logic_error("schedule: the graph has a cycle");
  return order;
}

}  // namespace

Graph reordered(const Graph& g, const Order& order) {
  std::vector<NodeId> new_id(g.nodes.size());
  for (size_t k = 0; k < order.size(); ++k) new_id[order[k]] = static_cast<NodeId>(k);
  Graph out = g;
  for (size_t k = 0; k < order.size(); ++k) {
    Node node = g.nodes[order[k]];
    for (Value& v : node.args) v = renumbered(v, new_id);
    for (auto& kv : node.kwargs) kv.second = renumbered(kv.second, new_id);
    out.nodes[k] = std::move(node);
  }
  return out;
}

Order by_keys(const Graph& g, const std::vector<double>& key) {
  const auto later = [&](NodeId a, NodeId b) { return key[a] != key[b] ? key[a] > key[b] : a > b; };
  return list_schedule(
      g, key,
      [&](std::vector<NodeId>& ready) {
        size_t best = 0;
        for (size_t k = 1; k < ready.size(); ++k)
          if (later(ready[best], ready[k])) best = k;
        return best;
      },
      [](NodeId) {});
}

std::vector<double> keys_from_positions(const Graph& g, const std::vector<int64_t>& position) {
  const size_t n = g.nodes.size();
  const std::vector<std::vector<NodeId>> ops = operands_of(g);
  std::vector<double> key(n, std::numeric_limits<double>::infinity());
  for (NodeId i = 0; i < n; ++i)
    if (i < position.size() && position[i] >= 0) key[i] = static_cast<double>(position[i]);
  // g is in a topological order: users come after, so a reverse pass sees
  // every user's key before its operands'.
  for (NodeId i = static_cast<NodeId>(n); i-- > 0;)
    for (NodeId o : ops[i])
      if (o >= position.size() || position[o] < 0) key[o] = std::min(key[o], key[i]);
  return key;
}

Order greedy_memory(const Graph& g, const std::vector<double>& key) {
  const chunk::Storages st = chunk::storages_of(g);
  const size_t n = g.nodes.size();
  const std::vector<std::vector<NodeId>> ops = operands_of(g);
  // The storages each node reads (through its operands' results), each once.
  std::vector<std::vector<int64_t>> reads(n);
  std::vector<size_t> readers(st.bytes.size(), 0);
  std::vector<bool> pinned(st.bytes.size(), false);
  for (NodeId i = 0; i < n; ++i) {
    for (NodeId o : ops[i])
      for (int64_t s : st.refers[o])
        if (s >= 0 && std::find(reads[i].begin(), reads[i].end(), s) == reads[i].end()) reads[i].push_back(s);
    for (int64_t s : reads[i]) {
      ++readers[static_cast<size_t>(s)];
      if (g.nodes[i].op == "output") pinned[static_cast<size_t>(s)] = true;
    }
  }
  for (size_t s = 0; s < st.bytes.size(); ++s) pinned[s] = pinned[s] || g.nodes[st.owner[s]].op == "placeholder";
  std::vector<double> allocates(n, 0.0);
  for (size_t s = 0; s < st.bytes.size(); ++s) allocates[st.owner[s]] += st.bytes[s];
  const auto gain = [&](NodeId i) {
    double freed = 0;
    for (int64_t s : reads[i])
      if (!pinned[static_cast<size_t>(s)] && readers[static_cast<size_t>(s)] == 1) freed += st.bytes[static_cast<size_t>(s)];
    return freed - allocates[i];
  };
  return list_schedule(
      g, key,
      [&](std::vector<NodeId>& ready) {
        // The ready node of least key among those that free at least what
        // they allocate; where none does, the least key.
        size_t best = 0, best_freeing = ready.size();
        for (size_t k = 0; k < ready.size(); ++k) {
          const auto before = [&](size_t a, size_t b) {
            return key[ready[a]] != key[ready[b]] ? key[ready[a]] < key[ready[b]] : ready[a] < ready[b];
          };
          if (before(k, best)) best = k;
          if (gain(ready[k]) >= 0 && (best_freeing == ready.size() || before(k, best_freeing))) best_freeing = k;
        }
        return best_freeing < ready.size() ? best_freeing : best;
      },
      [&](NodeId i) {
        for (int64_t s : reads[i]) --readers[static_cast<size_t>(s)];
      });
}

Scheduled schedule_for_memory(Graph g, const std::vector<int64_t>& position) {
  Scheduled best;
  best.peak_bytes = chunk::estimate_peak_memory(g).peak_bytes;
  best.strategy = "as written";
  best.tried.emplace_back(best.strategy, best.peak_bytes);
  const std::vector<double> key = keys_from_positions(g, position);
  // The greedy scheduler looks at every ready node at each step: quadratic
  // where thousands are ready at once, so very large graphs skip it.
  constexpr size_t kGreedyLimit = 20000;
  std::vector<std::pair<std::string, Order>> candidates;
  candidates.emplace_back("input order", by_keys(g, key));
  if (g.nodes.size() <= kGreedyLimit) candidates.emplace_back("frees first", greedy_memory(g, key));
  Graph chosen;
  Order chosen_order;
  for (auto& [name, order] : candidates) {
    Graph r = reordered(g, order);
    const double peak = chunk::estimate_peak_memory(r).peak_bytes;
    best.tried.emplace_back(name, peak);
    if (peak < best.peak_bytes) {
      best.peak_bytes = peak;
      best.strategy = name;
      chosen = std::move(r);
      chosen_order = order;
    }
  }
  best.graph = best.strategy == "as written" ? std::move(g) : std::move(chosen);
  best.order = std::move(chosen_order);
  return best;
}

}  // namespace sator::schedule
