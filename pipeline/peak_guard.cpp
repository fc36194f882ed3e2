#include "pipeline/peak_guard.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "memory/peak_memory.h"
#include "memory/saved_memory.h"
#include "pipeline/biased_kernels.h"
#include "pipeline/rule_selection.h"
#include "pipeline/extract_step.h"
#include "pipeline/side_work.h"
#include "schedule/memory_schedule.h"
#include "schedule/output_copies.h"
#include "schedule/saved_copies.h"

namespace sator::pipeline {

namespace {

// A rise in the estimate below this is not one: the CUDA caching allocator
// serves tensors under 1 MiB from shared 2 MiB blocks, so the estimate's
// sub-MiB differences (a few small masks saved in another order) are below
// what the device's peak resolves.
constexpr double kSlackBytes = 1024.0 * 1024.0;
// Rounds of recomputing what is live at the peak before recomputing all.
constexpr int kRecomputeRounds = 4;
// A value smaller than this is not recomputed where the rounds pick what
// to recompute: it saves less than a kernel launch costs (a 0-d
// scalar_tensor a mask's where reads), and which small values are live at
// the peak depends on the order that found it.
constexpr double kRecomputeMinBytes = 64.0 * 1024.0;
// Regions tried before the guard keeps the input: each costs an extraction.
constexpr size_t kMaxTrials = 32;

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
  return buf;
}

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}
double ms_since(Clock::time_point a) { return ms_between(a, Clock::now()); }

struct Written {
  Graph graph;
  std::vector<eg::Id> enode_of;
  std::string schedule;
  std::vector<std::pair<std::string, double>> tried, given_up;
  double peak = 0;
  bool schedule_cut = false;  // the time limit stopped the order search
  bool saved_copies = false;  // copies of saved views were written (schedule/saved_copies.h)
  bool released = false;      // the graph was given back (release); the figures stay
  // What is live at its peak, where that exceeds the limit the writer was
  // given (the order search's own figures: no second estimate of the form).
  std::vector<memory::LiveTensor> at_peak;
};

// Forms are held one at a time: before the next form is written, the ones
// written so far give their graphs back (what the guard reads of them, their
// peak and what is live there, was read), and the best one, where a later
// form did not beat it, is written again from its extraction at the end
// (restore: writing is deterministic). Two 145,000-node forms side by side
// were the run's peak at 60 copies (710 MB).
void release(Written& w) {
  if (w.released) return;
  w.graph = Graph();
  w.enode_of = std::vector<eg::Id>();
  w.released = true;
}

// Whether the run's time limit has passed: the guard's optional searches
// (more orders, more recomputation rounds) stop there.
using OutOfTime = std::function<bool()>;

// One extraction (pipeline/biased_kernels.h's Extracted), with what the
// report says of it: extract_cheapest writes it into the result; the guard
// keeps the chosen one's.
Extracted extract(const TensorEGraph& t, const Graph& input, const OptimizeOptions& options, double seconds_left,
                  OptimizeResult& r, const std::unordered_set<eg::Id>& priced_out) {
  Extracted e;
  const auto begun = std::chrono::steady_clock::now();
  e.x = extract_cheapest(t, input, options, seconds_left, r, priced_out);
  r.extract_parts.search_ms += ms_since(begun);
  ++r.extract_parts.extractions;
  e.dag_cost = r.extract_dag_cost;
  e.proved_optimal = r.extract_proved_optimal;
  return e;
}

// How the writer keeps memory: not at all (the fastest form), or the
// input's recomputations (of the classes in `only`, or of every class
// without it) and its output copies.
struct KeepMemory {
  bool on = false;
  std::optional<std::unordered_set<eg::Id>> only;
  bool saved_copies = false;  // copies of saved views that pin a larger base (schedule/saved_copies.h)
};

// Writes an extraction in the order of least estimated peak
// (schedule/memory_schedule.h), keeping memory as `keep` says: less memory
// for a little more time. Where `keep` does not ask for saved copies, they
// are written anyway where the saved views would pin more than
// `pinned_limit` bytes (the decision reads which values the backward saves,
// not the order, so it is made before the order search: no second form).
Written write_and_schedule(const TensorEGraph& t, const Graph& input, const eg::Extraction& x, const KeepMemory& keep,
                           const OutOfTime& out_of_time, OptimizeResult::ExtractParts& parts, double limit,
                           double pinned_limit = std::numeric_limits<double>::infinity()) {
  const auto begun = std::chrono::steady_clock::now();
  Written w;
  std::vector<int64_t> position;  // each written node's source node (-1: new)
  Graph written = t.write(x, &w.enode_of, &position, keep.on, keep.only ? &*keep.only : nullptr);
  const size_t copies = keep.on ? schedule::copy_pinning_outputs(written, input, position).size() : 0;
  // The clones go before the output node: their e-nodes are none.
  if (copies) w.enode_of.insert(w.enode_of.end() - 1, copies, eg::kNoId);
  // The form's storages, where its saved values are estimated: the order
  // search reads the same ones (unless saved copies change the form).
  std::optional<memory::Storages> storages;
  if (!keep.saved_copies && pinned_limit < std::numeric_limits<double>::infinity()) {
    storages = memory::storages_of(written);
    w.saved_copies = memory::saved_memory(written, *storages).pinned_by_views > pinned_limit;
  }
  w.saved_copies = w.saved_copies || keep.saved_copies;
  if (w.saved_copies) {
    const std::vector<NodeId> added = schedule::copy_pinning_saved(written, position);
    if (!added.empty()) {
      storages.reset();
      std::vector<eg::Id> enodes;
      enodes.reserve(written.nodes.size());
      for (size_t i = 0, a = 0, from = 0; i < written.nodes.size(); ++i) {
        const bool clone = a < added.size() && added[a] == i;
        enodes.push_back(clone ? eg::kNoId : w.enode_of[from++]);
        a += clone;
      }
      w.enode_of = std::move(enodes);
    }
  }
  const auto written_at = std::chrono::steady_clock::now();
  parts.write_ms += ms_between(begun, written_at);
  ++parts.forms;
  schedule::Scheduled s =
      schedule::schedule_for_memory(std::move(written), position, out_of_time, limit, std::move(storages));
  parts.order_ms += ms_since(written_at);
  w.schedule_cut = s.cut;
  if (!s.order.empty()) {
    std::vector<eg::Id> by_order(s.order.size());
    for (size_t k = 0; k < s.order.size(); ++k) by_order[k] = w.enode_of[s.order[k]];
    w.enode_of = std::move(by_order);
  }
  w.graph = std::move(s.graph);
  w.schedule = s.strategy;
  w.tried = s.tried;
  w.given_up = s.given_up;
  w.peak = s.peak_bytes;
  w.at_peak = std::move(s.at_peak);
  return w;
}

// The output's regions of new forms: connected groups of nodes a rule made
// (not copied from the input), largest first by the bytes they allocate.
std::vector<std::vector<eg::Id>> new_regions(const TensorEGraph& t, const Written& w) {
  const Graph& g = w.graph;
  std::vector<int64_t> parent(g.nodes.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int64_t>(i);
  const auto find = [&](int64_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const auto is_new = [&](NodeId i) { return w.enode_of[i] != eg::kNoId && !t.is_original(w.enode_of[i]); };
  for (NodeId i = 0; i < g.nodes.size(); ++i) {
    if (!is_new(i)) continue;
    const auto join = [&](NodeId k) {
      if (is_new(k)) parent[find(k)] = find(i);
    };
    for (const Value& v : g.nodes[i].args) v.for_each_node(join);
    for (const auto& kv : g.nodes[i].kwargs) kv.second.for_each_node(join);
  }
  const memory::Storages st = memory::storages_of(g);
  std::vector<double> allocated(g.nodes.size(), 0.0);
  for (size_t s = 0; s < st.bytes.size(); ++s) allocated[st.owner[s]] += st.bytes[s];
  std::unordered_map<int64_t, size_t> index;
  std::vector<std::vector<eg::Id>> regions;
  std::vector<double> bytes;
  for (NodeId i = 0; i < g.nodes.size(); ++i) {
    if (!is_new(i)) continue;
    const auto [it, fresh] = index.emplace(find(i), regions.size());
    if (fresh) {
      regions.emplace_back();
      bytes.push_back(0);
    }
    regions[it->second].push_back(w.enode_of[i]);
    bytes[it->second] += allocated[i];
  }
  std::vector<size_t> by_size(regions.size());
  for (size_t k = 0; k < by_size.size(); ++k) by_size[k] = k;
  std::stable_sort(by_size.begin(), by_size.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  std::vector<std::vector<eg::Id>> out;
  for (size_t k : by_size) out.push_back(std::move(regions[k]));
  return out;
}

// --objective balanced: whether the fastest form's peak rises by no larger
// a fraction than its estimated time falls (said in the report if so).
bool trade_for_time(const Graph& input, const Written& fastest, double peak_in, const OptimizeOptions& options,
                    OptimizeResult& r) {
  const double time_in = estimate_cost(input, options.cost, options.device);
  const double time_out = estimate_cost(fastest.graph, options.cost, options.device);
  const double rise = fastest.peak / peak_in - 1, gain = 1 - time_out / std::max(time_in, 1e-12);
  if (rise > gain) return false;
  r.declined.push_back("peak memory: traded (--objective balanced): the estimated peak " + mib(fastest.peak) + " is " +
                       percent(rise) + " above the input's " + mib(peak_in) + " for " + percent(gain) +
                       " less estimated time");
  return true;
}

// Recomputation where it is needed, a few rounds as the peak moves: the
// values live at the peak alone, else with what computes them (a
// recomputation reads those at its later place, not the forward's); then
// every one. The first form under the limit is taken: the fewer
// recomputations, the less time. Lowers `best` (and sets `keep`) where it can.
void recompute_for_peak(const TensorEGraph& t, const Graph& input, const eg::Extraction& fastest, double limit,
                        Written& best, KeepMemory& keep, const OutOfTime& out_of_time, const OutOfTime& no_room,
                        OptimizeResult::ExtractParts& parts) {
  KeepMemory trial{true, std::unordered_set<eg::Id>{}, keep.saved_copies};
  std::unordered_set<eg::Id>& classes = *trial.only;
  const auto worth = [&](eg::Id c) {
    const TensorData& d = t.analysis.data(t.egraph.find(c));
    return d.result == Node::Result::Tensor && memory::tensor_bytes(t.source(), d.type) >= kRecomputeMinBytes;
  };
  // The latest form written is `best` itself or, where it did not lower
  // the peak, `last`: each round reads what is live at its peak. (Forms are
  // moved, never copied: a copy of a 165,000-node graph cost as much as
  // writing it.)
  Written last;
  bool latest_is_best = true;
  const auto latest = [&]() -> const Written& { return latest_is_best ? best : last; };
  const auto write = [&] {
    release(best);
    release(last);
    Written w = write_and_schedule(t, input, fastest, trial, out_of_time, parts, limit);
    latest_is_best = w.peak < best.peak;
    if (latest_is_best) {
      best = std::move(w);
      keep = trial;
    } else {
      last = std::move(w);
    }
  };
  for (int round = 0; round < kRecomputeRounds && best.peak > limit && !no_room(); ++round) {
    std::vector<eg::Id> live;
    const Written& seen_last = latest();
    for (const memory::LiveTensor& l : seen_last.at_peak)
      if (const eg::Id e = seen_last.enode_of[l.node]; e != eg::kNoId && worth(e)) live.push_back(t.egraph.find(e));
    const size_t before = classes.size();
    classes.insert(live.begin(), live.end());
    if (classes.size() > before) {
      write();
      if (best.peak <= limit) return;
    }
    const size_t alone = classes.size();
    std::vector<eg::Id> todo = live;
    std::unordered_set<eg::Id> seen;
    while (!todo.empty()) {
      const eg::Id c = todo.back();
      todo.pop_back();
      if (!seen.insert(c).second || !fastest.has(c) || !worth(c)) continue;
      classes.insert(c);
      for (eg::Id k : t.egraph.children(fastest.choice[c])) todo.push_back(t.egraph.find(k));
    }
    if (classes.size() == before) break;  // nothing new to recompute
    if (classes.size() > alone && !no_room()) write();
  }
  if (best.peak <= limit || no_room()) return;
  const KeepMemory all{true, std::nullopt, keep.saved_copies};
  release(best);
  release(last);
  Written w = write_and_schedule(t, input, fastest, all, out_of_time, parts, limit);
  if (w.peak < best.peak) {
    best = std::move(w);
    keep = all;
  }
}

}  // namespace

PeakGuard hold_peak(const TensorEGraph& t, const Graph& input, const OptimizeOptions& options,
                    const std::function<double()>& seconds_left, OptimizeResult& r, std::vector<eg::Id>& enode_of) {
  // The input's figures do not depend on the extraction: they are estimated
  // beside it (0.1 s of a 165,000-node graph's run).
  std::future<std::pair<double, double>> input_figures = beside(input.nodes.size(), [&input, &options] {
    return std::pair{memory::estimate_peak_memory(input).peak_bytes,
                     options.hold_peak ? memory::saved_memory(input).pinned_by_views : 0.0};
  });
  std::unordered_set<eg::Id> priced_out;
  // The fastest form first.
  const auto started = Clock::now();
  Extracted chosen = extract(t, input, options, seconds_left(), r, priced_out);
  const auto extracted = Clock::now();
  const auto [peak_in, pinned_in] = input_figures.get();
  r.peak_in = peak_in;
  const double limit = peak_in + kSlackBytes;
  KeepMemory keep;
  const OutOfTime out_of_time = [&] { return seconds_left() <= 0; };
  // Training blocks given a bias through the efficient kernels: weighed by
  // the graph as Inductor fuses it, which the per-node prices cannot see.
  if (const cost::Device* d = options.cost == "roofline" ? cost::find_device(options.device) : nullptr;
      d && options.training_attention && options.weigh_biased_kernels && is_training_graph(input))
    r.biased_kernels = weigh_biased_kernels(
        t, *d, chosen, priced_out,
        [&](const std::unordered_set<eg::Id>& p) { return extract(t, input, options, seconds_left(), r, p); },
        // A trial is begun only where the time left holds an extraction
        // like the first.
        [&] { return seconds_left() < std::chrono::duration<double>(extracted - started).count(); });
  const auto weighed = Clock::now();
  // The saved values first: the backward reading a view where the input
  // read a copy of its own keeps the view's whole base through it.
  const double pinned_limit = options.hold_peak ? pinned_in + kSlackBytes : std::numeric_limits<double>::infinity();
  Written best = write_and_schedule(t, input, chosen.x, keep, out_of_time, r.extract_parts, limit, pinned_limit);
  keep.saved_copies = best.saved_copies;
  // What a further form costs, as the first one did: a trial is started
  // only where the time left holds it (a trial begun just before the limit
  // ran a whole write past it: 1 s and more at 165,000 nodes).
  const double extract_s = std::chrono::duration<double>(extracted - started).count();
  const double write_s = std::chrono::duration<double>(Clock::now() - weighed).count();
  const OutOfTime no_room_to_write = [&] { return seconds_left() < write_s; };
  const OutOfTime no_room_for_trial = [&] { return seconds_left() < extract_s + write_s; };
  const double first_peak = best.peak;
  const bool held = options.hold_peak && !(options.balanced && best.peak > limit &&
                                           trade_for_time(input, best, peak_in, options, r));
  if (held && best.peak > limit)
    recompute_for_peak(t, input, chosen.x, limit, best, keep, out_of_time, no_room_to_write, r.extract_parts);
  // The best form written again where a later one was written over it: its
  // whole order search, as when it was first written, so that the same form
  // comes back whatever time is left.
  const auto restore = [&] {
    if (best.released) best = write_and_schedule(t, input, chosen.x, keep, {}, r.extract_parts, limit);
  };
  // Still over: new forms give way to the input's own, a trial at a time,
  // each kept only where it lowers the peak, until the peak is the input's
  // or nothing is left to try: first each new form that owns memory live at
  // the peak, alone (the least given back), then whole connected regions of
  // new forms, largest first. Each trial is an extraction.
  size_t given_way = 0;
  if (held && best.peak > limit) {
    restore();
    std::vector<std::vector<eg::Id>> regions;
    for (const memory::LiveTensor& l : best.at_peak)
      if (const eg::Id e = best.enode_of[l.node]; e != eg::kNoId && !t.is_original(e)) regions.push_back({e});
    for (std::vector<eg::Id>& region : new_regions(t, best)) regions.push_back(std::move(region));
    for (size_t k = 0; k < regions.size() && k < kMaxTrials && best.peak > limit && !no_room_for_trial(); ++k) {
      std::unordered_set<eg::Id> trial = priced_out;
      trial.insert(regions[k].begin(), regions[k].end());
      Extracted e = extract(t, input, options, seconds_left(), r, trial);
      release(best);
      Written w = write_and_schedule(t, input, e.x, keep, out_of_time, r.extract_parts, limit);
      if (w.peak < best.peak) {
        best = std::move(w);
        chosen = std::move(e);
        priced_out = std::move(trial);
        ++given_way;
      }
    }
  }
  const bool declined = held && best.peak > limit;
  if (!declined) restore();  // a declined form is not written
  r.extract_dag_cost = chosen.dag_cost;
  r.extract_proved_optimal = chosen.proved_optimal;
  if (best.schedule_cut) r.limited.push_back("order search");
  if (held && best.peak > limit && no_room_to_write()) r.limited.push_back("peak guard");
  PeakGuard g;
  g.schedules_tried = best.tried;
  g.schedules_given_up = best.given_up;
  if (declined) {
    g.declined = true;
    g.schedule = "the input's";
    r.declined.push_back("peak memory: the optimized graph's estimated peak " + mib(first_peak) +
                         " exceeds the input's " + mib(peak_in) +
                         (given_way ? " (" + mib(best.peak) + " with " + std::to_string(given_way) +
                                          " region(s) of new forms given way to the input's own)"
                                    : std::string()) +
                         (no_room_to_write() ? "; the time limit ended the search for a form within it" : std::string()) +
                         "; the input is kept");
    if (options.copy_kept_input) r.output = input;
    r.output_is_input = true;
    enode_of.assign(input.nodes.size(), eg::kNoId);
    return g;
  }
  if (best.peak > limit && !options.hold_peak)
    r.declined.push_back("peak memory: not held (--objective time): the estimated peak " + mib(best.peak) +
                         " exceeds the input's " + mib(peak_in));
  if (given_way)
    r.declined.push_back("peak memory: " + std::to_string(given_way) +
                         " region(s) of new forms gave way to the input's own, holding the estimated peak to " +
                         mib(best.peak) + " against the input's " + mib(peak_in) + " (" + mib(first_peak) +
                         " without)");
  g.schedule = best.schedule;
  r.peak_out = best.peak;
  r.output = std::move(best.graph);
  enode_of = std::move(best.enode_of);
  return g;
}

}  // namespace sator::pipeline
