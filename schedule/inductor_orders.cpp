#include "schedule/inductor_orders.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>
#include <utility>

namespace sator::schedule {

namespace {

// The ready nodes of least_peak_first, ranked as it ranks them, in
// O(log n) a step: a scan of the ready set each step was quadratic where
// many chains are ready at once (60 copies of a model: 100 ms of a write).
//
// A node's rank is (max(live + a, peak), a - f, key, i) for a the bytes it
// allocates and f those its run frees. Where some ready node has
// a <= peak - live, every such node's first term is the peak and the least
// (a - f, key, i) among them wins; otherwise the first term is live + a
// and the least a wins, then (a - f, key, i). (The bytes are whole numbers
// well under 2^53, so the sums are exact and the two readings agree.) A
// segment tree over the nodes sorted by a holds each ready node's
// (a - f, key, i) and answers both: the least over a prefix, and the first
// ready node in a's order.
class ReadyByPeak {
 public:
  ReadyByPeak(const std::vector<double>& allocates, const std::vector<double>& key)
      : allocates_(allocates), key_(key), by_bytes_(allocates.size()), slot_(allocates.size()) {
    for (size_t k = 0; k < by_bytes_.size(); ++k) by_bytes_[k] = static_cast<NodeId>(k);
    std::stable_sort(by_bytes_.begin(), by_bytes_.end(),
                     [&](NodeId x, NodeId y) { return allocates_[x] < allocates_[y]; });
    for (size_t k = 0; k < by_bytes_.size(); ++k) slot_[by_bytes_[k]] = k;
    while (size_ < by_bytes_.size()) size_ *= 2;
    tree_.assign(2 * size_, kEmpty);
  }

  // Node i is ready (or its frees changed) with after = a - f.
  void set(NodeId i, double after) { put(slot_[i], {after, key_[i], i}); }
  void remove(NodeId i) { put(slot_[i], kEmpty); }

  // The ready node of least rank, with `room` = peak - live.
  NodeId least(double room) const {
    // The nodes allocating at most `room`: a prefix of the sorted order.
    const size_t fit = static_cast<size_t>(
        std::upper_bound(by_bytes_.begin(), by_bytes_.end(), room,
                         [&](double r, NodeId x) { return r < allocates_[x]; }) -
        by_bytes_.begin());
    const Entry within = least_in(0, fit);
    if (within.node != kNone) return within.node;
    // None fits: the least a, then the least (a - f, key, i) among nodes
    // allocating exactly that.
    const size_t first = first_ready();
    const double a = allocates_[by_bytes_[first]];
    const size_t end = static_cast<size_t>(
        std::upper_bound(by_bytes_.begin() + static_cast<std::ptrdiff_t>(first), by_bytes_.end(), a,
                         [&](double r, NodeId x) { return r < allocates_[x]; }) -
        by_bytes_.begin());
    return least_in(first, end).node;
  }

 private:
  static constexpr NodeId kNone = ~NodeId{0};
  struct Entry {
    double after, key;
    NodeId node;
    bool operator<(const Entry& o) const { return std::tie(after, key, node) < std::tie(o.after, o.key, o.node); }
  };
  static constexpr Entry kEmpty{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                                kNone};

  void put(size_t leaf, const Entry& e) {
    size_t k = leaf + size_;
    tree_[k] = e;
    for (k /= 2; k; k /= 2) tree_[k] = std::min(tree_[2 * k], tree_[2 * k + 1]);
  }
  // The least entry over sorted positions [lo, hi).
  Entry least_in(size_t lo, size_t hi) const {
    Entry best = kEmpty;
    for (lo += size_, hi += size_; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) best = std::min(best, tree_[lo++]);
      if (hi & 1) best = std::min(best, tree_[--hi]);
    }
    return best;
  }
  // The first sorted position holding a ready node (one exists).
  size_t first_ready() const {
    size_t k = 1;
    while (k < size_) k = tree_[2 * k].node != kNone ? 2 * k : 2 * k + 1;
    return k - size_;
  }

  const std::vector<double>& allocates_;
  const std::vector<double>& key_;
  std::vector<NodeId> by_bytes_;  // nodes by the bytes they allocate, least first
  std::vector<size_t> slot_;      // by node: its place in by_bytes_
  size_t size_ = 1;
  std::vector<Entry> tree_;  // the least entry of each subtree; leaves at size_..
};

}  // namespace

Order least_peak_first(const Graph& g, const ScheduleContext& c, PeakWatch* watch) {
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
  std::vector<char> has_run(n, 0), is_ready(n, 0);
  ReadyByPeak ready(u.allocates, key);
  double live = 0, peak = 0;
  return list_schedule(
      g, c,
      [&](NodeId i) {
        is_ready[i] = 1;
        ready.set(i, u.allocates[i] - frees[i]);
      },
      [&] {
        const NodeId i = ready.least(peak - live);
        ready.remove(i);
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
            if (!has_run[r]) {
              frees[r] += u.st.bytes[si];
              if (is_ready[r]) ready.set(r, u.allocates[r] - frees[r]);
            }
        }
      },
      watch);
}

Order earliest_operands_first(const Graph& g, const ScheduleContext& c, PeakWatch* watch) {
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
      },
      watch);
}

Order depth_first(const Graph& g, const ScheduleContext& c, PeakWatch* watch) {
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
      if (watch && !watch->place(i)) return {};
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
      if (watch && !watch->place(top.node)) return {};
      order.push_back(top.node);
      stack.pop_back();
    }
  }
  if (output < n) {
    if (watch && !watch->place(output)) return {};
    order.push_back(output);
  }
  return order;
}

}  // namespace sator::schedule
