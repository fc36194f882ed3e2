#include "schedule/memory_schedule.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <limits>
#include <optional>
#include <queue>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "memory/peak_memory.h"
#include "schedule/inductor_orders.h"
#include "schedule/list_schedule.h"

namespace sator::schedule {

namespace {

void renumber(Value& v, const std::vector<NodeId>& new_id) {
  if (v.kind == Value::Kind::Node) v.node = new_id[v.node];
  for (Value& x : v.list) renumber(x, new_id);
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

}  // namespace

Graph reordered(Graph g, const Order& order) {
  std::vector<NodeId> new_id(g.nodes.size());
  for (size_t k = 0; k < order.size(); ++k) new_id[order[k]] = static_cast<NodeId>(k);
  // The nodes move into their new places in place, a cycle of the
  // permutation at a time: a second vector of nodes was the order search's
  // largest allocation (65 MB at 145,000 nodes), and a copy of each node 4%
  // of a training graph's whole run.
  std::vector<char> placed(order.size(), 0);
  for (size_t k = 0; k < order.size(); ++k) {
    if (placed[k]) continue;
    Node first = std::move(g.nodes[k]);
    for (size_t at = k;;) {
      placed[at] = 1;
      const size_t from = order[at];
      if (from == k) {
        g.nodes[at] = std::move(first);
        break;
      }
      g.nodes[at] = std::move(g.nodes[from]);
      at = from;
    }
  }
  for (Node& node : g.nodes) {
    for (Value& v : node.args) renumber(v, new_id);
    for (auto& kv : node.kwargs) renumber(kv.second, new_id);
  }
  return g;
}

Order by_keys(const Graph& g, const ScheduleContext& c, PeakWatch* watch) {
  KeyQueue queue(c.key);
  return list_schedule(
      g, c, [&](NodeId i) { queue.push(i); },
      [&] {
        const NodeId i = queue.top();
        queue.pop();
        return i;
      },
      [](NodeId) {}, watch);
}

std::vector<double> keys_from_positions(const Graph& g, const std::vector<int64_t>& position) {
  return keys_from_positions(operands_of(g), position);
}

std::vector<double> keys_from_positions(const std::vector<std::vector<NodeId>>& ops,
                                        const std::vector<int64_t>& position) {
  const size_t n = ops.size();
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

Order greedy_memory(const Graph& g, const ScheduleContext& c, PeakWatch* watch) {
  const StorageUse& u = c.use;
  const std::vector<double>& key = c.key;
  const size_t n = g.nodes.size();
  std::vector<size_t> readers(u.st.bytes.size(), 0);
  for (size_t s = 0; s < readers.size(); ++s) readers[s] = u.readers_of[s].size();
  const auto gain = [&](NodeId i) {
    double freed = 0;
    for (int64_t s : u.reads[i])
      if (!u.pinned[static_cast<size_t>(s)] && readers[static_cast<size_t>(s)] == 1) freed += u.st.bytes[static_cast<size_t>(s)];
    return freed - u.allocates[i];
  };
  // Two queues of ready nodes by key: all of them, and those that free at
  // least what they allocate. A node's gain only grows (its inputs' other
  // readers run), so once freeing it stays so; run nodes are skipped lazily.
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
      g, c,
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
        for (int64_t s : u.reads[i])
          if (--readers[static_cast<size_t>(s)] == 1)
            for (NodeId r : u.readers_of[static_cast<size_t>(s)])
              if (!has_run[r]) offer(r);
      },
      watch);
}

size_t order_threads() {
  static const size_t threads = [] {
    if (const char* env = std::getenv("SATOR_THREADS")) {
      char* end = nullptr;
      const unsigned long n = std::strtoul(env, &end, 10);
      if (end != env && *end == '\0' && n >= 1) return static_cast<size_t>(std::min<unsigned long>(n, 64));
    }
    return static_cast<size_t>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return threads;
}

Scheduled schedule_for_memory(Graph g, const std::vector<int64_t>& position, const std::function<bool()>& out_of_time,
                              double live_above, std::optional<memory::Storages> storages) {
  Scheduled best;
  const std::vector<std::vector<NodeId>> operands = operands_of(g);
  const ScheduleContext c = schedule_context(g, operands, keys_from_positions(operands, position), std::move(storages));
  // The writer's own order is always priced, first (past the limit it is
  // the order that stands, and the others are watched against its peak).
  const auto as_written = [&] {
    Order o(g.nodes.size());
    for (size_t k = 0; k < o.size(); ++k) o[k] = static_cast<NodeId>(k);
    return o;
  };
  // The candidate orders, each made and priced independently of the others
  // (read-only over g and c). On a large graph they run side by side: each
  // thread takes the next candidate not yet begun, in this list's order, so
  // that no thread idles while another works through a batch's slower one
  // (batches of two left one core idle for the last candidate and for the
  // slower of each pair). A candidate is begun only while time is left. The
  // choice below reads them in this list's order whatever finished first,
  // so the result is the sequential one.
  //
  // The writer's order is priced first (a pass over the storages), and the
  // others are made watched against its peak (PeakWatch): one whose peak so
  // far passes it cannot win and is given up. A fixed bound rather than the
  // least peak finished so far, so that which orders are given up, and
  // where, does not depend on which thread finished first: the report says
  // the same on every run. Inductor's three interleave a graph's
  // independent parts: on 60 copies of a training graph their peaks were up
  // to 13 times the best, and making them was half the search.
  const std::vector<std::pair<std::string, std::function<Order(PeakWatch*)>>> candidates = {
      {"as written", [&](PeakWatch*) { return as_written(); }},
      {"input order", [&](PeakWatch* w) { return by_keys(g, c, w); }},
      {"frees first", [&](PeakWatch* w) { return greedy_memory(g, c, w); }},
      // Inductor's three (torch/_inductor/memory.py), on sator's estimate.
      {"least peak first", [&](PeakWatch* w) { return least_peak_first(g, c, w); }},
      {"earliest operands first", [&](PeakWatch* w) { return earliest_operands_first(g, c, w); }},
      {"depth first", [&](PeakWatch* w) { return depth_first(g, c, w); }},
  };
  const size_t n = candidates.size();
  std::vector<Order> orders(n);
  std::vector<double> peaks(n);
  std::vector<char> begun(n, 0), given_up(n, 0);
  orders[0] = candidates[0].second(nullptr);
  peaks[0] = peak_bytes_in_order(c.use, orders[0]);
  begun[0] = 1;
  // An exception in a thread (out of memory) is carried to this one and
  // rethrown, as the sequential search would have thrown it.
  std::vector<std::exception_ptr> failed(n);
  std::atomic<size_t> next{1};
  const auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < n;) {
      if (out_of_time && out_of_time()) return;
      begun[k] = 1;
      try {
        PeakWatch watch(c.use, peaks[0]);
        orders[k] = candidates[k].second(&watch);
        // Made in full, its peak is the watch's (peak_bytes_in_order's
        // figure); given up, the peak when it was.
        given_up[k] = watch.gave_up();
        peaks[k] = watch.peak();
      } catch (...) {
        failed[k] = std::current_exception();
      }
    }
  };
  const size_t threads = g.nodes.size() >= kParallelOrdersNodes ? std::min(order_threads(), n) : 1;
  std::vector<std::thread> running;
  for (size_t t = 1; t < threads; ++t) {
    try {
      running.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no thread to be had (an address-space limit: batch --graph-memory): fewer take the candidates
    }
  }
  work();
  for (std::thread& t : running) t.join();
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
  for (size_t k = 0; k < n; ++k) {
    if (!begun[k]) {
      best.cut = true;
      continue;
    }
    const std::string& name = candidates[k].first;
    const double peak = peaks[k];
    if (given_up[k]) {
      best.given_up.emplace_back(name, peak);
      continue;
    }
    best.tried.emplace_back(name, peak);
    // The input's order wins a tie with the writer's: the estimate prices
    // tensors Inductor fuses away, so its peak may sit where the step's
    // does not, and orders it cannot tell apart differ on the GPU. The
    // writer's order (outputs first, depth first) put every weight
    // gradient of a model after the whole backward, holding each layer's
    // activations to the end: gemma's bf16 training step +1.15 GB,
    // measured (issue 38, python/gpu/memory_at_peak.py); the input's
    // computes each where PyTorch did.
    if (k == 0 || peak < best.peak_bytes || (name == "input order" && peak <= best.peak_bytes)) {
      best.peak_bytes = peak;
      best.strategy = name;
      if (k > 0) best.order = std::move(orders[k]);
    }
  }
  if (best.peak_bytes > live_above) best.at_peak = live_at_peak(c.use, best.order.empty() ? as_written() : best.order);
  best.graph = best.order.empty() ? std::move(g) : reordered(std::move(g), best.order);
  return best;
}

}  // namespace sator::schedule
