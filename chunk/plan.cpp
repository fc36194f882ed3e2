#include "chunk/plan.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "chunk/apply.h"
#include "memory/peak_memory.h"
#include "chunk/region.h"
#include "cost/graph_cost.h"
#include "ir/op_table.h"
#include "ir/shape_check.h"

namespace sator::chunk {

namespace {

struct Amplifier {
  NodeId node;
  double ratio;
  double bytes;
};

std::vector<Amplifier> find_amplifiers(const Graph& g, const ChunkOptions& o) {
  std::vector<Amplifier> out;
  for (NodeId id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    const OpInfo* op = find_op(n.op);
    if (!op || op->cls != OpClass::Matmul || n.result != Node::Result::Tensor) continue;
    double in = 0;
    for (const Value& v : n.args)
      v.for_each_node([&](NodeId a) {
        if (const TensorType* t = tensor_of(g, a)) in += memory::tensor_bytes(g, *t);
      });
    const double result = memory::tensor_bytes(g, n.tensor);
    if (in <= 0 || result < o.min_result_bytes || result / in < o.min_amplification) continue;
    out.push_back({id, result / in, result});
  }
  std::sort(out.begin(), out.end(), [](const Amplifier& a, const Amplifier& b) { return a.bytes > b.bytes; });
  return out;
}

struct Evaluated {
  Graph graph;
  double peak, seconds;
};

Evaluated evaluate(const Graph& g, const cost::Device& d) {
  return {g, memory::estimate_peak_memory(g).peak_bytes, cost::total_eager_seconds(cost::graph_costs(g, d), d)};
}

// The chunked graph must still be a valid graph: shape-check it.
void require_valid(const Graph& g) {
  ShapeProver prover(g.symbols);
  const ShapeCheckReport report = check_shapes(g, prover);
  if (!report.issues.empty())
    throw ApplyError("the chunked graph fails its shape check at '" + g.nodes[report.issues.front().node].name +
                     "': " + report.issues.front().message);
}

std::string mib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f MiB", bytes / (1024.0 * 1024.0));
  return buf;
}

}  // namespace

ChunkPlan plan_chunking(const Graph& g, const ChunkOptions& o) {
  if (!o.device) throw std::invalid_argument("plan_chunking needs a device for its cost model");
  ChunkPlan plan;
  plan.graph = g;
  const memory::PeakMemory base_peak = memory::estimate_peak_memory(g);
  const Evaluated base{Graph{}, base_peak.peak_bytes,
                       cost::total_eager_seconds(cost::graph_costs(g, *o.device), *o.device)};
  plan.peak_before = plan.peak_after = base.peak;
  plan.seconds_before = plan.seconds_after = base.seconds;
  const NodeId peak_node = base_peak.peak_node;
  plan.peak_node_before = plan.peak_node_after = g.nodes[peak_node].name;
  std::vector<Amplifier> amps = find_amplifiers(g, o);
  if (amps.size() > o.max_amplifiers) amps.resize(o.max_amplifiers);
  if (amps.empty()) {
    plan.why_not = "no amplifier: no matmul's result is 2x its inputs and 64 MiB or more";
    return plan;
  }
  ShapeProver prover(g.symbols);
  // The best region over every amplifier and every dim of its result, judged
  // at the requested count (8 when choosing automatically).
  const int64_t probe = o.chunks.value_or(8);
  std::optional<Region> best;
  double best_peak = base.peak;
  std::string why, refused;
  const auto past_deadline = [&] {
    if (!o.deadline || std::chrono::steady_clock::now() < *o.deadline) return false;
    plan.time_limited = true;
    return true;
  };
  for (const Amplifier& a : amps) {
    const size_t rank = g.nodes[a.node].tensor.shape.size();
    for (size_t dim = 0; dim < rank && !past_deadline(); ++dim) {
      std::string why_here;
      auto region = grow_region(g, prover, a.node, static_cast<int64_t>(dim), a.bytes / 4, &why_here);
      if (!region) {
        why = g.nodes[a.node].name + " dim " + std::to_string(dim) + ": " + why_here;
        continue;
      }
      // Chunking changes what is alive only from the region's first node to
      // its last: a peak outside that span cannot go down, so the region is
      // not worth writing out (with N stacked copies of a model, only the
      // copy holding the peak is).
      const auto [lo, hi] = std::minmax_element(region->nodes.begin(), region->nodes.end());
      if (region->nodes.empty() || peak_node < *lo || peak_node > *hi) {
        why = g.nodes[a.node].name + " dim " + std::to_string(dim) + ": the peak (" + g.nodes[peak_node].name +
              ") is outside its region";
        continue;
      }
      try {
        const Graph chunked = apply_chunking(g, *region, probe);
        const double peak = memory::estimate_peak_memory(chunked).peak_bytes;
        if (peak < best_peak) {
          best_peak = peak;
          best = std::move(region);
          plan.amplification = a.ratio;
        }
      } catch (const ApplyError& e) {
        // A region was found but cannot be written: say so rather than a
        // later dim's "nothing chunkable" (the first such refusal is kept).
        if (refused.empty()) refused = g.nodes[a.node].name + " dim " + std::to_string(dim) + ": " + e.what();
      }
    }
  }
  if (!refused.empty()) why = refused;
  if (!best) {
    plan.why_not = plan.time_limited
                       ? "the time limit was reached before a region that lowers the peak was found"
                       : "no region lowers the estimated peak, reached at " + plan.peak_node_before +
                             (why.empty() ? " (outside every region found)" : " (last refusal: " + why + ")");
    return plan;
  }
  const int64_t rows_hint = std::max<int64_t>(at_hints(g, best->rows), 1);
  TangentScaling scaling;
  auto trial = [&](int64_t c) {
    Graph chunked = apply_chunking(g, *best, c, &scaling);
    Evaluated e = evaluate(chunked, *o.device);
    plan.trials.push_back({c, e.peak, e.seconds});
    return e;
  };
  std::optional<Evaluated> chosen;
  int64_t chosen_count = 1;
  if (o.memory_budget) {
    for (int64_t c = 2;; c = std::min(c * 2, rows_hint)) {
      Evaluated e = trial(c);
      if (e.peak <= *o.memory_budget) {
        chosen = std::move(e);
        chosen_count = c;
        break;
      }
      if (c >= rows_hint)
        throw std::invalid_argument("--memory-budget " + mib(*o.memory_budget) + " cannot be met: the least peak is " +
                                    mib(e.peak) + " (" + std::to_string(c) + " chunks)");
    }
  } else if (o.chunks) {
    chosen = trial(std::min(*o.chunks, rows_hint));
    chosen_count = std::min(*o.chunks, rows_hint);
  } else {
    // Double while a doubling saves a larger fraction of the peak than it
    // adds of the time (and while time is left: the best so far is kept).
    Evaluated previous = base;
    for (int64_t c = 2; c <= rows_hint && !(chosen && past_deadline()); c *= 2) {
      Evaluated e = trial(c);
      const double saved = (previous.peak - e.peak) / base.peak;
      const double cost = (e.seconds - previous.seconds) / base.seconds;
      if (saved <= std::max(cost, 0.0) || saved <= 1e-3) break;
      chosen_count = c;
      previous = std::move(e);
      chosen = previous;
    }
  }
  if (!chosen) {
    plan.why_not = "no chunk count saves more memory than it costs time";
    return plan;
  }
  require_valid(chosen->graph);
  plan.chunked = true;
  plan.amplifier = g.nodes[best->amplifier].name;
  plan.amplifier_op = g.nodes[best->amplifier].op;
  plan.dim = best->amplifier_dim;
  plan.rows = best->rows.to_string();
  plan.chunks = std::min(chosen_count, rows_hint);
  plan.remainder_chunk = prover.divides(SymExpr(plan.chunks), best->rows) != Truth::True;
  plan.region_nodes = best->nodes.size();
  plan.inputs = best->inputs.size();
  plan.outputs = best->outputs.size();
  plan.tangent = scaling.tangent;
  plan.tangent_scaled = scaling.scaled_results;
  plan.tangent_why_not = scaling.why_not;
  plan.peak_after = chosen->peak;
  plan.seconds_after = chosen->seconds;
  plan.graph = std::move(chosen->graph);
  plan.peak_node_after = plan.graph.nodes[memory::estimate_peak_memory(plan.graph).peak_node].name;
  return plan;
}

}  // namespace sator::chunk
