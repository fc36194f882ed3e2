#include "schedule/list_schedule.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "ir/op_table.h"

namespace sator::schedule {

namespace {

bool draws_random(const Node& n) {
  const OpInfo* op = find_op(n.op);
  return op && op->cls == OpClass::Random;
}

}  // namespace

std::vector<std::vector<NodeId>> operands_of(const Graph& g) {
  std::vector<std::vector<NodeId>> ops(g.nodes.size());
  // Each operand once: `last_reader[r]` is the last node that listed r (a
  // search of the list was quadratic in the output node's thousands).
  std::vector<NodeId> last_reader(g.nodes.size(), static_cast<NodeId>(g.nodes.size()));
  for (NodeId i = 0; i < g.nodes.size(); ++i) {
    auto add = [&](NodeId r) {
      if (last_reader[r] != i) {
        last_reader[r] = i;
        ops[i].push_back(r);
      }
    };
    for (const Value& v : g.nodes[i].args) v.for_each_node(add);
    for (const auto& kv : g.nodes[i].kwargs) kv.second.for_each_node(add);
  }
  return ops;
}

namespace {

std::vector<std::vector<NodeId>> dependences_from(const Graph& g, std::vector<std::vector<NodeId>> deps,
                                                  const std::vector<double>& key) {
  std::vector<NodeId> draws;
  for (NodeId i = 0; i < g.nodes.size(); ++i)
    if (draws_random(g.nodes[i])) draws.push_back(i);
  std::stable_sort(draws.begin(), draws.end(), [&](NodeId a, NodeId b) { return key[a] < key[b]; });
  for (size_t k = 1; k < draws.size(); ++k) deps[draws[k]].push_back(draws[k - 1]);
  return deps;
}

StorageUse storage_use_from(const Graph& g, const std::vector<std::vector<NodeId>>& ops,
                            std::optional<memory::Storages> storages) {
  StorageUse u;
  u.st = storages ? std::move(*storages) : memory::storages_of(g);
  const size_t n = g.nodes.size(), s_count = u.st.bytes.size();
  u.reads.assign(n, {});
  u.readers_of.assign(s_count, {});
  u.pinned.assign(s_count, false);
  u.allocates.assign(n, 0.0);
  std::vector<NodeId> last_reader(s_count, static_cast<NodeId>(n));  // each storage once per reader
  for (NodeId i = 0; i < n; ++i) {
    for (NodeId o : ops[i])
      for (int64_t s : u.st.refers[o])
        if (s >= 0 && last_reader[static_cast<size_t>(s)] != i) {
          last_reader[static_cast<size_t>(s)] = i;
          u.reads[i].push_back(s);
        }
    for (int64_t s : u.reads[i]) {
      u.readers_of[static_cast<size_t>(s)].push_back(i);
      if (g.nodes[i].op == "output") u.pinned[static_cast<size_t>(s)] = true;
    }
  }
  for (size_t s = 0; s < s_count; ++s) {
    u.pinned[s] = u.pinned[s] || g.nodes[u.st.owner[s]].op == "placeholder";
    u.allocates[u.st.owner[s]] += u.st.bytes[s];
  }
  return u;
}

}  // namespace

namespace {

// Each storage's life in one order, and where its peak falls: what live_at_peak reads.
struct OrderLiveness {
  std::vector<size_t> pos;         // by node: its place in the order
  std::vector<size_t> last_use;    // by storage: the place of its last reader (or its owner)
  std::vector<double> delta_at;    // by place: bytes allocated there
  std::vector<double> freed_after; // by place: bytes freed once it has run (pinned storages never)
  double peak = 0, peak_transient = 0;
  size_t peak_at = 0;              // the first place of the greatest peak, as the estimate finds it
};

OrderLiveness liveness(const StorageUse& u, const Order& order) {
  const size_t n = order.size(), s_count = u.st.bytes.size();
  OrderLiveness l;
  l.pos.resize(u.reads.size());
  for (size_t k = 0; k < n; ++k) l.pos[order[k]] = k;
  l.last_use.resize(s_count);
  l.delta_at.assign(n, 0.0);
  l.freed_after.assign(n, 0.0);
  for (size_t s = 0; s < s_count; ++s) {
    const size_t made = l.pos[u.st.owner[s]];
    l.last_use[s] = made;
    for (NodeId r : u.readers_of[s]) l.last_use[s] = std::max(l.last_use[s], l.pos[r]);
    l.delta_at[made] += u.st.bytes[s];
    if (!u.pinned[s]) l.freed_after[l.last_use[s]] += u.st.bytes[s];
  }
  double now = 0;
  for (size_t k = 0; k < n; ++k) {
    now += l.delta_at[k];
    const double transient = u.st.transient[order[k]];
    if (now + transient > l.peak) l.peak = now + transient, l.peak_at = k, l.peak_transient = transient;
    now -= l.freed_after[k];
  }
  return l;
}

}  // namespace

PeakWatch::PeakWatch(const StorageUse& u, double bound)
    : u_(u), bound_(bound), unread_(u.st.bytes.size()), read_by_none_(u.reads.size(), 0.0) {
  for (size_t s = 0; s < unread_.size(); ++s) {
    unread_[s] = u.readers_of[s].size();
    if (unread_[s] == 0 && !u.pinned[s]) read_by_none_[u.st.owner[s]] += u.st.bytes[s];
  }
}

// As liveness() walks a finished order: what node i allocates is live from
// its place, with its transient bytes there; then each storage whose last
// reader it is (or that nothing reads) is freed, unless pinned.
bool PeakWatch::place(NodeId i) {
  live_ += u_.allocates[i];
  peak_ = std::max(peak_, live_ + u_.st.transient[i]);
  live_ -= read_by_none_[i];
  for (int64_t s : u_.reads[i]) {
    const size_t si = static_cast<size_t>(s);
    if (--unread_[si] == 0 && !u_.pinned[si]) live_ -= u_.st.bytes[si];
  }
  gave_up_ = peak_ > bound_;
  return !gave_up_;
}

// The running peak of one walk (PeakWatch) is the figure: a watched order
// that finishes has it already, and nothing prices an order a second way.
double peak_bytes_in_order(const StorageUse& u, const Order& order) {
  PeakWatch watch(u, std::numeric_limits<double>::infinity());
  for (NodeId i : order) watch.place(i);
  return watch.peak();
}

std::vector<memory::LiveTensor> live_at_peak(const StorageUse& u, const Order& order) {
  const OrderLiveness l = liveness(u, order);
  std::vector<memory::LiveTensor> live;
  if (l.peak <= 0) return live;
  // Listed in the written graph's storage order (by owner's place, a
  // node's results in slot order) before the sort, as the estimate lists
  // them: equal sizes then come out as the estimate's do.
  std::vector<size_t> made;
  for (size_t s = 0; s < u.st.bytes.size(); ++s)
    if (l.pos[u.st.owner[s]] <= l.peak_at && (u.pinned[s] || l.last_use[s] >= l.peak_at)) made.push_back(s);
  std::stable_sort(made.begin(), made.end(),
                   [&](size_t a, size_t b) { return l.pos[u.st.owner[a]] < l.pos[u.st.owner[b]]; });
  for (size_t s : made) live.push_back({static_cast<NodeId>(l.pos[u.st.owner[s]]), u.st.bytes[s]});
  if (l.peak_transient > 0) live.push_back({static_cast<NodeId>(l.peak_at), l.peak_transient});
  std::sort(live.begin(), live.end(),
            [](const memory::LiveTensor& a, const memory::LiveTensor& b) { return a.bytes > b.bytes; });
  return live;
}

std::vector<std::vector<NodeId>> dependences_of(const Graph& g, const std::vector<double>& key) {
  return dependences_from(g, operands_of(g), key);
}

StorageUse storage_use(const Graph& g) { return storage_use_from(g, operands_of(g), std::nullopt); }

ScheduleContext schedule_context(const Graph& g, std::vector<double> key) {
  return schedule_context(g, operands_of(g), std::move(key));
}

ScheduleContext schedule_context(const Graph& g, const std::vector<std::vector<NodeId>>& operands,
                                 std::vector<double> key, std::optional<memory::Storages> storages) {
  ScheduleContext c;
  c.use = storage_use_from(g, operands, std::move(storages));
  c.deps = dependences_from(g, operands, key);
  c.users.resize(g.nodes.size());
  for (NodeId i = 0; i < g.nodes.size(); ++i)
    for (NodeId d : c.deps[i]) c.users[d].push_back(i);
  c.key = std::move(key);
  return c;
}

}  // namespace sator::schedule
