#include "schedule/memory_schedule.h"

#include <algorithm>
#include <limits>
#include <optional>
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

// Ready nodes by (key, index), least first.
class KeyQueue {
 public:
  explicit KeyQueue(const std::vector<double>& key) : later_{&key} {}
  void push(NodeId i) { heap_.push(i); }
  bool empty() const { return heap_.empty(); }
  NodeId top() const { return heap_.top(); }
  void pop() { heap_.pop(); }

 private:
  struct Later {
    const std::vector<double>* key;
    bool operator()(NodeId a, NodeId b) const { return (*key)[a] != (*key)[b] ? (*key)[a] > (*key)[b] : a > b; }
  };
  Later later_;
  std::priority_queue<NodeId, std::vector<NodeId>, Later> heap_{later_};
};

// A list scheduler over g's dependence graph: each node whose dependences
// have run is handed to `ready(i)`; `next()` names the node to run (one it
// was handed and has not named before); `ran(i)` is told each node run,
// placeholders first.
template <class Ready, class Next, class Ran>
Order list_schedule(const Graph& g, const std::vector<double>& key, Ready ready, Next next, Ran ran) {
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
  NodeId output = static_cast<NodeId>(n);
  for (NodeId i = 0; i < n; ++i) {
    if (g.nodes[i].op == "placeholder") {
      // Inputs keep their places at the front (they are held throughout).
      order.push_back(i);
      continue;
    }
    if (g.nodes[i].op == "output") output = i;
  }
  size_t handed = 0;
  const auto hand = [&](NodeId u) {
    if (u == output || g.nodes[u].op == "placeholder") return;
    ++handed;
    ready(u);
  };
  for (NodeId i = 0; i < n; ++i)
    if (waiting[i] == 0) hand(i);
  const auto release = [&](NodeId i) {
    for (NodeId u : users[i])
      if (--waiting[u] == 0) hand(u);
  };
  for (NodeId i : Order(order)) {
    ran(i);
    release(i);
  }
  for (size_t done = 0; done < handed; ++done) {
    const NodeId i = next();
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
  KeyQueue queue(key);
  return list_schedule(
      g, key, [&](NodeId i) { queue.push(i); },
      [&] {
        const NodeId i = queue.top();
        queue.pop();
        return i;
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
  // Two queues of ready nodes by key: all of them, and those that free at
  // least what they allocate. A node's gain only grows (its inputs' other
  // readers run), so once freeing it stays so; run nodes are skipped lazily.
  // Each storage's readers, to find the last one when one is left.
  std::vector<std::vector<NodeId>> readers_of(st.bytes.size());
  for (NodeId i = 0; i < n; ++i)
    for (int64_t s : reads[i]) readers_of[static_cast<size_t>(s)].push_back(i);
  std::vector<char> is_ready(n, 0), has_run(n, 0);
  KeyQueue all(key), freeing(key);
  const auto offer = [&](NodeId i) {
    if (is_ready[i] && !has_run[i] && gain(i) >= 0) freeing.push(i);
  };
  const auto take = [&](KeyQueue& q) -> std::optional<NodeId> {
    while (!q.empty() && has_run[q.top()]) q.pop();
    if (q.empty()) return std::nullopt;
    const NodeId i = q.top();
    q.pop();
    return i;
  };
  return list_schedule(
      g, key,
      [&](NodeId i) {
        is_ready[i] = 1;
        all.push(i);
        offer(i);
      },
      [&] {
        const std::optional<NodeId> f = take(freeing);
        return f ? *f : *take(all);
      },
      [&](NodeId i) {
        has_run[i] = 1;
        for (int64_t s : reads[i])
          if (--readers[static_cast<size_t>(s)] == 1)
            for (NodeId r : readers_of[static_cast<size_t>(s)])
              if (!has_run[r]) offer(r);
      });
}

Scheduled schedule_for_memory(Graph g, const std::vector<int64_t>& position) {
  Scheduled best;
  const chunk::Storages st = chunk::storages_of(g);
  Order as_written(g.nodes.size());
  for (size_t k = 0; k < as_written.size(); ++k) as_written[k] = static_cast<NodeId>(k);
  best.peak_bytes = chunk::peak_bytes_in_order(g, st, as_written);
  best.strategy = "as written";
  best.tried.emplace_back(best.strategy, best.peak_bytes);
  const std::vector<double> key = keys_from_positions(g, position);
  std::vector<std::pair<std::string, Order>> candidates;
  candidates.emplace_back("input order", by_keys(g, key));
  candidates.emplace_back("frees first", greedy_memory(g, key));
  for (auto& [name, order] : candidates) {
    const double peak = chunk::peak_bytes_in_order(g, st, order);
    best.tried.emplace_back(name, peak);
    if (peak < best.peak_bytes) {
      best.peak_bytes = peak;
      best.strategy = name;
      best.order = std::move(order);
    }
  }
  best.graph = best.order.empty() ? std::move(g) : reordered(g, best.order);
  return best;
}

}  // namespace sator::schedule
