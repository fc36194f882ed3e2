#include "schedule/inductor_orders.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>

namespace sator::schedule {

Order least_peak_first(const Graph& g, const ScheduleContext& c) {
  const StorageUse& u = c.use;
  const std::vector<double>& key = c.key;
  const size_t n = g.nodes.size();
  std::vector<size_t> unread(u.st.bytes.size());
  // Bytes each node frees when it runs: the storages it is the last
  // unrun reader of, and those it allocates that nothing reads.
  std::vector<double> frees(n, 0.0);
  for (size_t s = 0; s < unread.size(); ++s) {
    unread[s] = u.readers_of[s].size();
    if (u.pinned[s]) continue;
    if (unread[s] == 0) frees[u.st.owner[s]] += u.st.bytes[s];
    else if (unread[s] == 1) frees[u.readers_of[s][0]] += u.st.bytes[s];
  }
  std::vector<char> has_run(n, 0);
  std::vector<NodeId> ready;
  double live = 0, peak = 0;
  return list_schedule(
      g, c, [&](NodeId i) { ready.push_back(i); },
      [&] {
        // A scan: the ready set is small next to the graph, and each
        // choice depends on the live bytes, which change every step.
        size_t best = 0;
        auto rank = [&](NodeId i) {
          return std::make_tuple(std::max(live + u.allocates[i], peak), u.allocates[i] - frees[i], key[i], i);
        };
        for (size_t k = 1; k < ready.size(); ++k)
          if (rank(ready[k]) < rank(ready[best])) best = k;
        const NodeId i = ready[best];
        ready[best] = ready.back();
        ready.pop_back();
        return i;
      },
      [&](NodeId i) {
        has_run[i] = 1;
        live += u.allocates[i];
        peak = std::max(peak, live);
        live -= frees[i];
        for (int64_t s : u.reads[i]) {
          const size_t si = static_cast<size_t>(s);
          if (--unread[si] != 1 || u.pinned[si]) continue;
          for (NodeId r : u.readers_of[si])
            if (!has_run[r]) frees[r] += u.st.bytes[si];
        }
      });
}

Order earliest_operands_first(const Graph& g, const ScheduleContext& c) {
  const size_t n = g.nodes.size();
  const std::vector<std::vector<NodeId>>& deps = c.deps;
  const std::vector<double>& key = c.key;
  std::vector<int64_t> position(n, -1);  // in the schedule; placeholders stay -1 (not counted)
  int64_t ran = 0;
  using Entry = std::tuple<std::vector<int64_t>, double, NodeId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  return list_schedule(
      g, c,
      [&](NodeId i) {
        std::vector<int64_t> when;
        for (NodeId d : deps[i])
          if (position[d] >= 0) when.push_back(position[d]);
        std::sort(when.begin(), when.end());
        queue.emplace(std::move(when), key[i], i);
      },
      [&] {
        const NodeId i = std::get<2>(queue.top());
        queue.pop();
        return i;
      },
      [&](NodeId i) {
        if (g.nodes[i].op != "placeholder") position[i] = ran++;
      });
}

Order depth_first(const Graph& g, const ScheduleContext& c) {
  const size_t n = g.nodes.size();
  const StorageUse& u = c.use;
  const std::vector<double>& key = c.key;
  const std::vector<std::vector<NodeId>>& deps = c.deps;
  std::vector<double> size(n, 0.0);
  for (NodeId i = 0; i < n; ++i) {
    size[i] = u.allocates[i];
    for (int64_t s : u.reads[i])
      if (!u.pinned[static_cast<size_t>(s)]) size[i] += u.st.bytes[static_cast<size_t>(s)];
  }
  const auto before = [&](NodeId a, NodeId b) { return std::tie(size[a], key[a], a) < std::tie(size[b], key[b], b); };
  Order order;
  order.reserve(n);
  std::vector<char> seen(n, 0);
  NodeId output = static_cast<NodeId>(n);
  std::vector<NodeId> visit_order;
  for (NodeId i = 0; i < n; ++i) {
    if (g.nodes[i].op == "placeholder") {
      order.push_back(i);
      seen[i] = 1;
    } else if (g.nodes[i].op == "output") {
      output = i;
      seen[i] = 1;
    } else {
      visit_order.push_back(i);
    }
  }
  std::sort(visit_order.begin(), visit_order.end(), before);
  // An explicit stack (a chain can be thousands of nodes deep): each frame
  // is a node and its operands in visiting order, with how many are done.
  struct Frame {
    NodeId node;
    std::vector<NodeId> operands;
    size_t next = 0;
  };
  std::vector<Frame> stack;
  auto push = [&](NodeId i) {
    seen[i] = 1;
    Frame f{i, {}, 0};
    for (NodeId d : deps[i])
      if (!seen[d]) f.operands.push_back(d);
    std::sort(f.operands.begin(), f.operands.end(), before);
    stack.push_back(std::move(f));
  };
  for (NodeId root : visit_order) {
    if (seen[root]) continue;
    push(root);
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next < top.operands.size()) {
        const NodeId d = top.operands[top.next++];
        if (!seen[d]) push(d);
        continue;
      }
      order.push_back(top.node);
      stack.pop_back();
    }
  }
  if (output < n) order.push_back(output);
  return order;
}

}  // namespace sator::schedule
