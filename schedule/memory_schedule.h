// The order sator writes a graph in, chosen for its estimated peak memory.
// The e-graph writer emits nodes in a post-order walk from the outputs; in a
// joint graph that walk starts a gradient's chain deep in the forward and
// keeps forward tensors alive across it, which raised the estimated peak of
// 53 of the 178 corpus graphs with no new tensor at all. The schedules here
// are topological orders of the same nodes; the one with the least
// estimated peak (memory/peak_memory.h) is kept.
#pragma once

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "schedule/list_schedule.h"

namespace sator::schedule {

// g with its nodes in `order` (a topological order of all of g's nodes).
Graph reordered(Graph g, const Order& order);

// A list schedule: among the nodes whose operands have run, the one of
// least key first (ties: the earlier in g). Placeholders keep their places
// at the front, the output node comes last.
Order by_keys(const Graph& g, const ScheduleContext& c, PeakWatch* watch = nullptr);

// Keys that follow another graph's order: a node copied from it takes its
// position there (`position`, -1 for a node it does not have); a new node
// takes the least key of its users, so it runs just before the first of
// them needs it.
std::vector<double> keys_from_positions(const Graph& g, const std::vector<int64_t>& position);
// The same from g's operands (operands_of, list_schedule.h).
std::vector<double> keys_from_positions(const std::vector<std::vector<NodeId>>& operands,
                                        const std::vector<int64_t>& position);

// (Each candidate order below takes a PeakWatch, list_schedule.h: with one,
// it is given up, an empty order, once its peak so far passes the watch's
// bound.)

// A greedy list schedule for memory: the ready node of least key among
// those that free at least as many bytes as they allocate (a pointwise op
// consuming the last use of its input, a reduction), else the ready node of
// least key: the input's order, with frees pulled ahead.
Order greedy_memory(const Graph& g, const ScheduleContext& c, PeakWatch* watch = nullptr);

// Candidate orders are made side by side from this many nodes (below it
// they take milliseconds, less than starting threads is worth).
constexpr size_t kParallelOrdersNodes = 20000;
// Threads for the candidate orders: $SATOR_THREADS (1-64), else the
// machine's hardware threads.
size_t order_threads();

struct Scheduled {
  Graph graph;
  std::string strategy;  // which order won: "as written", "input order", "frees first", or one of inductor_orders.h's
  Order order;           // the chosen order of the given graph's nodes (empty: as written)
  double peak_bytes = 0;
  std::vector<std::pair<std::string, double>> tried;  // each strategy made, and its estimated peak
  // Each strategy given up (PeakWatch), and its peak when given up: a lower
  // bound on its peak, above the least of those tried.
  std::vector<std::pair<std::string, double>> given_up;
  bool cut = false;  // the time limit stopped the search before every order was tried
  // What is live at the chosen order's peak (memory::estimate_peak_memory's
  // at_peak of `graph`), where its peak exceeds the `live_above` asked for;
  // else empty.
  std::vector<memory::LiveTensor> at_peak;
};

// The order of least estimated peak among the writer's own, the input's
// (through `position`, as keys_from_positions reads it), the greedy one and
// Inductor's three (inductor_orders.h); ties keep the earlier in that list,
// except that the input's order wins a tie with the writer's. A candidate
// whose peak so far passes a finished one's is given up (it cannot win).
// `out_of_time` (when given) is asked before each candidate after the
// writer's own: once it says so the rest are not tried (Scheduled::cut).
// On a graph of kParallelOrdersNodes nodes or more the candidates run on
// order_threads() threads, each taking the next candidate not yet begun; the
// choice is the same as one at a time.
// `live_above`: where the chosen order's peak exceeds it, Scheduled::at_peak
// lists what is live there (read from the search's own storages rather
// than estimated again over the written graph).
// `storages`: g's (memory::storages_of), where the caller has them.
Scheduled schedule_for_memory(Graph g, const std::vector<int64_t>& position,
                              const std::function<bool()>& out_of_time = {},
                              double live_above = std::numeric_limits<double>::infinity(),
                              std::optional<memory::Storages> storages = std::nullopt);

}  // namespace sator::schedule
