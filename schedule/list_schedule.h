// What every schedule in schedule/ is built from: a graph's dependences
// (operands, and the order of random draws), the storages each node reads
// and allocates, and a list scheduler that a strategy steers by choosing
// the next ready node.
#pragma once

#include <optional>
#include <stdexcept>
#include <vector>

#include "memory/peak_memory.h"
#include "ir/graph.h"

namespace sator::schedule {

using Order = std::vector<NodeId>;  // every node of a graph, each once, operands first

// Each node's operands (node references in its args and kwargs), each once.
std::vector<std::vector<NodeId>> operands_of(const Graph& g);

// What must run before each node: its operands and, for a random draw, the
// draw before it (draws consume one generator's stream: reordered, each
// would draw other numbers than the input's). Draws go in the order of
// their keys (the input's order), ties in g's.
std::vector<std::vector<NodeId>> dependences_of(const Graph& g, const std::vector<double>& key);

// The storages (memory/peak_memory.h) each node reads and allocates, as a
// scheduler tracks them: a storage is freed when its last reader has run,
// unless an input owns it or the output returns it (pinned).
struct StorageUse {
  memory::Storages st;
  std::vector<std::vector<int64_t>> reads;       // by node: storages read, each once
  std::vector<std::vector<NodeId>> readers_of;   // by storage
  std::vector<bool> pinned;                      // by storage
  std::vector<double> allocates;                 // by node: bytes of the storages it owns
};
StorageUse storage_use(const Graph& g);
// The estimated peak (memory::peak_bytes_in_order's figure) of running the
// nodes in `order`, from what they read and allocate: each candidate order
// of one graph costs a pass over its storages and reads, not a walk of
// every node's values again.
double peak_bytes_in_order(const StorageUse& u, const Order& order);
// What is live at that peak (memory::estimate_peak_memory's at_peak of the
// graph written in `order`: its nodes numbered by their place in `order`,
// the same list in the same order), from the same pass.
std::vector<memory::LiveTensor> live_at_peak(const StorageUse& u, const Order& order);

// A candidate order's peak so far, kept as its nodes are placed, against a
// bound (a finished order's peak): once the peak so far passes the bound
// the candidate cannot win, and its making is given up. The figures are
// peak_bytes_in_order's (whole bytes: the sums are exact in any order), so
// a candidate that would tie the bound is never given up.
class PeakWatch {
 public:
  PeakWatch(const StorageUse& u, double bound);
  // Node i is placed next (every node, placeholders first); false once the
  // peak so far exceeds the bound.
  bool place(NodeId i);
  bool gave_up() const { return gave_up_; }
  double peak() const { return peak_; }

 private:
  const StorageUse& u_;
  double bound_;
  std::vector<size_t> unread_;         // by storage: its readers not yet placed
  std::vector<double> read_by_none_;   // by node: bytes it owns that nothing reads (freed once it has run)
  double live_ = 0, peak_ = 0;
  bool gave_up_ = false;
};

// What the schedules of one graph share, computed once: the keys (the
// input's order: keys_from_positions, memory_schedule.h), the dependences
// and the storages.
struct ScheduleContext {
  std::vector<double> key;
  std::vector<std::vector<NodeId>> deps;   // dependences_of(g, key)
  std::vector<std::vector<NodeId>> users;  // by node: the nodes that depend on it (deps inverted)
  StorageUse use;
};
ScheduleContext schedule_context(const Graph& g, std::vector<double> key);
// The same, with g's operands (operands_of) computed by the caller, and its
// storages (memory::storages_of) where given.
ScheduleContext schedule_context(const Graph& g, const std::vector<std::vector<NodeId>>& operands,
                                 std::vector<double> key, std::optional<memory::Storages> storages = std::nullopt);

// A list scheduler over g's dependence graph: each node whose dependences
// have run is handed to `ready(i)`; `next()` names the node to run (one it
// was handed and has not named before); `ran(i)` is told each node run,
// placeholders first. Placeholders keep their places at the front (they are
// held throughout), the output node comes last. With a `watch`: an empty
// order where the watch gave it up.
template <class Ready, class Next, class Ran>
Order list_schedule(const Graph& g, const ScheduleContext& c, Ready ready, Next next, Ran ran,
                    PeakWatch* watch = nullptr) {
  const size_t n = g.nodes.size();
  const std::vector<std::vector<NodeId>>& users = c.users;
  std::vector<size_t> waiting(n, 0);
  for (NodeId i = 0; i < n; ++i) waiting[i] = c.deps[i].size();
  Order order;
  order.reserve(n);
  NodeId output = static_cast<NodeId>(n);
  for (NodeId i = 0; i < n; ++i) {
    if (g.nodes[i].op == "placeholder") {
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
    if (watch && !watch->place(i)) return {};
    ran(i);
    release(i);
  }
  for (size_t done = 0; done < handed; ++done) {
    const NodeId i = next();
    if (watch && !watch->place(i)) return {};
    order.push_back(i);
    ran(i);
    release(i);
  }
  if (output < n) {
    if (watch && !watch->place(output)) return {};
    order.push_back(output);
  }
  if (order.size() != n) throw std::logic_error("schedule: the graph has a cycle");
  return order;
}

}  // namespace sator::schedule
