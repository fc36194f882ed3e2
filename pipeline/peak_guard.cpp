#include "pipeline/peak_guard.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "chunk/peak_memory.h"
#include "pipeline/extract_step.h"
#include "schedule/memory_schedule.h"
#include "schedule/output_copies.h"

namespace sator::pipeline {

namespace {

// A rise in the estimate below this is not one: the CUDA caching allocator
// serves tensors under 1 MiB from shared 2 MiB blocks, so the estimate's
// sub-MiB differences (a few small masks saved in another order) are below
// what the device's peak resolves.
constexpr double kSlackBytes = 1024.0 * 1024.0;
// Rounds of recomputing what is live at the peak before recomputing all.
constexpr int kRecomputeRounds = 4;
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

struct Written {
  Graph graph;
  std::vector<eg::Id> enode_of;
  std::string schedule;
  std::vector<std::pair<std::string, double>> tried;
  double peak = 0;
};

// Writes an extraction in the order of least estimated peak
// (schedule/memory_schedule.h). With `keep_memory`
// the writer also keeps the input's recomputations and copies outputs that
// would pin a larger storage: less memory for a little more time.
Written write_and_schedule(const TensorEGraph& t, const Graph& input, const eg::Extraction& x, bool keep_memory,
                           const std::unordered_set<eg::Id>* recompute_only = nullptr) {
  Written w;
  std::vector<int64_t> position;  // each written node's source node (-1: new)
  Graph written = t.write(x, &w.enode_of, &position, keep_memory, recompute_only);
  const size_t copies = keep_memory ? schedule::copy_pinning_outputs(written, input, position).size() : 0;
  // The clones go before the output node: their e-nodes are none.
  if (copies) w.enode_of.insert(w.enode_of.end() - 1, copies, eg::kNoId);
  schedule::Scheduled s = schedule::schedule_for_memory(std::move(written), position);
  if (!s.order.empty()) {
    std::vector<eg::Id> by_order(s.order.size());
    for (size_t k = 0; k < s.order.size(); ++k) by_order[k] = w.enode_of[s.order[k]];
    w.enode_of = std::move(by_order);
  }
  w.graph = std::move(s.graph);
  w.schedule = s.strategy;
  w.tried = s.tried;
  w.peak = s.peak_bytes;
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
  const chunk::Storages st = chunk::storages_of(g);
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

}  // namespace

PeakGuard hold_peak(const TensorEGraph& t, const Graph& input, const OptimizeOptions& options,
                    const std::function<double()>& seconds_left, OptimizeResult& r, std::vector<eg::Id>& enode_of) {
  PeakGuard g;
  g.peak_in = chunk::estimate_peak_memory(input).peak_bytes;
  const double limit = g.peak_in + kSlackBytes;
  std::unordered_set<eg::Id> priced_out;
  // The fastest form first; where its peak is higher, the same written
  // keeping the input's recomputations and output copies.
  const eg::Extraction fastest = extract_cheapest(t, input, options, seconds_left(), r, priced_out);
  Written best = write_and_schedule(t, input, fastest, false);
  g.extractions = 1;
  const double first_peak = best.peak;
  bool keep_memory = false;
  bool traded = false;
  if (options.hold_peak && options.balanced && best.peak > limit) {
    const double time_in = estimate_cost(input, options.cost, options.device);
    const double time_out = estimate_cost(best.graph, options.cost, options.device);
    const double rise = best.peak / g.peak_in - 1, gain = 1 - time_out / std::max(time_in, 1e-12);
    traded = rise <= gain;
    if (traded)
      r.declined.push_back("peak memory: traded (--objective balanced): the estimated peak " + mib(best.peak) + " is " +
                           percent(rise) + " above the input's " + mib(g.peak_in) + " for " + percent(gain) +
                           " less estimated time");
  }
  if (options.hold_peak && !traded && best.peak > limit) {
    // Recomputation first where it is needed, a few rounds as the peak
    // moves: the values live at the peak alone, else with what computes
    // them (a recomputation reads those at its later place, not the
    // forward's); then every one. The first written form under the limit is
    // taken: the fewer recomputations, the less time.
    std::unordered_set<eg::Id> recompute;
    Written last = best;
    const auto consider = [&](const Written& w) {
      if (w.peak < best.peak) {
        best = w;
        keep_memory = true;
      }
    };
    for (int round = 0; round < kRecomputeRounds && best.peak > limit; ++round) {
      std::vector<eg::Id> live;
      for (const chunk::LiveTensor& l : chunk::estimate_peak_memory(last.graph).at_peak)
        if (const eg::Id e = last.enode_of[l.node]; e != eg::kNoId) live.push_back(t.egraph.find(e));
      const size_t before = recompute.size();
      recompute.insert(live.begin(), live.end());
      if (recompute.size() > before) {
        last = write_and_schedule(t, input, fastest, true, &recompute);
        consider(last);
        if (best.peak <= limit) break;
      }
      const size_t alone = recompute.size();
      std::vector<eg::Id> todo = live;
      std::unordered_set<eg::Id> seen;
      while (!todo.empty()) {
        const eg::Id c = todo.back();
        todo.pop_back();
        if (!seen.insert(c).second || !fastest.has(c)) continue;
        recompute.insert(c);
        for (eg::Id k : t.egraph.children(fastest.choice[c])) todo.push_back(t.egraph.find(k));
      }
      if (recompute.size() == alone && alone == before) break;
      if (recompute.size() > alone) {
        last = write_and_schedule(t, input, fastest, true, &recompute);
        consider(last);
      }
    }
    if (best.peak > limit) {
      Written w = write_and_schedule(t, input, fastest, true);
      if (w.peak < best.peak) {
        best = std::move(w);
        keep_memory = true;
      }
    }
  }
  // Over the input's peak: new forms give way to the input's own, a trial
  // at a time, each kept only where it lowers the peak, until the peak is
  // the input's or nothing is left to try: first each new form that owns
  // memory live at the peak, alone (the least given back), then whole
  // connected regions of new forms, largest first.
  if (options.hold_peak && !traded && best.peak > limit) {
    std::vector<std::vector<eg::Id>> regions;
    for (const chunk::LiveTensor& l : chunk::estimate_peak_memory(best.graph).at_peak)
      if (const eg::Id e = best.enode_of[l.node]; e != eg::kNoId && !t.is_original(e)) regions.push_back({e});
    for (std::vector<eg::Id>& region : new_regions(t, best)) regions.push_back(std::move(region));
    for (size_t k = 0; k < regions.size() && k < kMaxTrials && best.peak > limit && seconds_left() > 0; ++k) {
      std::unordered_set<eg::Id> trial = priced_out;
      trial.insert(regions[k].begin(), regions[k].end());
      Written w = write_and_schedule(t, input, extract_cheapest(t, input, options, seconds_left(), r, trial), keep_memory);
      ++g.extractions;
      if (w.peak < best.peak) {
        best = std::move(w);
        priced_out = std::move(trial);
        ++g.regions_given_way;
      }
    }
  }
  g.schedule = best.schedule;
  g.schedules_tried = best.tried;
  g.peak_out = best.peak;
  g.priced_out = priced_out.size();
  if ((!options.hold_peak || traded) && best.peak > limit) {
    if (!traded)
      r.declined.push_back("peak memory: not held (--objective time): the estimated peak " + mib(best.peak) +
                           " exceeds the input's " + mib(g.peak_in));
  } else if (best.peak > limit) {
    g.declined = true;
    r.declined.push_back("peak memory: the optimized graph's estimated peak " + mib(first_peak) +
                         " exceeds the input's " + mib(g.peak_in) +
                         (g.regions_given_way ? " (" + mib(best.peak) + " with " + std::to_string(g.regions_given_way) +
                                                    " region(s) of new forms given way to the input's own)"
                                              : std::string()) +
                         "; the input is kept");
    return g;
  }
  if (g.regions_given_way)
    r.declined.push_back("peak memory: " + std::to_string(g.regions_given_way) +
                         " region(s) of new forms gave way to the input's own, holding the estimated peak to " +
                         mib(best.peak) + " against the input's " + mib(g.peak_in) + " (" + mib(first_peak) +
                         " without)");
  r.output = std::move(best.graph);
  enode_of = std::move(best.enode_of);
  return g;
}

}  // namespace sator::pipeline
